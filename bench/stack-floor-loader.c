// SPDX-License-Identifier: GPL-2.0
/* For bench/stack-floor.py: attaches one program of stack-floor.bpf.o to a
 * tracepoint as tracerd does (a perf event opened on CPU 0, then disabled)
 * and drains its ring buffer every millisecond until SIGINT; then prints the
 * stack the "frames" program saw, if any. "tail:PROG" attaches the "tail"
 * program with PROG as the target of its tail call. Not part of tracerd. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach_disabled.h"

static volatile sig_atomic_t done;
static unsigned long records;

static void stop(int sig)
{
	(void)sig;
	done = 1;
}

static int count(void *ctx, void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	records++;
	return 0;
}

int main(int argc, char **argv)
{
	struct { long long len; unsigned long long ips[96]; } ts;
	struct bpf_program *p, *t = NULL;
	struct ring_buffer *rb;
	struct bpf_object *o;
	struct bpf_link *l;
	char *name;
	int zero = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s OBJ PROG|tail:PROG SYSTEM EVENT\n", argv[0]);
		return 2;
	}
	name = argv[2];
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o))
		return 1;
	if (!strncmp(name, "tail:", 5)) {
		int fd;

		t = bpf_object__find_program_by_name(o, name + 5);
		fd = t ? bpf_program__fd(t) : -1;
		if (fd < 0 || bpf_map_update_elem(bpf_object__find_map_fd_by_name(o, "next"),
						  &zero, &fd, 0))
			return 1;
		name = "tail";
	}
	if (!(p = bpf_object__find_program_by_name(o, name)))
		return 1;
	if (!(l = attach_disabled(p, argv[3], argv[4])))
		return 1;
	rb = ring_buffer__new(bpf_object__find_map_fd_by_name(o, "rb"), count, NULL, NULL);
	if (!rb)
		return 1;
	signal(SIGINT, stop);
	printf("attached\n");
	fflush(stdout);
	while (!done) {
		ring_buffer__consume(rb);
		usleep(1000);
	}
	bpf_link__destroy(l);
	ring_buffer__consume(rb);
	if (!bpf_map_lookup_elem(bpf_object__find_map_fd_by_name(o, "tstack"), &zero, &ts) &&
	    ts.len) {
		printf("frames(%lld):", ts.len);
		for (long long i = 0; i < ts.len / 8; i++)
			printf(" %llx", ts.ips[i]);
		printf("\n");
	}
	printf("records=%lu\n", records);
	ring_buffer__free(rb);
	bpf_object__close(o);
	return 0;
}
