/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_LOOP_H
#define TRACERD_LOOP_H

#include <stdbool.h>
#include <stddef.h>

struct config_arg;

struct run_opts {
	const char *config_path;	/* NULL: none, the selection is sel_args */
	bool foreground;	/* stdout sink, whatever Output= says */
	/* -e and the other [Selection] keys as options: one selection, in
	 * place of the file's (config_load_args), at start and on reload */
	const struct config_arg *sel_args;
	size_t n_sel_args;
};

/* The exit status for an invalid config (EX_CONFIG): restarting cannot help,
 * so the unit lists it in RestartPreventExitStatus=. */
#define EXIT_CONFIG 78
/* tracefs is not mounted and tracerd may not mount it (EX_UNAVAILABLE), or
 * it is mounted and tracerd may not read it, or the kernel refuses it BPF
 * (EX_NOPERM): each needs someone to change the system, so the unit does not
 * restart on them either. */
#define EXIT_UNAVAILABLE 69
#define EXIT_NOPERM 77

/* SIGUSR1's value from tracerd --snapshot (sigqueue): the snapshot's
 * reason is "request", not "signal". */
#define TRACERD_SNAPSHOT_REQUEST 0x736e6170	/* "snap" */

/* Runs the daemon until SIGTERM or SIGINT; returns an exit status. */
int run_daemon(const struct run_opts *o);

/* snapshot_ask.c: tracerd --snapshot [PID]; an exit status. */
int snapshot_ask(const char *pid_arg);

#endif
