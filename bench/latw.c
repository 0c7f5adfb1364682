// SPDX-License-Identifier: GPL-2.0
/* The latency benchmark's workload (bench/latency-bench.py): a ping-pong of
 * one byte over two pipes between two processes, "latbn-ping" and
 * "latbn-pong", a fixed number of round trips. Each read blocks until the
 * other's write wakes it: a wakeup is a sched_waking of a latbn task and
 * then the sched_switch to it, the pair a wakeup latency trigger pairs.
 *
 *   latw ROUNDS [CPU]
 *
 * CPU (default: none): both processes pinned to it. On one CPU each wakeup
 * is a switch on that CPU, no idle exit or IPI, so a round trip costs
 * about the same each time and what a tracer adds is on the loop's CPU.
 *
 * Not every round trip is two pairs: on one CPU the woken task often
 * preempts its waker, whose own wakeup then finds it runnable (no
 * sched_waking), so the tracers count the pairs they saw.
 *
 * Output, one line: "rounds=N ns_per_round=X p10=X p50=X secs=X", ns per
 * round trip; p10/p50 of chunks of CHUNK round trips, as bench/workload.c
 * gives them. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "chunks.h"

#define CHUNK 1024

static void xfer(int fd, char *c, int wr)
{
	if ((wr ? write(fd, c, 1) : read(fd, c, 1)) != 1) {
		perror(wr ? "write" : "read");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned long long rounds, chunks, done = 0;
	int ab[2], ba[2], status;
	double t0, secs, total = 0, p10, p50, *per_chunk;
	char c = 'p';
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: %s ROUNDS [CPU]\n", argv[0]);
		return 2;
	}
	rounds = strtoull(argv[1], NULL, 10);
	if (argc > 2) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {	/* the child inherits it */
			perror("sched_setaffinity");
			return 1;
		}
	}
	if (pipe(ab) || pipe(ba)) {
		perror("pipe");
		return 1;
	}
	/* The comm the tracers filter on, whatever the binary is called. */
	prctl(PR_SET_NAME, "latbn-ping");
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		prctl(PR_SET_NAME, "latbn-pong");
		for (;;) {
			xfer(ab[0], &c, 0);
			if (c == 'q')
				_exit(0);
			xfer(ba[1], &c, 1);
		}
	}
	chunks = (rounds + CHUNK - 1) / CHUNK;
	per_chunk = calloc(chunks ? chunks : 1, sizeof(*per_chunk));
	if (!per_chunk)
		return 1;
	t0 = now_ns(CLOCK_MONOTONIC);
	for (unsigned long long k = 0; k < chunks; k++) {
		unsigned long long n = rounds - done < CHUNK ? rounds - done : CHUNK;
		double a = now_ns(CLOCK_MONOTONIC);

		for (unsigned long long i = 0; i < n; i++) {
			xfer(ab[1], &c, 1);
			xfer(ba[0], &c, 0);
		}
		per_chunk[k] = (now_ns(CLOCK_MONOTONIC) - a) / n;
		total += per_chunk[k] * n;
		done += n;
	}
	secs = (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	c = 'q';
	xfer(ab[1], &c, 1);
	waitpid(pid, &status, 0);
	chunk_percentiles(per_chunk, chunks, &p10, &p50);
	printf("rounds=%llu ns_per_round=%.1f p10=%.1f p50=%.1f secs=%.3f\n", rounds,
	       rounds ? total / rounds : 0, p10, p50, secs);
	free(per_chunk);
	return 0;
}
