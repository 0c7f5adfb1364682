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

/* Runs the daemon until SIGTERM or SIGINT; returns an exit status. */
int run_daemon(const struct run_opts *o);

#endif
