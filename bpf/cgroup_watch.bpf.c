// SPDX-License-Identifier: GPL-2.0
/* Unit=: the kernel's cgroup:cgroup_mkdir, so that a unit that starts (or
 * restarts, in a new cgroup) after tracerd is matched from its cgroup's
 * birth, without a reload. cgroup2 sends no inotify IN_CREATE for a new
 * cgroup (kernfs notifies file modifications only), and a watch per
 * directory of the tree would cost more. Each new cgroup2 id goes to the
 * daemon through a ring of its own, which wakes it at once. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* ids the ring had no room for: the daemon then looks at the whole tree. */
__u64 lost;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} cgroup_ring SEC(".maps");

/* The event's record: cgroup_mkdir's format on 6.18 (offsets 8 and 16);
 * root 0 is the cgroup2 hierarchy. */
struct mkdir_rec {
	__u64 common;
	__s32 root;
	__s32 level;
	__u64 id;
};

SEC("tracepoint/cgroup/cgroup_mkdir")
int cgroup_mkdir(struct mkdir_rec *ctx)
{
	__u64 id = ctx->id;

	if (ctx->root != 0)
		return 1;
	if (bpf_ringbuf_output(&cgroup_ring, &id, sizeof(id), BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&lost, 1);
	return 1;
}
