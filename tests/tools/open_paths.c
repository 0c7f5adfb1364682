// SPDX-License-Identifier: GPL-2.0
/* A test workload for syscall string arguments: openat(AT_FDCWD, PATH,
 * O_RDONLY) for each PATH given, in order, then prints its pid. "-unmapped"
 * passes the address 1 instead, which no process has mapped: the kernel
 * returns EFAULT, and a BPF program cannot read the string either. The
 * paths are argv strings, on the stack: present in memory. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *path = strcmp(argv[i], "-unmapped") ? argv[i] : (const char *)1;
		long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	printf("%d\n", getpid());
	return 0;
}
