// SPDX-License-Identifier: GPL-2.0
/* A second BPF user of the hot events, beside tracerd, for
 * tests/integration/kernel_skips.sh. Two parts:
 *
 * - `beside`: a classic tracepoint program (the perf tracepoint path, as
 *   tracerd's) that counts and then spins `spin_loops` bpf_loop steps. While it
 *   runs, the CPU's bpf_prog_active is raised, so tracepoint programs of events
 *   that interrupt it (tracerd's too) are skipped and the kernel counts them in
 *   their recursion_misses.
 *
 * - `obs_*`: one tp_btf program per event. These run from __bpf_trace_<class>,
 *   a probe of their own on the tracepoint, without the perf buffer and without
 *   bpf_prog_active, so they see every firing. Each one looks, at that moment,
 *   at what decides the perf path's fate for this firing: the task's
 *   perf_recursion[] slot of the interrupt context level (set: perf_trace_<class>
 *   gets no buffer from perf_trace_buf_alloc and returns; nothing counts it) and
 *   the CPU's bpf_prog_active (nonzero: trace_call_bpf() skips the programs and
 *   counts a recursion miss). So it tells, per event, how many firings a
 *   tracepoint program could not see and why. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define N_EVENTS 6
#define N_SAMPLES 4096

/* The fields read, relocated against the kernel's BTF. */
struct rq {
	int cpu;
} __attribute__((preserve_access_index));
struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));
struct sched_entity {
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));
struct task_struct {
	__u8 perf_recursion[4];
	struct sched_entity se;
} __attribute__((preserve_access_index));

/* This kernel has no CONFIG_KALLSYMS_ALL, so per-CPU variables cannot be
 * __ksym. Their offsets in .data..percpu come from BTF (set by bpf_beside.c);
 * this CPU's copy of `runqueues` is where the current task's cfs_rq points,
 * which gives this CPU's per-CPU base. */
const volatile __u64 off_runqueues, off_preempt_count, off_bpf_prog_active;

struct counts {
	__u64 fired;		/* every firing the observer saw in the window */
	__u64 perf_busy;	/* the perf path had no buffer: dropped uncounted */
	__u64 bpf_busy;		/* a BPF program ran on the CPU: skipped, counted */
	__u64 self_fired;	/* of fired, in the excluded process's context */
	__u64 self_perf_busy;
	__u64 self_bpf_busy;
	__u64 beside;		/* runs of the beside program in the window */
	__u64 level[4];		/* fired per interrupt context level */
	__u64 unknown;		/* not classified: this CPU's per-CPU base not found */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, N_EVENTS);
	__type(key, __u32);
	__type(value, struct counts);
} counts SEC(".maps");

/* What was going on at a firing the perf path dropped. */
struct sample {
	__u64 ts;
	__u32 event, cpu, pid, tgid;
	__u32 preempt_count, level;
	__u32 prev_event;	/* the last event this CPU saw at that level before */
	__u32 pad;
	__u64 prev_ts;
	char comm[16];
	__u64 stack[32];	/* the kernel stack: which handler held the slot */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, N_SAMPLES);
	__type(key, __u32);
	__type(value, struct sample);
} samples SEC(".maps");

/* Firings seen per thread group: which tasks' contexts BPF runs in at all. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} per_tgid SEC(".maps");

struct last {
	__u64 ts[4];
	__u32 event[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last);
} last SEC(".maps");

const volatile __u64 spin_loops;
const volatile __u32 exclude_tgid;
__u64 window_start, window_stop = ~0ULL;
__u32 n_samples;

static long spin(__u32 i, void *ctx)
{
	(void)i;
	(void)ctx;
	return 0;
}

static __always_inline int in_window(__u64 now)
{
	return now >= window_start && now < window_stop;
}

SEC("tracepoint")
int beside(void *ctx)
{
	__u32 ev = bpf_get_attach_cookie(ctx);
	struct counts *c = bpf_map_lookup_elem(&counts, &ev);

	if (c && in_window(bpf_ktime_get_ns()))
		c->beside++;
	if (spin_loops)
		bpf_loop(spin_loops, spin, NULL, 0);
	return 1;
}

/* preempt_count() as interrupt_context_level() reads it (include/linux/preempt.h):
 * 0 task, 1 softirq being served (SOFTIRQ_OFFSET), 2 hardirq, 3 NMI. */
#define SOFTIRQ_OFFSET 0x100
#define HARDIRQ_MASK 0x000f0000
#define NMI_MASK 0x00f00000

static __always_inline int observe(void *ctx, __u32 ev)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u64 now = bpf_ktime_get_ns(), pid_tgid = bpf_get_current_pid_tgid(), base;
	__u32 pc = 0, level = 0, zero = 0, self;
	int active = 0, cpu = -1;
	__u8 rec = 0;
	struct counts *c;
	struct last *l;
	struct rq *rq;

	rq = BPF_CORE_READ(task, se.cfs_rq, rq);
	base = (__u64)rq - off_runqueues;
	bpf_core_read(&cpu, sizeof(cpu), &rq->cpu);
	bpf_probe_read_kernel(&pc, sizeof(pc), (void *)(base + off_preempt_count));
	bpf_probe_read_kernel(&active, sizeof(active), (void *)(base + off_bpf_prog_active));
	pc &= 0x7fffffff;	/* PREEMPT_NEED_RESCHED, inverted, on x86 */

	level += !!(pc & NMI_MASK);
	level += !!(pc & (NMI_MASK | HARDIRQ_MASK));
	level += !!(pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
	level &= 3;
	l = bpf_map_lookup_elem(&last, &zero);
	c = bpf_map_lookup_elem(&counts, &ev);
	if (!c || !l)
		return 0;
	if (!in_window(now))
		goto out;
	if (cpu != (int)bpf_get_smp_processor_id()) {
		c->unknown++;
		goto out;
	}
	bpf_core_read(&rec, 1, &task->perf_recursion[level]);
	self = pid_tgid >> 32 == exclude_tgid;
	{
		__u32 tgid = pid_tgid >> 32;
		__u64 one = 1, *n = bpf_map_lookup_elem(&per_tgid, &tgid);

		if (n)
			__sync_fetch_and_add(n, 1);
		else
			bpf_map_update_elem(&per_tgid, &tgid, &one, BPF_NOEXIST);
	}
	c->fired++;
	c->self_fired += self;
	c->level[level]++;
	if (rec) {
		__u32 i = n_samples;	/* racy across CPUs: a sample may be overwritten */
		struct sample *s;

		n_samples = i + 1;
		s = bpf_map_lookup_elem(&samples, &i);

		c->perf_busy++;
		c->self_perf_busy += self;
		if (s) {
			s->ts = now;
			s->event = ev;
			s->cpu = bpf_get_smp_processor_id();
			s->pid = (__u32)pid_tgid;
			s->tgid = pid_tgid >> 32;
			s->preempt_count = pc;
			s->level = level;
			s->prev_event = l->event[level];
			s->prev_ts = l->ts[level];
			bpf_get_current_comm(s->comm, sizeof(s->comm));
			bpf_get_stack(ctx, s->stack, sizeof(s->stack), 0);
		}
	} else if (active) {
		c->bpf_busy++;
		c->self_bpf_busy += self;
	}
out:
	l->ts[level] = now;
	l->event[level] = ev;
	return 0;
}

/* The events of the issue, in this order (bpf_beside.c names them). */
SEC("tp_btf/sched_switch") int obs_sched_switch(void *ctx) { return observe(ctx, 0); }
SEC("tp_btf/sched_wakeup") int obs_sched_wakeup(void *ctx) { return observe(ctx, 1); }
SEC("tp_btf/hrtimer_start") int obs_hrtimer_start(void *ctx) { return observe(ctx, 2); }
SEC("tp_btf/hrtimer_expire_entry") int obs_hrtimer_expire_entry(void *ctx) { return observe(ctx, 3); }
SEC("tp_btf/softirq_raise") int obs_softirq_raise(void *ctx) { return observe(ctx, 4); }
SEC("tp_btf/softirq_entry") int obs_softirq_entry(void *ctx) { return observe(ctx, 5); }
