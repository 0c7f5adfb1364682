// SPDX-License-Identifier: GPL-2.0
/* A test workload: fires syscalls:sys_enter_sysfs exactly N times from this
 * process and prints "pid N". sysfs(2) is obsolete: nothing else on the
 * machine calls it, so every record of that event is this workload's, and
 * the event's BPF counters (per slot, not per pid) are ours alone.
 *   fire_syscall N            as fast as it can
 *   fire_syscall N RATE       paced to RATE calls per second (0: as fast)
 *   fire_syscall N RATE getppid   getppid(2) instead, where a seccomp
 *                             filter forbids sysfs (a systemd-nspawn
 *                             container's: no sys_enter_sysfs fires) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "pace.h"

int main(int argc, char **argv)
{
	unsigned long n, rate, i;
	int getppid_calls;
	double t0;

	if (argc < 2) {
		fprintf(stderr, "usage: fire_syscall N [RATE]\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	rate = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	getppid_calls = argc > 3 && !strcmp(argv[3], "getppid");
	t0 = pace_now();
	for (i = 0; i < n; i++) {
		/* option 3: the number of filesystem types; harmless. It ignores
		 * arg1, which numbers the calls for tests that check order. */
		if (getppid_calls)
			syscall(SYS_getppid);
		else
			syscall(SYS_sysfs, 3, i, 0);
		pace(t0, i, rate);
	}
	printf("%d %lu %.3f\n", getpid(), n, pace_now() - t0);
	return 0;
}
