// SPDX-License-Identifier: GPL-2.0
/* Programs for bench/stack-floor.py: what a kernel stack costs a tracepoint
 * program that writes a record to a ring buffer, part by part. Each is a
 * minimal record (a header and the event's first 64 bytes) with one way of
 * taking the stack; "base" takes none. Not part of tracerd. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define DEPTH 64		/* tracerd's TRACERD_STACK_DEPTH */
#define REC 64

struct hdr {
	__u64 ts;
	__u32 pid, len;
	char comm[16];
};

struct scr {
	struct hdr h;
	__u8 rec[REC];
	__u64 ips[DEPTH + 1];
	__u64 more[DEPTH + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scr);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} next SEC(".maps");

/* "frames": the whole stack of the program itself, the tracing machinery
 * above the tracepoint included (bpf_get_task_stack() walks from its own
 * frame). The loader prints it. */
struct tstack {
	__s64 len;
	__u64 ips[96];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tstack);
} tstack SEC(".maps");

static __always_inline struct scr *head(void *ctx)
{
	__u32 zero = 0;
	struct scr *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s)
		return 0;
	s->h.ts = bpf_ktime_get_ns();
	s->h.pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(s->h.comm, sizeof(s->h.comm));
	bpf_probe_read_kernel(s->rec, REC, ctx);
	return s;
}

static __always_inline void out(struct scr *s, long stack)
{
	__u64 n = sizeof(s->h) + REC;

	if (stack > 0 && stack <= (DEPTH + 1) * 8)
		n += stack;
	s->h.len = n;
	bpf_ringbuf_output(&rb, s, n, BPF_RB_NO_WAKEUP);
}

static __always_inline long walk(void *ctx, void *buf, __u32 frames, __u64 flags)
{
	return bpf_get_stack(ctx, buf, frames * 8, flags);
}

SEC("tracepoint") int base(void *ctx)
{
	struct scr *s = head(ctx);

	if (s)
		out(s, 0);
	return 1;
}

/* tracerd's way: DEPTH + 1 frames asked for, from a subprogram. */
static __attribute__((noinline)) long sub(void *ctx, struct scr *s)
{
	if (!s)
		return 0;
	return walk(ctx, s->ips, DEPTH + 1, 0);
}

SEC("tracepoint") int k65(void *ctx)
{
	struct scr *s = head(ctx);

	if (s)
		out(s, sub(ctx, s));
	return 1;
}

/* The same from the program's own frame. */
SEC("tracepoint") int k65i(void *ctx)
{
	struct scr *s = head(ctx);

	if (s)
		out(s, walk(ctx, s->ips, DEPTH + 1, 0));
	return 1;
}

/* Fewer frames asked for: the kernel zeroes less of the buffer. */
#define ASK(name, frames)					\
SEC("tracepoint") int name(void *ctx)				\
{								\
	struct scr *s = head(ctx);				\
								\
	if (s)							\
		out(s, walk(ctx, s->ips, frames, 0));		\
	return 1;						\
}
ASK(k6i, 6)
ASK(k8i, 8)
ASK(k16i, 16)
ASK(k32i, 32)

/* Frames skipped by the helper (walked, then not copied). */
SEC("tracepoint") int k65s3(void *ctx)
{
	struct scr *s = head(ctx);

	if (s)
		out(s, walk(ctx, s->ips, DEPTH + 1, 3));
	return 1;
}

/* Two walks: what a second helper call costs. */
SEC("tracepoint") int k65x2(void *ctx)
{
	struct scr *s = head(ctx);

	if (s) {
		walk(ctx, s->more, DEPTH + 1, 0);
		out(s, walk(ctx, s->ips, DEPTH + 1, 0));
	}
	return 1;
}

/* Straight into the ring's reservation: no copy, but a fixed size. */
SEC("tracepoint") int k65d(void *ctx)
{
	struct scr *s = head(ctx);
	struct scr *r;
	long n;

	if (!s)
		return 1;
	r = bpf_ringbuf_reserve(&rb, sizeof(s->h) + REC + (DEPTH + 1) * 8, 0);
	if (!r)
		return 1;
	__builtin_memcpy(&r->h, &s->h, sizeof(s->h));
	__builtin_memcpy(r->rec, s->rec, REC);
	n = walk(ctx, r->ips, DEPTH + 1, 0);
	r->h.len = sizeof(s->h) + REC + (n > 0 ? n : 0);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 1;
}

/* Three subprograms deep: what more BPF frames cost the unwinder. */
static __attribute__((noinline)) long sub2(void *ctx, struct scr *s)
{
	return s ? sub(ctx, s) + 0 * s->h.pid : 0;
}

static __attribute__((noinline)) long sub3(void *ctx, struct scr *s)
{
	return s ? sub2(ctx, s) + 0 * s->h.len : 0;
}

SEC("tracepoint") int k65n3(void *ctx)
{
	struct scr *s = head(ctx);

	if (s)
		out(s, sub3(ctx, s));
	return 1;
}

/* A tail call into the program that walks (the emitted filter's way). */
SEC("tracepoint") int tail(void *ctx)
{
	bpf_tail_call(ctx, &next, 0);
	return 1;
}

SEC("tracepoint") int frames(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 zero = 0;
	struct tstack *v = bpf_map_lookup_elem(&tstack, &zero);

	(void)ctx;
	if (v && !v->len)
		v->len = bpf_get_task_stack(t, v->ips, sizeof(v->ips), 0);
	return 1;
}
