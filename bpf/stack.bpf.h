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

/* tracerd's PID namespace (the kernel's dev_t and the inode of
 * /proc/self/ns/pid), set by the daemon before load; 0 in the initial
 * namespace, where the record's tgid already is /proc's. */
const volatile __u64 pidns_dev, pidns_ino;

/* The task's tgid in tracerd's PID namespace, for the consumer's
 * /proc/TGID (tracerd_record.h, TRACERD_REC_NS_TGID). */
static __always_inline __u32 ns_tgid(void)
{
	struct bpf_pidns_info ns;

	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return TRACERD_NS_TGID_NONE;
	return ns.tgid;
}

/* Appends the stacks to the record in rec, end bytes long; returns its
 * new end. Inlined, as is every caller: the kernel's unwinder steps through
 * each BPF frame between bpf_get_stack() and the tracepoint by its slow
 * lookup (no ORC entry: the ftrace trampolines' list, then the BPF
 * symbols), ~150 ns a frame here, so a subprogram frame cost every stack
 * that much (bench/stack-floor.py; tests/unit/test_stacks.c checks). */
static __always_inline __u64 take_stacks(void *ctx, const struct event_desc *d,
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

/* StackTrace=, once the filter accepted: the stacks, and with user frames
 * in a PID namespace of tracerd's own, the task's tgid in it; flags say
 * what the record, end bytes long, now ends in. Returns its new end. */
static __always_inline __u64 append_stacks(void *ctx, const struct event_desc *d,
					   struct event_stats *st, __u8 *rec, __u64 end,
					   __u32 *flags)
{
	__u64 with = take_stacks(ctx, d, st, rec, end);
	__u32 tgid;

	if (with == end)
		return end;
	*flags |= TRACERD_REC_STACKS;
	if (!pidns_ino || !(d->stack & TRACERD_STACK_USER) ||
	    with > TRACERD_MAX_RECORD + TRACERD_MAX_STACKS)
		return with;
	tgid = ns_tgid();
	__builtin_memcpy(rec + with, &tgid, sizeof(tgid));
	*flags |= TRACERD_REC_NS_TGID;
	return with + sizeof(tgid);
}

#endif
