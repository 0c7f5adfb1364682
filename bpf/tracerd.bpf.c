// SPDX-License-Identifier: GPL-2.0
/* The class program. Every selected tracepoint attaches this one program;
 * the attachment's BPF cookie is the event's slot in `events`, whose
 * descriptor says how large the record is and which filter to run. So the
 * number of loaded programs does not grow with the number of events, just as
 * DECLARE_EVENT_CLASS shares one assign routine among its DEFINE_EVENTs. */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include "tracerd_record.h"
#include "filter.bpf.h"
#include "aggregate.bpf.h"
#include "hist_trigger.bpf.h"
#include "user_str.bpf.h"
#include "stack.bpf.h"
#include "unit.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Wake the consumer only once this many bytes wait; a timer drains the rest. */
const volatile __u64 wakeup_bytes = 1 << 20;
/* The daemon's own events are not traced: writing out one record would
 * otherwise produce more (syscalls:*, writeback...), without end. */
const volatile __u32 self_tgid;
/* Set by the daemon when it stops, before it detaches (a grace period per
 * event, minutes for thousands): an event after it is no hit, no record
 * and no loss, so the counts written at stop stay exact. */
volatile __u32 stopped;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* set by the daemon before load */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACERD_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct event_desc);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACERD_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct event_stats);
} stats SEC(".maps");

/* Records lost (ring buffer full) over every slot, present and past: the
 * one figure STATUS needs from BPF, read as one element every 2 s instead of
 * every slot's. A bpf() map read raises the CPU's bpf_prog_active, and the
 * kernel skips tracepoint programs (tracerd's too) for what fires meanwhile. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost_total SEC(".maps");

/* Where an emitted program (daemon/filter/filter_emit_frame.c) builds a
 * record with __data_loc strings, as in the ring: its size is known only
 * once it runs, and bpf_ringbuf_reserve() takes a constant. Twice the
 * largest record, as scratch below. */
struct emit_rec {
	struct trace_rec_hdr hdr;
	__u8 data[2 * TRACERD_MAX_RECORD];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct emit_rec);
} emit_rec SEC(".maps");

/* Twice the largest record so that the verifier can bound offset + length. */
struct scratch {
	struct filter_scratch filter;
	struct trace_rec_hdr hdr;
	__u8 data[2 * TRACERD_MAX_RECORD];
	struct agg_scratch agg;		/* last: the record path's layout as it was */
	struct unit_memo unit;		/* Unit='s last answer on this CPU */
	struct trigger_scratch trig;	/* an inter-event trigger's (hist_trigger.bpf.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* End of the dynamic payload: the furthest __data_loc (offset, length). */
static __always_inline __u64 record_end(const struct event_desc *d, const __u8 *rec,
					__u64 fixed)
{
	__u64 end = fixed;
	__u32 i;

	for (i = 0; i < TRACERD_MAX_DYN; i++) {
		__u64 off, loc, e;

		if (i >= d->n_dyn)
			break;
		off = d->dyn_off[i] & (TRACERD_MAX_RECORD - 1);
		loc = *(__u32 *)(rec + off);
		e = (__u64)tracerd_loc_off(loc, off, d->dyn_rel & (1u << i)) + tracerd_loc_len(loc);
		if (e > end)
			end = e;
	}
	return end;
}

/* Copies the record, dynamic payload included, to rec; returns its length. */
static __always_inline __u64 copy_record(const struct event_desc *d, struct event_stats *st,
					 __u8 *rec, const char *src, __u32 *flags)
{
	__u64 fixed = d->fixed_size, end;

	if (fixed > TRACERD_MAX_RECORD)
		fixed = TRACERD_MAX_RECORD;
	bpf_probe_read_kernel(rec, fixed, src);
	end = record_end(d, rec, fixed);
	if (end > TRACERD_MAX_RECORD) {
		end = TRACERD_MAX_RECORD;
		*flags |= TRACERD_REC_TRUNCATED;
		st->truncated++;
	}
	if (end > fixed) {
		__u64 dlen = end - fixed;

		/* The verifier lost the relation between end and fixed: restate it. */
		asm volatile("" : "+r"(dlen));
		if (dlen <= TRACERD_MAX_RECORD)
			bpf_probe_read_kernel(rec + fixed, dlen, src + fixed);
	}
	if (d->ustr_off[0])	/* a syscall's user strings (SyscallStrings=) */
		end = read_user_strs(d, st, rec, end);
	return end;
}

/* A tracepoint program's return value decides whether perf still records
 * the event: 0 would hide it from every perf user of the tracepoint
 * (`perf record` beside tracerd saw nothing), so always pass it on. */
#define PASS_ON 1

/* Where an emitted filter (daemon/filter/filter_emit.c), attached in the
 * class program's place, sends a record it keeps: trace_event_accept at
 * TRACERD_ACCEPT_PROG. A constant key, so the JIT makes the tail call a
 * direct jump. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} accept_prog SEC(".maps");

/* What every record goes through before its filter: the stop flag,
 * self-exclusion, the descriptor, the hit. NULL: not this one. */
static __always_inline struct event_desc *class_head(__u32 slot, __u64 pid_tgid,
						     struct event_stats **st)
{
	struct event_desc *d;

	if (stopped)
		return NULL;
	if (pid_tgid >> 32 == self_tgid)
		return NULL;
	d = bpf_map_lookup_elem(&events, &slot);
	*st = bpf_map_lookup_elem(&stats, &slot);
	if (!d || !*st)
		return NULL;
	(*st)->hits++;
	return d;
}

/* Unit= (bpf/unit.bpf.h): another unit's event counts as filtered; one
 * in a cgroup not judged yet goes to the daemon marked, but for a
 * histogram's, which cannot wait (counted). */
static __always_inline bool class_unit_rejects(const struct event_desc *d,
					       struct event_stats *st, struct scratch *s,
					       __u32 *flags)
{
	__u32 a;

	if (!d->unit_set)
		return false;
	a = unit_answer(d, &s->unit);
	if (a == UNIT_IN)
		return false;
	if (a == UNIT_ASK && !d->agg) {
		*flags |= TRACERD_REC_UNIT_ASK;
		return false;
	}
	if (a == UNIT_ASK)
		st->unit_unjudged++;
	st->filtered++;
	return true;
}

/* A record the filter kept: aggregated, or copied whole and written to
 * the ring. len bytes of s->data are copied; early: only the filter's
 * prefix (filter_span), the rest is copied here. */
static __always_inline void class_accept(void *ctx, __u32 slot, const struct event_desc *d,
					 struct event_stats *st, struct scratch *s,
					 __u64 pid_tgid, __u64 len, __u32 flags, bool early)
{
	const char *src = ctx;
	__u64 avail, size, end;
	__u32 zero = 0;

	if (d->agg) {
		int r = aggregate(slot, s->data, ctx, pid_tgid, &s->agg);

		if (r == AGG_COUNTED) {
			st->aggregated++;
		} else {
			st->agg_dropped++;
			if (r == AGG_NO_STACK)
				st->agg_nostack++;
		}
		return;
	}
	if (early) {
		len = copy_record(d, st, s->data, src, &flags);
		*(__u64 *)s->data = (__u64)d->id | (__u64)(__u32)pid_tgid << 32;
	}
	end = len;
	if (d->stack)		/* StackTrace=: once the filter accepted */
		end = append_stacks(ctx, d, st, s->data, end, &flags);

	s->hdr.ts_ns = bpf_ktime_get_ns();
	s->hdr.slot = slot;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.pid = pid_tgid >> 32;
	s->hdr.tid = (__u32)pid_tgid;
	s->hdr.len = end;
	s->hdr.flags = flags;
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));
	s->hdr.cgroup_id = bpf_get_current_cgroup_id();

	/* Wake the consumer only when this record carries the ring across
	 * WakeupBytes: a wakeup is an IPI, and one per record while the
	 * consumer lags would cost more than the record itself. */
	avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	size = sizeof(s->hdr) + end;
	if (bpf_ringbuf_output(&rb, &s->hdr, size,
			       avail < wakeup_bytes && avail + size >= wakeup_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		__u64 *total = bpf_map_lookup_elem(&lost_total, &zero);

		st->lost++;
		if (total)
			(*total)++;
	}
}

/* Copies what the filter reads (all of the record, or its prefix when
 * early) to s->data and rebuilds the common fields: the kernel overwrote
 * them before we ran. Returns the bytes copied. */
static __always_inline __u64 class_copy(const struct event_desc *d, struct event_stats *st,
					struct scratch *s, const char *src, __u64 pid_tgid,
					__u32 *flags, bool early)
{
	__u64 len;

	if (early) {
		/* Read with a helper, not as loads from ctx at constant offsets:
		 * the kernel refuses to attach a program that reads its ctx past
		 * the end of the event's record, and this one serves records of
		 * every size. The first 8 bytes are rebuilt, not read, so a filter
		 * of common_pid, cpu or comm alone reads nothing. */
		len = d->filter_span;
		if (len > TRACERD_MAX_RECORD)
			len = TRACERD_MAX_RECORD;
		if (len > 8)
			bpf_probe_read_kernel(s->data + 8, len - 8, src + 8);
	} else {
		len = copy_record(d, st, s->data, src, flags);
	}
	*(__u64 *)s->data = (__u64)d->id | (__u64)(__u32)pid_tgid << 32;
	return len;
}

/* Hands the synthetic record in s->trig to the selections of its event,
 * one a tail call, from the next one on (hist_trigger.bpf.h). */
static __always_inline void synth_next(void *ctx, struct scratch *s, __u32 next)
{
	s->trig.next = next;
	s->trig.pending = 1;
	bpf_tail_call(ctx, &accept_prog, TRACERD_TRIGGER_PROG);
	s->trig.pending = 0;
}

/* One selection of a synthetic event: its hit, Unit=, its filter (the
 * interpreter: the record is not in ctx), then written or aggregated as
 * any event's. ctx stays the event's that fired the action: a stack key
 * or StackTrace= is its stack, as in the kernel. */
static __always_inline void synth_step(void *ctx, struct scratch *s, __u64 pid_tgid)
{
	struct trigger_scratch *t = &s->trig;
	__u32 i = t->next, slot, flags = 0, synth = t->synth;
	struct synth_subs *subs = bpf_map_lookup_elem(&synth_subs, &synth);
	struct event_desc *d;
	struct event_stats *st;
	__u64 len = t->len;

	if (!subs || i >= subs->n || i >= TRACERD_SYNTH_SUBS)
		return;
	slot = subs->slots[i];
	d = bpf_map_lookup_elem(&events, &slot);
	st = bpf_map_lookup_elem(&stats, &slot);
	if (d && st && len <= TRACERD_SYNTH_REC) {
		st->hits++;
		if (len <= 64)	/* the usual: inline loads and stores */
			__builtin_memcpy(s->data, t->rec_out, 64);
		else
			bpf_probe_read_kernel(s->data, len, t->rec_out);
		if (class_unit_rejects(d, st, s, &flags))
			;
		else if (d->n_insns && !filter_match(d, s->data, len, pid_tgid, &s->filter))
			st->filtered++;
		else
			class_accept(ctx, slot, d, st, s, pid_tgid, len, flags, false);
	}
	if (i + 1 < subs->n)
		synth_next(ctx, s, i + 1);
}

/* The onmatch() action: the synthetic record from the params, in the
 * kernel's layout (common fields of the current task, a u64 slot a field),
 * for the event's selections: the first one next (synth_step() right after
 * trigger_run(), no tail call), the others a tail call each. */
static __always_inline void trigger_fire(struct trigger_ctx *c, struct scratch *s)
{
	const struct hist_trigger *tr = c->tr;
	struct trigger_scratch *t = &s->trig;

	*(__u64 *)t->rec_out = (__u64)tr->synth_id | (__u64)(__u32)t->pid_tgid << 32;
	c->params = tr->params;
	for (__u32 i = 0; i < TRACERD_SYNTH_PARAMS && i < tr->n_params; i++)
		trigger_param_cb(i, c);
	t->len = tr->synth_size;
	t->synth = tr->synth - 1;
	t->next = 0;
}

/* An inter-event trigger's event, its filter passed, its record in s->data:
 * the key; the references read (all of them, or the event is not counted
 * and nothing fires, as in the kernel); the variables computed; the
 * histogram counted; the variables kept for whoever references them; the
 * action. The key is the small map's: hist_vars.c allows no other. */
static __always_inline bool trigger_run(void *ctx, __u32 slot, struct event_stats *st,
					struct scratch *s, __u64 pid_tgid)
{
	const struct agg_desc *ad = bpf_map_lookup_elem(&agg_descs, &slot);
	struct trigger_scratch *t = &s->trig;
	struct trigger_ctx c = { .t = t, .rec = s->data };
	struct agg_scratch *a = &s->agg;
	const struct hist_trigger *tr;
	struct hist_snap *snap;
	__u32 i;

	if (!ad) {
		st->agg_dropped++;
		return false;
	}
	i = ad->trigger - 1;
	tr = bpf_map_lookup_elem(&hist_triggers, &i);
	snap = bpf_map_lookup_elem(&hist_snap, &i);
	if (!tr || !snap || !ad->trigger) {
		st->agg_dropped++;
		return false;
	}
	c.tr = tr;
	c.snap = snap;
	a->hdr.slot = slot;
	a->hdr.gen = ad->gen & 1;
	__builtin_memset(a->data, 0, TRACERD_AGG_SMALL);
	for (i = 0; i < TRACERD_AGG_KEYS; i++) {
		if (i >= ad->n_keys)
			break;
		agg_key_part(&ad->keys[i], s->data, ctx, pid_tgid, a->data, false);
	}
	__builtin_memcpy(t->vk.key, a->data, TRACERD_VAR_KEY);
	t->vk.pad = 0;
	t->ts = bpf_ktime_get_ns();
	t->pid_tgid = pid_tgid;
	t->unresolved = 0;
	if (tr->n_refs) {
		for (i = 0; i < TRACERD_HIST_VARS && i < tr->n_refs; i++)
			if (trigger_ref_cb(i, &c))
				break;
		if (t->unresolved) {
			st->unmatched++;
			return false;
		}
	}
	for (i = 0; i < TRACERD_HIST_VARS && i < tr->n_vars; i++)
		trigger_var_cb(i, &c);
	if (!agg_count(&agg_small, a, ad, s->data)) {
		st->agg_dropped++;
		return false;
	}
	st->aggregated++;
	if (tr->store && tr->n_vars)
		trigger_store(slot, tr, t, st);
	if (tr->track)	/* before the action, which hands rec_out on */
		trigger_track(&c, a, st);
	if (!tr->synth)
		return false;
	trigger_fire(&c, s);
	return true;
}

SEC("tracepoint")
int trace_event_class(void *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx), zero = 0, flags = 0;
	__u64 len;		/* 64-bit: no zero-extension for the verifier to lose */
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct event_desc *d;
	struct event_stats *st;
	struct scratch *s;
	bool early;

	d = class_head(slot, pid_tgid, &st);
	if (!d)
		return PASS_ON;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return PASS_ON;
	/* Unit= before the filter: another unit's event costs one lookup. */
	if (class_unit_rejects(d, st, s, &flags))
		return PASS_ON;

	/* Decide first when the filter reads only the start of the record:
	 * what it rejects is neither copied whole nor its payload read. The
	 * daemon sets filter_span only for a filter of the fixed part, or for
	 * an aggregating slot whose filter, keys and sums all lie there. */
	early = d->filter_span;
	len = class_copy(d, st, s, ctx, pid_tgid, &flags, early);
	/* One call of filter_match(), so one copy of its bpf_loop() calls. */
	if (d->n_insns && !filter_match(d, s->data, len, pid_tgid, &s->filter)) {
		st->filtered++;
		return PASS_ON;
	}
	if (d->agg == TRACERD_AGG_TRIGGER) {
		bpf_tail_call(ctx, &accept_prog, TRACERD_TRIGGER_PROG);
		st->lost++;	/* only if the trigger program is missing */
		return PASS_ON;
	}
	class_accept(ctx, slot, d, st, s, pid_tgid, len, flags, early);
	return PASS_ON;
}

/* Where an emitted filter goes with a record it keeps: the class
 * program's tail, after its hit was counted and its filter passed. Unit=
 * comes after the filter here, the cheaper test first: either rejects, and
 * counts the event filtered. An aggregating slot copies the prefix its keys
 * and sums read (filter_span), like the class program. */
SEC("tracepoint")
int trace_event_accept(void *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx), zero = 0, flags = 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid(), len;
	struct event_desc *d = bpf_map_lookup_elem(&events, &slot);
	struct event_stats *st = bpf_map_lookup_elem(&stats, &slot);
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!d || !st || !s)
		return PASS_ON;
	if (d->agg == TRACERD_AGG_TRIGGER) {
		bpf_tail_call(ctx, &accept_prog, TRACERD_TRIGGER_PROG);
		st->lost++;	/* only if the trigger program is missing */
		return PASS_ON;
	}
	if (class_unit_rejects(d, st, s, &flags))
		return PASS_ON;
	len = class_copy(d, st, s, ctx, pid_tgid, &flags, d->agg && d->filter_span);
	class_accept(ctx, slot, d, st, s, pid_tgid, len, flags, false);
	return PASS_ON;
}

/* An inter-event trigger's event, its filter passed (bpf/hist_trigger.bpf.h),
 * or the synthetic record of an action on its way to the next selection of
 * its event. A program of its own, loaded only for a config with triggers:
 * its paths (the interpreter for a synthetic event's Filter=, a second
 * accept) would cost every start ~65 ms of verification in the accept
 * program. */
SEC("tracepoint")
int trace_event_trigger(void *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx), zero = 0, flags = 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct event_desc *d;
	struct event_stats *st;

	if (!s)
		return PASS_ON;
	if (s->trig.pending) {	/* a synthetic event, to its next selection */
		s->trig.pending = 0;
		synth_step(ctx, s, pid_tgid);
		return PASS_ON;
	}
	d = bpf_map_lookup_elem(&events, &slot);
	st = bpf_map_lookup_elem(&stats, &slot);
	if (!d || !st)
		return PASS_ON;
	if (class_unit_rejects(d, st, s, &flags))
		return PASS_ON;
	class_copy(d, st, s, ctx, pid_tgid, &flags, d->filter_span);
	if (trigger_run(ctx, slot, st, s, pid_tgid))
		synth_step(ctx, s, pid_tgid);	/* the action's first selection */
	return PASS_ON;
}
