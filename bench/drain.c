// SPDX-License-Identifier: GPL-2.0
/* Drains one CPU's tracefs trace_pipe_raw into a file until SIGINT/SIGTERM:
 * the ftrace consumer of the benchmark, doing what trace-cmd record does
 * (which does not work on this kernel) without its extras.
 *
 *   drain TRACE_PIPE_RAW OUTPUT
 *
 * cat is not enough: a read of trace_pipe_raw can return 0 while tracing goes
 * on, and cat takes that for the end of the file. Here a 0 means: wait in
 * poll() for more. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: wake the read */
	int in, out;

	if (argc != 3) {
		fprintf(stderr, "usage: %s TRACE_PIPE_RAW OUTPUT\n", argv[0]);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	in = open(argv[1], O_RDONLY);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (in < 0 || out < 0) {
		perror("open");
		return 1;
	}
	while (!stop) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			perror("read");
			return 1;
		}
		if (n == 0) {
			struct pollfd p = { .fd = in, .events = POLLIN };

			poll(&p, 1, 100);
			continue;
		}
		if (write(out, buf, n) != n) {
			perror("write");
			return 1;
		}
	}
	return 0;
}
