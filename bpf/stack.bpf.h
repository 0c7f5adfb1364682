/* SPDX-License-Identifier: GPL-2.0 */
/* Stack traces (StackTrace=): the kernel's and the user's return addresses,
 * appended to an accepted record in the layout tracerd_record.h describes
 * (frames, then struct trace_stack_tail). Called only for a slot whose
 * descriptor asks for them, after the filter: a rejected event walks
 * nothing, and an aggregating slot never gets here. */
#ifndef TRACERD_STACK_BPF_H
#define TRACERD_STACK_BPF_H

/* One walk into buf (room for TRACERD_STACK_DEPTH + 1 frames): the frames
 * kept, at most depth, and how the walk went. One frame more than the depth
 * is asked for, so that a stack cut at the depth is told from one that fits
 * it exactly. */
static __always_inline __u32 walk_stack(void *ctx, void *buf, __u64 flags, __u32 depth,
					struct event_stats *st, __u8 *state, __u8 *err)
{
	__u64 ask = (__u64)(depth + 1) * 8;
	long r;

	asm volatile("" : "+r"(ask));
	if (ask > (TRACERD_STACK_DEPTH + 1) * 8 || ask < 16)
		ask = (TRACERD_STACK_DEPTH + 1) * 8;
	r = bpf_get_stack(ctx, buf, ask, flags);

	if (r < 0) {
		*state = TRACERD_STACK_LOST;
		*err = -r;
		st->stack_lost++;
		return 0;
	}
	if (r >= (long)ask) {
		*state = TRACERD_STACK_CUT;
		st->stack_cut++;
		return ask / 8 - 1;
	}
	*state = TRACERD_STACK_WHOLE;
	return r / 8;
}

/* Appends the stacks to the record in rec, end bytes long; returns its
 * new end. */
static __attribute__((noinline)) __u64 take_stacks(void *ctx, const struct event_desc *d,
						   struct event_stats *st, __u8 *rec, __u64 end)
{
	struct trace_stack_tail tail = {};
	__u32 depth = (d->stack >> TRACERD_STACK_DEPTH_SHIFT) & 0xff;
	__u64 pos = end;

	if (pos > TRACERD_MAX_RECORD)
		return end;
	if (d->stack & TRACERD_STACK_KERNEL)
		tail.n_kern = walk_stack(ctx, rec + pos,
					 TRACERD_KSTACK_SKIP & BPF_F_SKIP_FIELD_MASK, depth, st,
					 &tail.kern, &tail.kern_err);
	pos += 8 * (__u64)tail.n_kern;
	asm volatile("" : "+r"(pos));
	if (pos > TRACERD_MAX_RECORD + 8 * TRACERD_STACK_DEPTH)
		return end;
	if (d->stack & TRACERD_STACK_USER)
		tail.n_user = walk_stack(ctx, rec + pos, BPF_F_USER_STACK, depth, st,
					 &tail.user, &tail.user_err);
	pos += 8 * (__u64)tail.n_user;
	asm volatile("" : "+r"(pos));
	if (pos > TRACERD_MAX_RECORD + 16 * TRACERD_STACK_DEPTH)
		return end;
	__builtin_memcpy(rec + pos, &tail, sizeof(tail));
	return pos + sizeof(tail);
}

#endif
