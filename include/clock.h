/* SPDX-License-Identifier: GPL-2.0 */
/* Clock reads, once: each caller names its clock. */
#ifndef TRACERD_CLOCK_H
#define TRACERD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline uint64_t now_usec(clockid_t clock)
{
	return now_ns(clock) / 1000;
}

static inline uint64_t now_msec(clockid_t clock)
{
	return now_ns(clock) / 1000000;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC: what turns a BPF timestamp
 * (bpf_ktime_get_ns) into wall-clock time. */
static inline int64_t realtime_offset_ns(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
}

#endif
