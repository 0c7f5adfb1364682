// SPDX-License-Identifier: GPL-2.0
/* The benchmark workload: fires one tracepoint a known number of times from a
 * tight loop (or paced to a target rate) and prints what one iteration cost.
 *
 *   workload EVENT COUNT [RATE]
 *
 * EVENT is one of:
 *   fcntl_setlk  fcntl(F_SETLK, F_UNLCK) on a private file: filelock:fcntl_setlk,
 *                a class of four DEFINE_EVENTs (filelock_lock) with a
 *                __print_flags and a __print_symbolic field. Also fires
 *                filelock:posix_lock_inode, which no consumer selects.
 *   wait         wait4(-1, WNOHANG) with no children: sched:sched_process_wait,
 *                whose comm is a __data_loc char[] string.
 *   getppid      getppid(): syscalls:sys_enter_getppid, the cheapest event there is.
 *
 * The loop runs in chunks of CHUNK iterations; the output line gives the whole
 * run's ns per iteration and the 10th percentile and median of the chunks.
 * The machine's speed drifts (a VM with fast and slow phases), and the
 * percentiles of short chunks show that drift where one average hides it.
 * RATE (events/s, 0 or absent: as fast as possible) paces the loop per chunk.
 *
 * Output, one line: "iters=N ns_per_iter=X p10=X p50=X secs=X".
 * Every event counted is one the tracepoint fired: the syscall's return value
 * is checked, so a failure cannot silently fire fewer events. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "chunks.h"

#define CHUNK 4096

static int lock_fd = -1;

static int fire_fcntl_setlk(void)
{
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	return fcntl(lock_fd, F_SETLK, &fl);
}

static int fire_wait(void)
{
	/* No children: the kernel fires sched_process_wait, then says ECHILD. */
	if (wait4(-1, NULL, WNOHANG, NULL) < 0 && errno == ECHILD)
		return 0;
	return -1;
}

static int fire_getppid(void)
{
	/* The raw syscall: glibc might one day cache it. */
	return syscall(SYS_getppid) > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int (*fire)(void);
	unsigned long long count, chunks, done = 0;
	double rate, t0, t_next, *per_chunk;
	char path[] = "/tmp/tracerd-bench-lock.XXXXXX";

	if (argc < 3) {
		fprintf(stderr, "usage: %s fcntl_setlk|wait|getppid COUNT [RATE]\n", argv[0]);
		return 2;
	}
	count = strtoull(argv[2], NULL, 10);
	rate = argc > 3 ? strtod(argv[3], NULL) : 0;
	if (!strcmp(argv[1], "fcntl_setlk")) {
		lock_fd = mkstemp(path);
		if (lock_fd < 0) {
			perror("mkstemp");
			return 1;
		}
		unlink(path);
		fire = fire_fcntl_setlk;
	} else if (!strcmp(argv[1], "wait")) {
		fire = fire_wait;
	} else if (!strcmp(argv[1], "getppid")) {
		fire = fire_getppid;
	} else {
		fprintf(stderr, "unknown event %s\n", argv[1]);
		return 2;
	}
	chunks = (count + CHUNK - 1) / CHUNK;
	per_chunk = calloc(chunks ? chunks : 1, sizeof(*per_chunk));
	if (!per_chunk)
		return 1;

	t0 = t_next = now_ns(CLOCK_MONOTONIC);
	for (unsigned long long c = 0; c < chunks; c++) {
		unsigned long long n = count - done < CHUNK ? count - done : CHUNK;
		double a;

		if (rate > 0) {
			/* Pace per chunk, spinning: sleeping would hand the CPU
			 * to the consumer and change what is measured. */
			double now;

			while ((now = now_ns(CLOCK_MONOTONIC)) < t_next)
				;
			/* Behind (the VM's slow phase, a preemption): start
			 * from now rather than catch up at full speed, which
			 * would be a burst far above the rate asked for. */
			if (now > t_next + n * 1e9 / rate)
				t_next = now;
			t_next += n * 1e9 / rate;
		}
		a = now_ns(CLOCK_MONOTONIC);
		for (unsigned long long i = 0; i < n; i++)
			if (fire() < 0) {
				perror("firing the event");
				return 1;
			}
		per_chunk[c] = (now_ns(CLOCK_MONOTONIC) - a) / n;
		done += n;
	}
	{
		double secs = (now_ns(CLOCK_MONOTONIC) - t0) / 1e9, total = 0, p10, p50;

		for (unsigned long long c = 0; c < chunks; c++)
			total += per_chunk[c] * (c + 1 < chunks ? CHUNK : count - c * CHUNK);
		chunk_percentiles(per_chunk, chunks, &p10, &p50);
		printf("iters=%llu ns_per_iter=%.1f p10=%.1f p50=%.1f secs=%.3f\n", count,
		       count ? total / count : 0, p10, p50, secs);
	}
	free(per_chunk);
	return 0;
}
