// SPDX-License-Identifier: GPL-2.0
/* A test workload of numbered events: fires filelock:fcntl_setlk N times,
 * each an fcntl(F_SETLK, F_UNLCK) whose l_start is the event's number
 * (the record's fl_start), FIRST, FIRST + 1, ..., and prints
 * "pid N seconds".
 *   fire_setlk N [FIRST [RATE]]   RATE: calls per second (0: as fast) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "pace.h"

int main(int argc, char **argv)
{
	char path[] = "/tmp/fire_setlk.XXXXXX";
	unsigned long n, first, rate;
	int fd = mkstemp(path);
	double t0;

	if (argc < 2 || fd < 0) {
		fprintf(stderr, "usage: fire_setlk N [FIRST [RATE]]\n");
		return 2;
	}
	unlink(path);
	n = strtoul(argv[1], NULL, 0);
	first = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
	rate = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;
	t0 = pace_now();
	for (unsigned long i = 0; i < n; i++) {
		struct flock unlock = { .l_type = F_UNLCK, .l_whence = SEEK_SET,
					.l_start = first + i, .l_len = 1 };

		if (fcntl(fd, F_SETLK, &unlock) < 0) {
			perror("fcntl");
			return 1;
		}
		pace(t0, i, rate);
	}
	printf("%d %lu %.3f\n", getpid(), n, pace_now() - t0);
	return 0;
}
