// SPDX-License-Identifier: GPL-2.0
/* Fires filelock:fcntl_setlk COUNT times from a tight loop (fcntl F_SETLK
 * with F_UNLCK on a private file) and prints the cost of one iteration:
 * "ns_per_iter=X p10=X p50=X" over chunks of 4096, since the VM drifts
 * between fast and slow phases. Time is this thread's CPU time, which the
 * tracepoint's probes run in: other tenants of the machine preempting the
 * loop do not count. For bench/filter-bench.py and bench/reject-floor.py.
 * "filter-loop COUNT wait" fires sched:sched_process_wait instead
 * (wait4(-1, WNOHANG) without children; a __data_loc string). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "chunks.h"

#define CHUNK 4096

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, chunks = n / CHUNK;
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_len = 1 };
	char path[] = "/tmp/filter-loop.XXXXXX";
	int fd = mkstemp(path);
	double *t = calloc(chunks, sizeof(*t)), start, total = 0, p10, p50;
	int wait = argc > 2 && !strcmp(argv[2], "wait");

	if (fd < 0 || !t || chunks < 1)
		return 1;
	unlink(path);
	for (long c = 0; c < chunks; c++) {
		start = now_ns(CLOCK_THREAD_CPUTIME_ID);
		for (int i = 0; i < CHUNK; i++)
			if (wait ? wait4(-1, NULL, WNOHANG, NULL) != -1 : fcntl(fd, F_SETLK, &fl) < 0)
				return 1;
		t[c] = (now_ns(CLOCK_THREAD_CPUTIME_ID) - start) / CHUNK;
		total += t[c];
	}
	chunk_percentiles(t, chunks, &p10, &p50);
	printf("ns_per_iter=%.1f p10=%.1f p50=%.1f\n", total / chunks, p10, p50);
	return 0;
}
