// SPDX-License-Identifier: GPL-2.0
/* For tests/unit/test_hist_wait.c: a program that is still running when the
 * test acts. Run by BPF_PROG_TEST_RUN (a raw_tp program runs like a
 * tracepoint's, non-sleepable, under RCU), it notes when it starts, spins for
 * spin_ns and notes when it ends, by bpf_ktime_get_ns (CLOCK_MONOTONIC). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 spin_ns;			/* set by the test */
__u64 started_ns, ended_ns;	/* read back */

static long until(__u32 i, void *ctx)
{
	(void)i;
	(void)ctx;
	return bpf_ktime_get_ns() - started_ns >= spin_ns;	/* 1 stops bpf_loop */
}

SEC("raw_tp")
int spin(void *ctx)
{
	(void)ctx;
	*(volatile __u64 *)&started_ns = bpf_ktime_get_ns();
	bpf_loop(1 << 23, until, NULL, 0);
	ended_ns = bpf_ktime_get_ns();
	return 0;
}
