// SPDX-License-Identifier: GPL-2.0
/* A test workload for common_stacktrace: fires events of four subsystems a
 * known number of times from known kernel call paths, two paths for two
 * of them:
 *   filelock:fcntl_setlk        N   fcntl(F_SETLK, F_UNLCK)
 *   sched:sched_process_wait    N   wait4(-1, WNOHANG), no children
 *                              2N   waitid(P_ALL, WEXITED | WNOHANG)
 *   syscalls:sys_enter_getppid 3N   getppid()
 *   task:task_rename            N   prctl(PR_SET_NAME)
 *                               N   a write to /proc/self/comm
 *   net:netif_receive_skb       N   a UDP datagram to itself on 127.0.0.1,
 *                                   received in the sender's softirq: a
 *                                   stack deeper than the hist's 16 frames
 * It prints its pid, waits for a line on stdin (the tracers are on), fires,
 * prints "done" and waits for stdin's end.
 *   stack_paths N */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char line[64], path[] = "/tmp/stack_paths.XXXXXX";
	struct flock unlock = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	int fd = mkstemp(path), comm = open("/proc/self/comm", O_WRONLY);
	int udp = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t lo_len = sizeof(lo);
	siginfo_t si;

	if (udp < 0 || bind(udp, (struct sockaddr *)&lo, sizeof(lo)) < 0 ||
	    getsockname(udp, (struct sockaddr *)&lo, &lo_len) < 0) {
		perror("stack_paths: udp");
		return 1;
	}
	if (!n || fd < 0 || comm < 0) {
		fprintf(stderr, "usage: stack_paths N\n");
		return 2;
	}
	unlink(path);
	prctl(PR_SET_NAME, "stackw");
	printf("%d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (unsigned long i = 0; i < n; i++) {
		fcntl(fd, F_SETLK, &unlock);
		wait4(-1, NULL, WNOHANG, NULL);
		for (int k = 0; k < 2; k++)
			waitid(P_ALL, 0, &si, WEXITED | WNOHANG);
		for (int k = 0; k < 3; k++)
			syscall(SYS_getppid);	/* not glibc's: the syscall each time */
		prctl(PR_SET_NAME, "stackw");
		if (write(comm, "stackw", 6) != 6)	/* not seekable: write */
			return 1;
		if (sendto(udp, "x", 1, 0, (struct sockaddr *)&lo, sizeof(lo)) != 1 ||
		    recv(udp, line, sizeof(line), MSG_DONTWAIT) != 1)
			return 1;
	}
	printf("done\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
