// SPDX-License-Identifier: GPL-2.0
/* tracerd's own tgid as the kernel sees it. getpid() gives the number in
 * tracerd's PID namespace; the class program compares the init namespace's
 * tgid (bpf_get_current_pid_tgid), which differs in a container. Run once by
 * BPF_PROG_TEST_RUN from tracerd itself: a raw_tp program runs in the
 * caller's context, so "current" is tracerd. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u32 tgid;

SEC("raw_tp")
int current_tgid(void *ctx)
{
	(void)ctx;
	tgid = bpf_get_current_pid_tgid() >> 32;
	return 0;
}
