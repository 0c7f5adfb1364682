// SPDX-License-Identifier: GPL-2.0
/* The kernel's own answer to "which class is this event in": every
 * tracepoint has a `struct bpf_raw_event_map` in the __bpf_raw_tp section,
 * whose bpf_func is `__bpf_trace_<class>`. Run once by BPF_PROG_TEST_RUN,
 * this copies (tracepoint name, bpf_func) out of that section. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_TP 4096
#define RAW_EVENT_MAP_SIZE 32	/* struct bpf_raw_event_map is __aligned(32) */

struct tp_entry {
	__u64 func;
	char name[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_TP);
	__type(key, __u32);
	__type(value, struct tp_entry);
} entries SEC(".maps");

const volatile __u64 start_addr, stop_addr;
__u32 count;

static long copy_one(__u32 i, void *ctx)
{
	__u64 addr = start_addr + (__u64)i * RAW_EVENT_MAP_SIZE, tp, name;
	struct tp_entry *e;

	(void)ctx;
	if (addr >= stop_addr)
		return 1;
	e = bpf_map_lookup_elem(&entries, &i);
	if (!e)
		return 1;
	bpf_probe_read_kernel(&tp, sizeof(tp), (void *)addr);		/* ->tp */
	bpf_probe_read_kernel(&e->func, sizeof(e->func), (void *)(addr + 8));	/* ->bpf_func */
	bpf_probe_read_kernel(&name, sizeof(name), (void *)tp);		/* tp->name */
	bpf_probe_read_kernel_str(e->name, sizeof(e->name), (void *)name);
	count = i + 1;
	return 0;
}

SEC("raw_tp")
int collect(void *ctx)
{
	(void)ctx;
	bpf_loop(MAX_TP, copy_one, NULL, 0);
	return 0;
}
