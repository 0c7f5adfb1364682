// SPDX-License-Identifier: GPL-2.0
/* A test workload for user stacks: main → a → b, and b itself makes the
 * fcntl(F_SETLK) system call, which fires filelock:fcntl_setlk (and
 * syscalls:sys_enter_fcntl). Built with -O0 -fno-omit-frame-pointer (the
 * Makefile), the functions noinline: the kernel's frame-pointer walk then
 * finds b (the user IP at the syscall), a and main (return addresses).
 * b issues the syscall instruction itself because libc's fcntl() keeps no
 * frame pointer: the walk would skip its caller.
 *   ustack_prog [N]     fire N times (default 1), then print one line:
 *                       "PID IP_B IP_A IP_MAIN B A MAIN" (hex): the frames b
 *                       found by walking its own frame pointers at its last
 *                       call, and where the three functions start; then
 *                       wait until stdin closes before exiting. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long frames[3];

/* The syscall instruction inline; its IP is where the kernel's walk starts. */
__attribute__((noinline)) static long b(int fd, struct flock *fl)
{
	unsigned long *fp = __builtin_frame_address(0);
	unsigned long ip;
	long ret;

	__asm__ volatile("lea 0(%%rip), %0" : "=r"(ip));
	frames[0] = ip;
	frames[1] = fp[1];			/* return address into a */
	frames[2] = ((unsigned long *)fp[0])[1];	/* into main */
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_fcntl), "D"((long)fd), "S"((long)F_SETLK), "d"(fl)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static long a(int fd)
{
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

	return b(fd, &fl);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/ustack_prog.XXXXXX";
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
	char c;
	int fd;

	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	unlink(path);
	for (unsigned long i = 0; i < n; i++)
		if (a(fd) < 0) {
			fprintf(stderr, "fcntl(F_SETLK) failed\n");
			return 1;
		}
	printf("%d %lx %lx %lx %lx %lx %lx\n", getpid(), frames[0], frames[1], frames[2],
	       (unsigned long)b, (unsigned long)a, (unsigned long)main);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return 0;
}
