// SPDX-License-Identifier: GPL-2.0
/* The footprint comparison: what a tracer that loads one BPF program per
 * event would cost. It loads tracerd's own class program once per event
 * (sharing the ring buffer and the other maps, as such a tracer would), and
 * attaches each copy to its one event. Then it prints "ready" and waits for
 * its standard input to close, so that bench/bench.py can read its programs
 * and maps from /proc/PID/fdinfo.
 *
 *   prog-per-event RING_BYTES system:event...
 *
 * Only the BPF side is measured: no descriptor is written, so the programs
 * see an empty descriptor if their event fires. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tracerd.skel.h"

static int reuse_maps(struct bpf_object *first, struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		struct bpf_map *orig;

		/* Each program keeps its own constants, as each of a per-event
		 * tracer's programs would. */
		if (strstr(name, ".rodata"))
			continue;
		orig = bpf_object__find_map_by_name(first, name);
		if (!orig || bpf_map__reuse_fd(m, bpf_map__fd(orig)) < 0)
			return -errno ? -errno : -ENOENT;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tracerd_bpf **skels;
	struct bpf_link **links;
	unsigned long ring;
	int n, r;
	char c;

	if (argc < 3) {
		fprintf(stderr, "usage: %s RING_BYTES system:event...\n", argv[0]);
		return 2;
	}
	ring = strtoul(argv[1], NULL, 0);
	n = argc - 2;
	skels = calloc(n, sizeof(*skels));
	links = calloc(n, sizeof(*links));
	if (!skels || !links)
		return 1;
	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = i);
		char sys[128], *ev;

		snprintf(sys, sizeof(sys), "%s", argv[i + 2]);
		ev = strchr(sys, ':');
		if (!ev) {
			fprintf(stderr, "%s: not system:event\n", argv[i + 2]);
			return 2;
		}
		*ev++ = 0;
		skels[i] = tracerd_bpf__open();
		if (!skels[i]) {
			perror("opening the BPF object");
			return 1;
		}
		bpf_map__set_max_entries(skels[i]->maps.rb, ring);
		if (i > 0 && (r = reuse_maps(skels[0]->obj, skels[i]->obj)) < 0) {
			fprintf(stderr, "reusing maps: %s\n", strerror(-r));
			return 1;
		}
		r = tracerd_bpf__load(skels[i]);
		if (r < 0) {
			fprintf(stderr, "loading copy %d: %s\n", i, strerror(-r));
			return 1;
		}
		links[i] = bpf_program__attach_tracepoint_opts(skels[i]->progs.trace_event_class,
							       sys, ev, &opts);
		if (!links[i]) {
			fprintf(stderr, "attaching to %s:%s: %s\n", sys, ev, strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	for (int i = n - 1; i >= 0; i--) {
		bpf_link__destroy(links[i]);
		tracerd_bpf__destroy(skels[i]);
	}
	free(skels);
	free(links);
	return 0;
}
