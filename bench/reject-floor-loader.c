// SPDX-License-Identifier: GPL-2.0
/* For bench/reject-floor.py: attaches one program of reject-floor.bpf.o to
 * a tracepoint with a BPF cookie until SIGINT. With DISABLED=1 in the
 * environment, through a perf event opened on CPU 0 and then disabled, as
 * tracerd does; else as libbpf's attach_tracepoint() does (enabled on CPU 0). */
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static void nothing(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct bpf_object *o;
	struct bpf_program *p;
	struct bpf_link *l;
	char path[512];
	FILE *f;
	int id = -1, pfd;

	if (argc != 5) {
		fprintf(stderr, "usage: %s OBJ PROG SYSTEM EVENT\n", argv[0]);
		return 2;
	}
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o) || !(p = bpf_object__find_program_by_name(o, argv[2])))
		return 1;
	if (getenv("DISABLED")) {
		struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a) };
		LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = 3);

		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/id", argv[3], argv[4]);
		if (!(f = fopen(path, "r")) || fscanf(f, "%d", &id) != 1)
			return 1;
		fclose(f);
		a.config = id;
		pfd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (pfd < 0 || !(l = bpf_program__attach_perf_event_opts(p, pfd, &po)) ||
		    ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0))
			return 1;
	} else {
		LIBBPF_OPTS(bpf_tracepoint_opts, op, .bpf_cookie = 3);

		if (!(l = bpf_program__attach_tracepoint_opts(p, argv[3], argv[4], &op)))
			return 1;
	}
	signal(SIGINT, nothing);
	printf("attached\n");
	fflush(stdout);
	pause();
	bpf_link__destroy(l);
	bpf_object__close(o);
	return 0;
}
