// SPDX-License-Identifier: GPL-2.0
/* tracerd's own tgid as the kernel sees it, and its cgroup's ancestors.
 * getpid() gives the number in tracerd's PID namespace; the class program
 * compares the init namespace's tgid (bpf_get_current_pid_tgid), which
 * differs in a container. The ancestors tell the loader at which level of
 * the whole cgroup2 tree the root of tracerd's own mount (its cgroup
 * namespace's) lies, which nothing in a container's /proc or /sys says.
 * Run once by BPF_PROG_TEST_RUN from tracerd itself: a raw_tp program runs
 * in the caller's context, so "current" is tracerd. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "tracerd_record.h"

char LICENSE[] SEC("license") = "GPL";

__u32 tgid;
__u64 cgroup_ancestors[TRACERD_SELF_LEVELS];	/* by level; 0 past its own */

SEC("raw_tp")
int current_tgid(void *ctx)
{
	(void)ctx;
	tgid = bpf_get_current_pid_tgid() >> 32;
	for (__u32 i = 0; i < TRACERD_SELF_LEVELS; i++) {
		cgroup_ancestors[i] = bpf_get_current_ancestor_cgroup_id(i);
		if (!cgroup_ancestors[i])
			break;
	}
	return 0;
}
