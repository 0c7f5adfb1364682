// SPDX-License-Identifier: GPL-2.0
/* The BPF filter interpreter in userspace, with the three helpers it calls
 * answered from the stored record's header instead of the running task. */
#include <linux/types.h>
#include <stdbool.h>
#include <string.h>
#include "store/store_filter.h"

static __thread const struct trace_rec_hdr *cur;

static long bpf_loop(__u32 n, long (*fn)(__u32, void *), void *ctx, __u64 flags)
{
	(void)flags;
	for (__u32 i = 0; i < n; i++)
		if (fn(i, ctx))
			return i + 1;
	return n;
}

static long bpf_get_current_comm(void *buf, __u32 size)
{
	memcpy(buf, cur->comm, size < TRACERD_COMM_LEN ? size : TRACERD_COMM_LEN);
	return 0;
}

static __u32 bpf_get_smp_processor_id(void)
{
	return cur->cpu;
}

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "bpf/filter.bpf.h"

bool store_filter_run(const struct event_desc *d, const struct trace_rec_hdr *h,
		      const uint8_t *buf, size_t len)
{
	static __thread struct filter_scratch fs;

	if (!d->n_insns)
		return true;
	cur = h;
	return filter_match(d, buf, len, (__u64)h->pid << 32 | h->tid, &fs);
}

bool store_filter_match(const struct event_desc *d, const struct trace_rec_hdr *h,
			const uint8_t *rec, size_t len)
{
	/* The interpreter may look past len by as much as the kernel's copy
	 * allows: a scratch buffer as large as the BPF side's. */
	static __thread __u8 buf[2 * TRACERD_MAX_RECORD] __attribute__((aligned(8)));

	if (!d->n_insns)
		return true;
	if (len > TRACERD_MAX_RECORD)
		len = TRACERD_MAX_RECORD;
	memcpy(buf, rec, len);
	memset(buf + len, 0, TRACERD_MAX_RECORD - len);
	return store_filter_run(d, h, buf, len);
}
