// SPDX-License-Identifier: GPL-2.0
/* Runs a command as a given pid of this PID namespace (clone3 with set_tid;
 * root), waits for it and exits with its status. The system test puts a host
 * process at the number tracerd has inside its container.
 *   pid_at PID CMD [ARG...] */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t want, pid;
	struct clone_args args = { .exit_signal = SIGCHLD, .set_tid_size = 1 };
	int status;

	if (argc < 3 || (want = atoi(argv[1])) <= 1) {
		fprintf(stderr, "usage: pid_at PID CMD [ARG...]\n");
		return 2;
	}
	args.set_tid = (uintptr_t)&want;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		fprintf(stderr, "pid_at: cannot take pid %d: %s\n", want, strerror(errno));
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "pid_at: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
