/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_LOOP_H
#define TRACERD_LOOP_H

#include <stdbool.h>

struct run_opts {
	const char *config_path;
	bool foreground;	/* stdout sink, whatever Output= says */
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

/* Runs the daemon until SIGTERM or SIGINT; returns an exit status. */
int run_daemon(const struct run_opts *o);

#endif
