/* SPDX-License-Identifier: GPL-2.0 */
/* Inter-event hist triggers (Documentation/trace/histogram.rst, "Inter-event
 * hist triggers"), run in BPF: a trigger's variables are kept per key in
 * `hist_vars`, as the kernel keeps them in its tracing_map element; another
 * event's trigger reads them as $name for its own key, each value once; its
 * onmatch() action then fires a synthetic event, whose record goes through
 * the filter and the output of each selection of that event, as an event's
 * record does. Only the accept program runs this (event_desc.agg ==
 * AGG_TRIGGER): the emitted programs and the class program tail-call it
 * after their filter. */
#ifndef TRACERD_HIST_TRIGGER_BPF_H
#define TRACERD_HIST_TRIGGER_BPF_H

/* By agg_desc.trigger - 1, an index the daemon keeps for the slot while it
 * lives: an array's lookup is inlined, a hash's cost ~30 ns an event. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACERD_HIST_TRIGGERS);
	__type(key, __u32);
	__type(value, struct hist_trigger);
} hist_triggers SEC(".maps");

/* Starts waiting for their end, by (slot, key). Preallocated, as the
 * histograms' maps: an insert never waits on the allocator. Entries stay
 * once read, as the kernel's elements do, to be set again by the next start
 * of the key; the daemon deletes those not set for a while (aged out). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_VAR_ENTRIES);
	__type(key, struct hist_var_key);
	__type(value, struct hist_var_val);
} hist_vars SEC(".maps");

/* onmax()/onchange(): by the histogram's own key (slot, generation, key),
 * read out and deleted with its entry by the daemon's dump. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_TRACK_ENTRIES);
	__type(key, struct agg_key_small);
	__type(value, struct hist_track_val);
} hist_track SEC(".maps");

/* onmax()/onchange().snapshot(): by hist_triggers' index, polled by the
 * daemon, which asks the recorder for a snapshot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACERD_HIST_TRIGGERS);
	__type(key, __u32);
	__type(value, struct hist_snap);
} hist_snap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACERD_SYNTH_EVENTS);
	__type(key, __u32);
	__type(value, struct synth_subs);
} synth_subs SEC(".maps");

/* In the per-CPU scratch: one event's trigger, and the synthetic record its
 * action fires, kept across the tail calls that hand it to each selection
 * (no other tracepoint program runs on this CPU meanwhile: the kernel skips
 * it). Twice the record so that the verifier can bound a param's offset. */
struct trigger_scratch {
	struct hist_var_key vk;
	struct hist_var_val vv;		/* this event's own variables */
	__u64 refs[TRACERD_HIST_VARS];
	__u64 ts;			/* common_timestamp: read once an event */
	__u64 pid_tgid;
	__u32 pending, next, synth, len;
	__u32 unresolved;
	struct hist_track_val trk;	/* an onmax()/onchange() entry, being made */
	__u8 rec_out[2 * TRACERD_SYNTH_REC];
};

/* What the loop bodies below see. */
struct trigger_ctx {
	struct trigger_scratch *t;
	const struct hist_trigger *tr;
	const __u8 *rec;
	const struct synth_param *params;	/* the action's, or the saves */
	struct hist_snap *snap;			/* tr's, for .snapshot() */
};

#define HT_VAR_MASK (TRACERD_HIST_VARS - 1)

/* An index masked where the verifier sees it: the compiler, knowing the
 * loop's bound, would drop the mask, and the verifier, which lost the
 * bound in a spill, refuse the access. */
static __always_inline __u32 ht_index(__u32 i, __u32 mask)
{
	asm volatile("" : "+r"(i));
	return i & mask;
}

static __always_inline __u64 hist_operand(const struct hist_operand *o, struct trigger_ctx *c)
{
	struct trigger_scratch *t = c->t;

	switch (o->kind) {
	case HOP_FIELD:
		return agg_load(c->rec, o->off, o->size, o->is_signed);
	case HOP_TS:
		return t->ts;
	case HOP_TS_USECS:
		return (t->ts + 500) / 1000;	/* the kernel's ns2usecs() */
	case HOP_VAR:
		return t->vv.vals[o->idx & HT_VAR_MASK];
	case HOP_REF:
		return t->refs[o->idx & HT_VAR_MASK];
	case HOP_PID:
		return (__u32)t->pid_tgid;
	case HOP_CPU:
		return bpf_get_smp_processor_id();
	default:
		return 1;	/* HOP_CONST: the term's mul is the value */
	}
}

/* The kernel's u64 arithmetic: wraps as it does. */
static __always_inline __u64 hist_eval(const struct hist_expr *x, struct trigger_ctx *c)
{
	__u64 sum = 0;
	__u32 i;

	for (i = 0; i < TRACERD_HIST_TERMS; i++) {
		const struct hist_term *tm = &x->terms[i];
		__u64 v;

		if (i >= x->n_terms)
			break;
		v = hist_operand(&tm->op, c) * tm->mul;
		if (tm->div)
			v /= tm->div;
		sum = tm->neg ? sum - v : sum + v;
	}
	return sum;
}

/* Loop bodies, run in loops the verifier bounds: a bpf_loop() call per
 * variable cost more than the work (bench/results/2026-12-07-latency.txt). */
static __always_inline long trigger_var_cb(__u32 i, void *data)
{
	struct trigger_ctx *c = data;

	i = ht_index(i, HT_VAR_MASK);
	c->t->vv.vals[i] = hist_eval(&c->tr->vars[i], c);
	return 0;
}

/* A reference: the variable of the other trigger's entry for this key,
 * read once (its set bit cleared), as the kernel's read_once does. */
static __always_inline long trigger_ref_cb(__u32 i, void *data)
{
	struct trigger_ctx *c = data;
	struct trigger_scratch *t = c->t;
	const struct hist_ref *ref;
	struct hist_var_val *v;
	__u64 bit;

	i = ht_index(i, HT_VAR_MASK);
	ref = &c->tr->refs[i];
	bit = 1ull << (ref->var & HT_VAR_MASK);

	t->vk.slot = ref->slot;
	v = bpf_map_lookup_elem(&hist_vars, &t->vk);
	if (!v || !(v->set & bit)) {
		t->unresolved = 1;
		return 1;
	}
	t->refs[i] = v->vals[ref->var & HT_VAR_MASK];
	__sync_fetch_and_and(&v->set, ~bit);
	return 0;
}

static __always_inline long trigger_param_cb(__u32 i, void *data)
{
	struct trigger_ctx *c = data;
	struct trigger_scratch *t = c->t;
	const struct synth_param *p = &c->params[ht_index(i, TRACERD_SYNTH_PARAMS - 1)];
	__u8 *dst = t->rec_out + (p->off & (TRACERD_SYNTH_REC - 1));
	__u64 v;

	switch (p->src.kind) {
	case HOP_STR:
		__builtin_memset(dst, 0, TRACERD_SYNTH_STR);
		bpf_probe_read_kernel_str(dst, p->src.size & (TRACERD_SYNTH_STR - 1),
					  c->rec + (p->src.off & AGG_REC_MASK));
		return 0;
	case HOP_COMM:
		__builtin_memset(dst, 0, TRACERD_SYNTH_STR);
		bpf_get_current_comm(dst, TRACERD_COMM_LEN);
		return 0;
	}
	v = hist_operand(&p->src, c);
	/* The field's own size, at the start of its u64 slot: the bytes the
	 * kernel's trace_event_raw_event_synth() writes. */
	switch (p->size) {
	case 1: *(__u64 *)dst = (__u8)v; break;
	case 2: *(__u64 *)dst = (__u16)v; break;
	case 4: *(__u64 *)dst = (__u32)v; break;
	default: *(__u64 *)dst = v;
	}
	return 0;
}

/* A start: this key's variables, set (not read yet) from now on. */
static __always_inline void trigger_store(__u32 slot, const struct hist_trigger *tr,
					  struct trigger_scratch *t, struct event_stats *st)
{
	__u64 mask = tr->n_vars >= 64 ? ~0ull : (1ull << tr->n_vars) - 1;
	struct hist_var_val *v;
	long err;
	__u32 i;

	t->vk.slot = slot;
	v = bpf_map_lookup_elem(&hist_vars, &t->vk);
	if (!v) {
		t->vv.set = mask;
		t->vv.stamp = t->ts;
		err = bpf_map_update_elem(&hist_vars, &t->vk, &t->vv, BPF_NOEXIST);
		if (!err)
			return;
		/* Another CPU placed the key meanwhile: set it there. */
		v = err == -17 /* EEXIST */ ? bpf_map_lookup_elem(&hist_vars, &t->vk) : NULL;
		if (!v) {
			st->vars_dropped++;
			return;
		}
	}
	for (i = 0; i < TRACERD_HIST_VARS; i++) {
		if (i >= tr->n_vars)
			break;
		v->vals[i] = t->vv.vals[i];
	}
	v->stamp = t->ts;
	__sync_fetch_and_or(&v->set, mask);
}

/* .snapshot(): as the kernel's cond_snapshot, a new maximum of all keys
 * (onmax) or any change (onchange) asks for one. Two CPUs may both see a
 * new maximum at once and both ask: the recorder takes one snapshot in
 * MinIntervalSec= and counts the others. Without a branch: a fork here
 * multiplied the states of everything after it in the triggers' program
 * past the verifier's limit of pending jumps (E2BIG, "The sequence of 8193
 * jumps is too complex") for every config with a trigger. c->snap was
 * looked up with the trigger, whose NULL path ends the event. Values are
 * below 2^63 (times, sizes): max - val has its top bit set when val beats
 * max; TRACK_CHANGE is 2, bit 1 of track. */
_Static_assert(TRACK_MAX == 1 && TRACK_CHANGE == 2, "track's bit 1 is onchange()");
static __always_inline void trigger_snapshot(struct trigger_ctx *c, __u64 val)
{
	struct hist_snap *s = c->snap;
	__u64 max = s->max, change = (c->tr->track >> 1) & 1;
	__u64 ask = (c->tr->snapshot & 1) & (((max - val) >> 63) | change);

	s->max = max ^ ((max ^ val) & -ask);
	__sync_fetch_and_add(&s->requests, ask);
}

/* onmax()/onchange(): the entry's tracked value, and the saved fields of
 * the event that set it (built in rec_out, as a record is), as the
 * kernel's ontrack_action(): a new maximum above, or any change from, the
 * value so far (0 at first). */
static __always_inline void trigger_track(struct trigger_ctx *c, struct agg_scratch *a,
					  struct event_stats *st)
{
	const struct hist_trigger *tr = c->tr;
	struct trigger_scratch *t = c->t;
	struct hist_track_val *v = bpf_map_lookup_elem(&hist_track, &a->hdr);
	__u64 val = t->vv.vals[tr->track_var & HT_VAR_MASK], old = v ? v->val : 0;

	if (tr->track == TRACK_MAX ? val <= old : val == old)
		return;
	trigger_snapshot(c, val);
	c->params = tr->saves;
	for (__u32 i = 0; i < TRACERD_TRACK_SAVES && i < tr->n_saves; i++)
		trigger_param_cb(i, c);
	if (v) {
		v->val = val;
		__builtin_memcpy(v->saved, t->rec_out, TRACERD_TRACK_BYTES);
		return;
	}
	t->trk.val = val;
	__builtin_memcpy(t->trk.saved, t->rec_out, TRACERD_TRACK_BYTES);
	if (bpf_map_update_elem(&hist_track, &a->hdr, &t->trk, BPF_ANY))
		st->vars_dropped++;
}

#endif
