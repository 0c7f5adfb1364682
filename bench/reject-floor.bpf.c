// SPDX-License-Identifier: GPL-2.0
/* Programs for bench/reject-floor.py: what parts of a rejecting tracepoint
 * program cost, from an empty one up. Not part of tracerd. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64[4]);
} st SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[16384]);
} scr SEC(".maps");

/* The floor: passes the event on to perf users, as tracerd does. */
SEC("tracepoint") int ret1(void *ctx) { (void)ctx; return 1; }

/* Drops it for every perf user: what tracerd must not do. */
SEC("tracepoint") int ret0(void *ctx) { (void)ctx; return 0; }

/* tracerd's helper calls and lookups before its filter. */
SEC("tracepoint") int helpers(void *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 *s = bpf_map_lookup_elem(&st, &slot);

	if (s && pid_tgid >> 32 != 7)
		s[1]++;
	return 1;
}

/* ... and a 48-byte bpf_probe_read_kernel() of the record, one compare. */
SEC("tracepoint") int copy48(void *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx), zero = 0;
	__u64 *s = bpf_map_lookup_elem(&st, &slot);
	__u8 *b = bpf_map_lookup_elem(&scr, &zero);

	if (!s || !b)
		return 1;
	bpf_probe_read_kernel(b, 48, ctx);
	if (*(int *)(b + 8) != 12345)
		s[1]++;
	return 1;
}

/* ... or the compare straight from ctx (a constant offset). */
SEC("tracepoint") int direct(void *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx);
	__u64 *s = bpf_map_lookup_elem(&st, &slot);

	if (!s)
		return 1;
	if (*(int *)(ctx + 8) != 12345)
		s[1]++;
	return 1;
}
