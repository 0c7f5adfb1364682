/* SPDX-License-Identifier: GPL-2.0 */
/* The benchmark's workloads time their loop in chunks and print the 10th
 * percentile and median of the chunks beside the whole run's figure: the
 * VM's speed drifts, and short chunks show the drift an average hides. */
#ifndef TRACERD_BENCH_CHUNKS_H
#define TRACERD_BENCH_CHUNKS_H

#include <stdlib.h>
#include <time.h>

static inline double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the n chunks' figures; *p10 and *p50 their percentiles. */
static inline void chunk_percentiles(double *v, size_t n, double *p10, double *p50)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*p10 = n ? v[n / 10] : 0;
	*p50 = n ? v[n / 2] : 0;
}

#endif
