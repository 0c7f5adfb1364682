/* SPDX-License-Identifier: GPL-2.0 */
/* The test workloads' clock and pacing: RATE calls a second, checked every
 * 64 calls (0: as fast as they go). */
#ifndef TRACERD_TESTS_PACE_H
#define TRACERD_TESTS_PACE_H

#include <time.h>
#include <unistd.h>

static inline double pace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* After call i (from 0) of a run that began at t0. */
static inline void pace(double t0, unsigned long i, unsigned long rate)
{
	double d;

	if (!rate || i % 64 != 63)
		return;
	d = t0 + (double)(i + 1) / rate - pace_now();
	if (d > 0)
		usleep(d * 1e6);
}

#endif
