// SPDX-License-Identifier: GPL-2.0
/* For bench/reject-floor.py: attaches one program of reject-floor.bpf.o to
 * a tracepoint with a BPF cookie until SIGINT. With DISABLED=1 in the
 * environment, through a perf event opened on CPU 0 and then disabled, as
 * tracerd does; else as libbpf's attach_tracepoint() does (enabled on CPU 0). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach_disabled.h"

static void nothing(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct bpf_object *o;
	struct bpf_program *p;
	struct bpf_link *l;

	if (argc != 5) {
		fprintf(stderr, "usage: %s OBJ PROG SYSTEM EVENT\n", argv[0]);
		return 2;
	}
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o) || !(p = bpf_object__find_program_by_name(o, argv[2])))
		return 1;
	if (getenv("DISABLED")) {
		if (!(l = attach_disabled(p, argv[3], argv[4])))
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
