// SPDX-License-Identifier: GPL-2.0
/* Unit=: the kernel's cgroup:cgroup_mkdir, so that a unit that starts (or
 * restarts, in a new cgroup) after tracerd is matched from its cgroup's
 * birth, without a reload. cgroup2 sends no inotify IN_CREATE for a new
 * cgroup (kernfs notifies file modifications only), and a watch per
 * directory of the tree would cost more. Each new cgroup2 id, with its
 * path (the cgroup may be gone before the daemon can look it up: a unit
 * that fails at once), goes to the daemon through a ring of its own, which
 * wakes it at once. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "tracerd_record.h"

char LICENSE[] SEC("license") = "GPL";

/* births the ring had no room for: the daemon then looks at the whole tree. */
__u64 lost;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} cgroup_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgroup_birth);
} birth_scratch SEC(".maps");

/* The event's record: cgroup_mkdir's format on 6.18 (offsets 8, 12, 16,
 * 24); root 0 is the cgroup2 hierarchy. */
struct mkdir_rec {
	__u64 common;
	__s32 root;
	__s32 level;
	__u64 id;
	__u32 path_loc;		/* __data_loc char[] */
};

SEC("tracepoint/cgroup/cgroup_mkdir")
int cgroup_mkdir(struct mkdir_rec *ctx)
{
	__u32 zero = 0;
	struct cgroup_birth *b = bpf_map_lookup_elem(&birth_scratch, &zero);
	__u64 size;
	long n;

	if (ctx->root != 0 || !b)
		return 1;
	b->id = ctx->id;
	b->level = ctx->level;
	n = bpf_probe_read_kernel_str(b->path, sizeof(b->path),
				      (const char *)ctx + (ctx->path_loc & 0xffff));
	b->len = n > 0 ? n : 0;
	size = __builtin_offsetof(struct cgroup_birth, path) + b->len;
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(&cgroup_ring, b, size, BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&lost, 1);
	return 1;
}
