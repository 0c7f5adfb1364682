// SPDX-License-Identifier: GPL-2.0
/* A producer for tests/unit/test_ringbuf.c: run by BPF_PROG_TEST_RUN, it
 * writes n records into its ring buffer. Record i (counting from first)
 * is 8 + (i * 13) % span bytes: its index, its size, then bytes k = k & 0xff;
 * every discard_every-th one (0: none) is reserved and discarded instead. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16384);
} rb SEC(".maps");

__u32 n, first, span = 1, discard_every;	/* set by the test */
__u32 written, failed, discarded;		/* read back */
__u8 buf[256];					/* bytes 8.. set by the test */

static long one(__u32 k, void *ctx)
{
	__u32 i = first + k, size = 8 + (i * 13) % span;
	void *r;

	(void)ctx;
	if (discard_every && i % discard_every == 0) {
		r = bpf_ringbuf_reserve(&rb, 64, 0);
		if (!r) {
			failed++;
			return 0;
		}
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		discarded++;
		return 0;
	}
	size &= 0xff;
	if (size < 8)
		return 1;
	((__u32 *)buf)[0] = i;
	((__u32 *)buf)[1] = size;
	if (bpf_ringbuf_output(&rb, buf, size, BPF_RB_NO_WAKEUP))
		failed++;
	else
		written++;
	return 0;
}

SEC("raw_tp")
int fill(void *ctx)
{
	(void)ctx;
	written = failed = discarded = 0;
	bpf_loop(n, one, NULL, 0);
	return 0;
}
