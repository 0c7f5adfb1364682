// SPDX-License-Identifier: GPL-2.0
/* A config applied to the tracer: every selection built first (globs
 * resolved, filters and histograms compiled, Unit= sets), then what is new
 * attached, then the switch to the new selections, and only then what went
 * away detached (tracer_apply_finish(); tracer_retire() drains the ring
 * meanwhile), so that a reload is gapless, loses nothing of what stays, and
 * a bad one changes nothing (what it attached detaches as the ring drains). */
#include "filter/filter.h"
#include "kernel-events/field_source.h"
#include "log.h"
#include "knobs.h"
#include "tracer.h"
#include "units.h"
#include "util.h"

/* A selection being built by tracer_apply, before anything is attached. */
struct sel_build {
	const struct selection *conf;
	struct sel_state *keep;		/* unchanged: reuse this state */
	struct tp_event **events;
	size_t n_events;
	struct event_desc *descs;
	struct hist **hists;		/* Aggregate=, per event; NULL: none */
	struct sel_emit emit;		/* Filter= as BPF programs, or why not */
};

_Static_assert(STACK_TRACE_KERNEL == TRACERD_STACK_KERNEL && STACK_TRACE_USER == TRACERD_STACK_USER &&
	       STACK_TRACE_BOTH == (TRACERD_STACK_KERNEL | TRACERD_STACK_USER),
	       "StackTrace='s values are the descriptor's bits");

/* Filter=, or the trailing "if FILTER" of an Aggregate= trigger, as the
 * kernel takes it: the same filter, pointed at where it is written. */
static int compile_filter(const struct tp_event *e, const struct selection *s,
			  struct event_desc *desc, struct diag *d)
{
	struct conf_pos pos = s->aggregate_pos;
	size_t end, f = s->aggregate ? hist_split_if(s->aggregate, &end) : 0;

	if (!f)
		return filter_compile(s->filter, e, &s->filter_pos, desc, d);
	if (s->filter && *s->filter)
		return diag_set(d, pos.file, pos.line, pos.col + f, "a filter is given twice: "
				"as Filter= and as the trigger's \"if\"; expected one of them");
	pos.col += f;
	return filter_compile(s->aggregate + f, e, &pos, desc, d);
}

static int fill_desc(const struct tp_event *e, const struct selection *s,
		     struct event_desc *desc, struct diag *d)
{
	memset(desc, 0, sizeof(*desc));
	desc->fixed_size = e->fixed_size;
	desc->id = e->id;
	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		if (f->kind != TP_FIELD_DATA_LOC && f->kind != TP_FIELD_REL_LOC)
			continue;
		if (desc->n_dyn == TRACERD_MAX_DYN)
			return diag_set(d, s->pos.file, s->pos.line, s->pos.col,
					"%s:%s has more than %d dynamic fields", e->system, e->name,
					TRACERD_MAX_DYN);
		if (f->kind == TP_FIELD_REL_LOC)
			desc->dyn_rel |= 1u << desc->n_dyn;
		desc->dyn_off[desc->n_dyn++] = f->offset;
	}
	/* Before the filter, which compares the strings listed here. An
	 * aggregating slot writes no record to carry them. */
	if (s->syscall_strings && (!s->aggregate || !*s->aggregate))
		event_desc_user_strings(e, desc);
	desc->stack = s->stack_trace;	/* enum stack_trace is TRACERD_STACK_* bits */
	if (desc->stack)
		desc->stack |= (knob_num(KNOB_TEST_STACK_DEPTH, 0) & 0xff) << TRACERD_STACK_DEPTH_SHIFT;
	return compile_filter(e, s, desc, d);
}

/* Aggregate=: the event's histogram; its records then go to the hash map,
 * and the class program copies the record prefix that the filter, the
 * keys and the sums read. */
static int fill_hist(const struct tp_event *e, const struct selection *s,
		     struct event_desc *desc, struct hist **ret, struct diag *d)
{
	int r;

	*ret = NULL;
	if (!s->aggregate || !*s->aggregate)
		return 0;
	r = hist_compile(s->aggregate, e, &s->aggregate_pos, ret, d);
	if (r < 0)
		return r;
	if ((*ret)->is_trigger && tp_event_is_synthetic(e))
		return diag_set(d, s->aggregate_pos.file, s->aggregate_pos.line,
				s->aggregate_pos.col, "a trigger with variables or an action on "
				"a synthetic event is not supported yet: expected keys, values, "
				"sort and size only");
	desc->agg = (*ret)->is_trigger ? TRACERD_AGG_TRIGGER : 1;
	desc->filter_span = hist_record_span(*ret, desc);
	return 0;
}

static void build_free(struct sel_build *b)
{
	for (size_t i = 0; b->hists && i < b->n_events; i++)
		hist_free(b->hists[i]);
	free(b->hists);
	free(b->events);
	free(b->descs);
	sel_emit_free(&b->emit);
}

static bool str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Whether b can keep a's attachments: the same name, events and filter.
 * Priority= and RateLimit= live in userspace only, and take effect through
 * what commit() sets on the kept state, so keeping the links loses nothing
 * and needs no second copy of the class program. */
static bool same_attachments(const struct selection *a, const struct selection *b)
{
	if (!str_same(a->name, b->name) || !str_same(a->filter, b->filter) ||
	    !str_same(a->aggregate, b->aggregate) || a->n_events != b->n_events ||
	    a->syscall_strings != b->syscall_strings || a->stack_trace != b->stack_trace ||
	    a->n_units != b->n_units)
		return false;
	for (size_t i = 0; i < a->n_units; i++)
		if (strcmp(a->units[i], b->units[i]))
			return false;
	for (size_t i = 0; i < a->n_events; i++)
		if (strcmp(a->events[i], b->events[i]))
			return false;
	return true;
}

/* Resolves and compiles one selection; touches nothing in the kernel.
 * An unchanged one of sels is kept instead, unless a synthetic event its
 * globs name was defined anew. */
static int build_selection(struct registry *reg, struct sel_state **sels, size_t n_sels,
			   const struct selection *s, const struct filter_emit_maps *m,
			   struct sel_build *b, struct diag *d)
{
	int r;

	b->conf = s;
	for (size_t i = 0; i < n_sels; i++)
		if (same_attachments(sels[i]->conf, s) && !registry_synthetic_changed(reg, s)) {
			b->keep = sels[i];
			return 0;
		}
	if (s->stack_trace & STACK_TRACE_KERNEL)
		render_stacks_prepare();
	r = resolve_selection(reg, s, &b->events, &b->n_events, d);
	if (r < 0)
		return r;
	b->descs = calloc(b->n_events, sizeof(*b->descs));
	b->hists = calloc(b->n_events, sizeof(*b->hists));
	if (!b->descs || !b->hists)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_events; i++) {
		r = render_prepare(b->events[i]);
		if (r >= 0)
			r = fill_desc(b->events[i], s, &b->descs[i], d);
		if (r >= 0)
			r = fill_hist(b->events[i], s, &b->descs[i], &b->hists[i], d);
		if (r < 0)
			return r;
	}
	return sel_emit_build(&b->emit, s, b->events, b->descs, b->hists, b->n_events, m);
}

/* The index of the Events= word naming e outright, or -1 if only globs matched it. */
static int named_explicitly(const struct selection *s, const struct tp_event *e)
{
	char full[256];

	snprintf(full, sizeof(full), "%s:%s", e->system, e->name);
	for (size_t i = 0; i < s->n_events; i++)
		if (!strcmp(s->events[i], full))
			return i;
	return -1;
}

/* A trigger's index in hist_triggers, kept while its slot lives. */
static int trigger_index_take(struct tracer *t, struct hist *h, const struct sel_state *st,
			      struct diag *d)
{
	for (unsigned i = 0; i < TRACERD_HIST_TRIGGERS; i++)
		if (!t->trigger_used[i]) {
			t->trigger_used[i] = true;
			t->snap_seen[i] = 0;	/* loader_set_trigger() clears its requests */
			h->desc.trigger = i + 1;
			return 0;
		}
	return diag_set(d, st->conf->aggregate_pos.file, st->conf->aggregate_pos.line,
			st->conf->aggregate_pos.col, "more than %d events with a trigger's variables "
			"or actions", TRACERD_HIST_TRIGGERS);
}

/* Its index free again, its variables gone; the starts not read. */
static int trigger_index_drop(struct tracer *t, const struct trace_slot *slot)
{
	unsigned i = slot->hist->desc.trigger - 1;

	if (i < TRACERD_HIST_TRIGGERS)
		t->trigger_used[i] = false;
	return loader_set_trigger(t->ld, i, slot->id, NULL);
}

/* A slot for e: its id, its descriptors in the maps, in the consumer's
 * table; attached by slot_attach() once every trigger is bound. */
static int slot_prepare(struct tracer *t, struct sel_state *st, struct tp_event *e,
			const struct event_desc *desc, struct hist **hist, struct diag *d)
{
	struct trace_slot *slot;
	int id = consumer_slot_alloc(t->cons), r;

	if (id < 0)
		return diag_set(d, st->conf->pos.file, st->conf->pos.line, 0,
				"more than %d events selected", TRACERD_MAX_EVENTS);
	if (GROW(st->slots, st->cap_slots, st->n_slots) < 0 ||
	    trace_slot_new(&slot, id, e, st->conf->name, st->conf->priority, &st->rl) < 0)
		return -ENOMEM;
	out_slot_set_output(slot->out, st->conf->output);
	out_slot_set_trigger(slot->out, st->conf->trigger);
	slot->unit_set = desc->unit_set;
	r = *hist && (*hist)->is_trigger ? trigger_index_take(t, *hist, st, d) : 0;
	if (r < 0) {
		trace_slot_free(slot);
		return r;
	}
	if (*hist)	/* before the descriptor that sends events to it */
		r = hist_slot_setup(&t->hist_maps, id, &(*hist)->desc);
	if (r >= 0)
		r = loader_set_slot(t->ld, id, desc);
	if (r < 0) {
		trace_slot_free(slot);
		return diag_set(d, NULL, 0, 0, "cannot write the BPF maps: %s", strerror(-r)), r;
	}
	slot->hist = TAKE_PTR(*hist);
	consumer_slot_set(t->cons, slot);
	st->slots[st->n_slots++] = slot;
	return 0;
}

static void slot_drop(struct tracer *t, struct sel_state *st, size_t k)
{
	struct trace_slot *slot = st->slots[k];

	if (slot->hist && slot->hist->is_trigger)
		trigger_index_drop(t, slot);
	consumer_slot_clear(t->cons, slot->id);
	trace_slot_free(slot);
	memmove(st->slots + k, st->slots + k + 1, (st->n_slots - k - 1) * sizeof(*st->slots));
	st->n_slots--;
}

static int note_refused(struct sel_state *st, const struct tp_event *e, int err)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s:%s (%s)", e->system, e->name, strerror(-err));
	if (GROW(st->refused, st->cap_refused, st->n_refused) < 0 ||
	    !(st->refused[st->n_refused] = strdup(buf)))
		return -ENOMEM;
	st->n_refused++;
	return 0;
}

/* The selection's state and slots, nothing attached yet. */
static int prepare_selection(struct tracer *t, struct sel_build *b, struct sel_state **ret,
			     struct diag *d)
{
	struct sel_state *st = calloc(1, sizeof(*st));
	const struct selection *s = b->conf;
	int r = 0;

	if (!st)
		return -ENOMEM;
	st->conf = s;
	st->rl = (struct rate_limit){
		.per_sec = s->rate_limit, .burst = s->rate_burst, .tokens = s->rate_burst,
	};
	*ret = st;
	r = units_attach(t, st);
	for (size_t i = 0; i < b->n_events; i++)
		b->descs[i].unit_set = st->unit_set;
	if (r >= 0)
		r = sel_emit_load(t->ld, &b->emit, s, &st->filter_progs, &st->n_filter_progs);
	sel_emit_log(&b->emit, s);
	for (size_t i = 0; i < b->n_events && r >= 0; i++)
		r = slot_prepare(t, st, b->events[i], &b->descs[i], &b->hists[i], d);
	return r;
}

static int attach_selection(struct tracer *t, struct sel_build *b, struct sel_state *st,
			    struct diag *d)
{
	const struct selection *s = b->conf;
	size_t k = 0;
	int r = 0;

	for (size_t i = 0; i < b->n_events && r >= 0; i++) {
		struct trace_slot *slot = st->slots[k];
		int gi;

		loader_progress(t->ld, i, b->n_events);
		r = loader_attach(t->ld, slot->event, slot->id, b->emit.fd ? b->emit.fd[i] : -1,
				  &slot->att);
		if (r >= 0) {
			k++;
			continue;
		}
		/* An event a glob matched may be one the kernel keeps from BPF
		 * (ftrace: internals): note it. One named outright must attach. */
		gi = named_explicitly(s, slot->event);
		if (gi < 0)
			r = note_refused(st, slot->event, r);
		else
			diag_set(d, s->events_file, s->event_lines[gi], s->event_cols[gi],
				 "the kernel refused to attach to %s:%s: %s", slot->event->system,
				 slot->event->name, strerror(-r));
		slot_drop(t, st, k);
	}
	return r;
}

/* Detaches every slot of the n states at once (detach.c), calling idle
 * meanwhile. */
static void detach_states(struct tracer *t, struct sel_state **sels, size_t n,
			  loader_idle_fn idle, void *userdata)
{
	_cleanup_free_ struct attachment **atts = NULL;
	size_t n_atts = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		n_atts += sels[i] ? sels[i]->n_slots : 0;
	atts = calloc(n_atts ? n_atts : 1, sizeof(*atts));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; sels[i] && j < sels[i]->n_slots; j++)
			if (atts)
				atts[k++] = &sels[i]->slots[j]->att;
			else	/* no memory: one by one */
				loader_detach(t->ld, &sels[i]->slots[j]->att);
	if (atts)
		loader_detach_many(t->ld, atts, k, idle, userdata);
}

/* st detached and what it wrote drained: what its slots counted goes to
 * into (NULL: nowhere), then st is freed. ids_end: see tracer_keep_counts(). */
static void sel_state_finish(struct tracer *t, struct sel_state *st, unsigned ids_end,
			     struct sel_past *into)
{
	int r;

	/* Its triggers' starts whose end never came, aged out now. */
	for (size_t i = 0; i < st->n_slots; i++)
		if (st->slots[i]->hist && st->slots[i]->hist->is_trigger &&
		    (r = trigger_index_drop(t, st->slots[i])) > 0)
			st->slots[i]->vars_expired += r;
	/* Nothing counts in the program any more, and the rate limit saw
	 * every record: the counts are final but for records still queued
	 * for a sink, which count on through the slot's out_slot. */
	if (into && ((r = tracer_keep_counts(t, st, ids_end, into)) < 0 ||
		     (r = sel_past_move(into, &st->past)) < 0))
		log_warning("selection %s: cannot keep what its replaced events counted (%s): "
			    "the summary leaves it out", st->conf->name, strerror(-r));
	/* Their emitted filters go with them. */
	for (size_t i = 0; i < st->n_filter_progs; i++)
		loader_filter_close(t->ld, st->filter_progs[i]);
	free(st->filter_progs);
	for (size_t i = 0; i < st->n_slots; i++) {
		hist_out_last(t, st, st->slots[i], "replaced");
		consumer_slot_clear(t->cons, st->slots[i]->id);
		/* records still in the sink queue hold their own reference */
		trace_slot_free(st->slots[i]);
	}
	units_detach(t, st);
	sel_past_free(&st->past);
	free(st->slots);
	strv_free(st->refused, st->n_refused);
	free(st);
}

void sel_state_free(struct tracer *t, struct sel_state *st)
{
	if (!st)
		return;
	detach_states(t, &st, 1, NULL, NULL);
	/* Detached: all their records are written; other events still fire. */
	if (t->cons)
		consumer_drain_written(t->cons);
	sel_state_finish(t, st, 0, NULL);
}

/* The drain while detaching many (a grace period of the kernel's each:
 * seconds): the selections that stay fire on meanwhile. Here, on the
 * loop's thread, rather than a detach in the background while the loop
 * runs: the tracer is whole (the slots that go still in the consumer's
 * table until their detach ends), so the ring is read exactly as the loop
 * reads it, a record of a slot that goes delivered as before; no tracer
 * state is shared with another thread; and a SIGHUP or SIGTERM that comes
 * meanwhile waits in the signalfd, so that a reload never meets a
 * half-detached one, and stop finds every link that went closed. The
 * loop's timers (status, interval dumps) wait; the watchdog hears the
 * progress callback. */
static void drain_meanwhile(void *userdata)
{
	tracer_drain_written(userdata);
}

/* A failed apply's new states go, all at once and draining meanwhile, as
 * a successful one's old states do: the running config stays, and loses
 * nothing while they detach. Their counts go unreported. */
static void rollback(struct tracer *t, struct sel_state **fresh, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; fresh[i] && k < fresh[i]->n_slots; k++)
			fresh[i]->slots[k]->hist_done = true;
	detach_states(t, fresh, n, drain_meanwhile, t);
	/* Detached: all their records are written; other events still fire. */
	tracer_drain_written(t);
	for (size_t i = 0; i < n; i++)
		if (fresh[i])
			sel_state_finish(t, fresh[i], 0, NULL);
}

static struct sel_past *removed_find(struct tracer *t, const char *name)
{
	for (size_t i = 0; i < t->n_removed; i++)
		if (!strcmp(t->removed[i].name, name))
			return &t->removed[i];
	return NULL;
}

/* Where the counts of old, which a reload replaces or removes, go: the new
 * selection of its name, or the removed ones. NULL: no memory. */
static struct sel_past *past_for(struct tracer *t, struct sel_state **sels, size_t n,
				 const struct sel_state *old)
{
	const char *name = old->conf->name;
	struct sel_past *p;

	for (size_t i = 0; i < n; i++)
		if (sels[i] != old && !strcmp(sels[i]->conf->name, name))
			return &sels[i]->past;
	p = removed_find(t, name);
	if (p)
		return p;
	if (GROW(t->removed, t->cap_removed, t->n_removed) < 0)
		return NULL;
	p = &t->removed[t->n_removed];
	*p = (struct sel_past){ .name = strdup(name) };
	if (!p->name)
		return NULL;
	t->n_removed++;
	return p;
}

/* A selection that an earlier reload removed is back: it counts on. */
static void take_removed(struct tracer *t, struct sel_state *st)
{
	struct sel_past *p = removed_find(t, st->conf->name);

	if (!p)
		return;
	if (sel_past_move(&st->past, p) < 0)
		sel_past_free(p);	/* what did not move is dropped, not counted twice */
	*p = t->removed[--t->n_removed];
}

static bool kept(struct sel_build *b, size_t n, const struct sel_state *st)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].keep == st)
			return true;
	return false;
}

/* A kept selection takes its new Priority= and RateLimit=. */
static void sel_state_update(struct sel_state *st, const struct selection *conf)
{
	st->conf = conf;
	st->rl.per_sec = conf->rate_limit;
	st->rl.burst = conf->rate_burst;
	for (size_t i = 0; i < st->n_slots; i++) {
		out_slot_set_priority(st->slots[i]->out, conf->priority);
		out_slot_set_output(st->slots[i]->out, conf->output);
		out_slot_set_trigger(st->slots[i]->out, conf->trigger);
	}
}

/* Swaps in the new selection states and config; the old ones that go wait
 * for tracer_apply_finish(), with the config they point into. */
static int commit(struct tracer *t, struct config *cfg, struct sel_build *b, size_t n,
		  struct sel_state **fresh)
{
	struct sel_state **sels = calloc(n ? n : 1, sizeof(*sels));
	struct sel_state **retiring = calloc(t->n_sels ? t->n_sels : 1, sizeof(*retiring));
	size_t n_retiring = 0;

	if (!sels || !retiring) {
		free(sels);
		free(retiring);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		sels[i] = b[i].keep ? b[i].keep : fresh[i];
		sel_state_update(sels[i], &cfg->sels[i]);
		if (!b[i].keep)
			take_removed(t, sels[i]);
	}
	for (size_t i = 0; i < t->n_sels; i++)
		if (!kept(b, n, t->sels[i]))
			retiring[n_retiring++] = t->sels[i];
	free(t->sels);
	t->sels = sels;
	t->n_sels = t->cap_sels = n;
	t->retiring = retiring;
	t->n_retiring = n_retiring;
	t->retiring_cfg = t->cfg;
	t->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	/* Every selection's records, kept ones too, from the next one read. */
	consumer_set_render(t->cons, &(struct render_opts){ .raw_pointers = t->cfg.raw_pointers });
	return 0;
}

/* Entries of the histograms' maps that slots may take: size= of each, in
 * both generations (a large key with a compact layout in both maps: its
 * entries may be all short or all long). The running slots count too: a
 * changed selection is attached before the old one goes. */
static void hist_room_add(const struct hist *h, uint64_t used[AGG_MAPS])
{
	if (!h)
		return;
	used[h->desc.map % AGG_MAPS] += 2ULL * h->desc.max_entries;
	if (h->desc.short_size)
		used[AGG_MAP_SMALL] += 2ULL * h->desc.max_entries;
}

static int check_hist_room(struct tracer *t, struct sel_build *b, size_t n, struct diag *d)
{
	static const uint64_t room[AGG_MAPS] = {
		TRACERD_AGG_SMALL_ENTRIES, TRACERD_AGG_MEDIUM_ENTRIES, TRACERD_AGG_LARGE_ENTRIES,
	};
	static const char *const what[AGG_MAPS] = {
		"keys of up to 24 bytes", "keys of 25 to 64 bytes", "keys of more than 64 bytes",
	};
	uint64_t used[AGG_MAPS] = { 0 };

	for (size_t i = 0; t && i < t->n_sels; i++)	/* NULL: --check-config, nothing runs */
		for (size_t k = 0; k < t->sels[i]->n_slots; k++)
			hist_room_add(t->sels[i]->slots[k]->hist, used);
	for (size_t i = 0; i < n; i++) {
		const struct conf_pos *pos = &b[i].conf->aggregate_pos;

		for (size_t k = 0; !b[i].keep && b[i].hists && k < b[i].n_events; k++)
			hist_room_add(b[i].hists[k], used);
		for (int c = 0; c < AGG_MAPS; c++)
			if (used[c] > room[c])
				return diag_set(d, pos->file, pos->line, pos->col,
						"the histograms' size= over all their events (twice: "
						"one generation is read while the other counts) exceed "
						"the %llu entries of the map for %s: lower size=",
						(unsigned long long)room[c], what[c]);
	}
	return 0;
}

/* onmax()/onchange().snapshot() asks the recorder: some selection must
 * record into it, as for Trigger=snapshot (config_finish()). hists[i]:
 * selection i's histograms, n_events[i] of them, as check_links() has them. */
static int check_snapshots(const struct sel_build *b, struct hist ***hists,
			   const size_t *n_events, size_t n, struct diag *d)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].conf->output == OUTPUT_RECORDER)
			return 0;
	for (size_t i = 0; i < n; i++) {
		const struct conf_pos *at = &b[i].conf->aggregate_pos;

		for (size_t j = 0; hists[i] && j < n_events[i]; j++)
			if (hists[i][j] && hists[i][j]->is_trigger && hists[i][j]->trig.snapshot)
				return diag_set(d, at->file, at->line, at->col,
						"onmax().snapshot() takes a snapshot of the recorder's "
						"window, and no selection records into it: expected a "
						"selection with Output=recorder");
	}
	return 0;
}

/* The triggers of the selections built (a kept one's in its slots) bound
 * without slots: a reference or action that cannot be is an error before
 * anything is loaded or said. */
static int check_links(struct registry *reg, struct sel_build *b, size_t n, struct diag *d)
{
	_cleanup_free_ struct hist ***hists = calloc(n ? n : 1, sizeof(*hists));
	_cleanup_free_ struct tp_event ***events = calloc(n ? n : 1, sizeof(*events));
	_cleanup_free_ size_t *n_events = calloc(n ? n : 1, sizeof(*n_events));
	int r = -ENOMEM;

	if (!hists || !events || !n_events)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sel_state *k = b[i].keep;

		n_events[i] = k ? k->n_slots : b[i].n_events;
		hists[i] = k ? calloc(k->n_slots + 1, sizeof(**hists)) : b[i].hists;
		events[i] = k ? calloc(k->n_slots + 1, sizeof(**events)) : b[i].events;
		if (!hists[i] || !events[i])
			goto out;
		for (size_t j = 0; k && j < k->n_slots; j++) {
			hists[i][j] = k->slots[j]->hist;
			events[i][j] = k->slots[j]->event;
		}
	}
	r = tracer_link_check(reg, hists, events, n_events, n, d);
	if (r >= 0)
		r = check_snapshots(b, hists, n_events, n, d);
out:
	for (size_t i = 0; i < n; i++)
		if (b[i].keep) {
			free(hists[i]);
			free(events[i]);
		}
	return r;
}

/* Each selection built as the daemon would build it; what runs where is
 * said only of a config without an error, which alone is printed then. */
int tracer_check(struct registry *reg, const struct config *cfg, struct diag *d)
{
	_cleanup_free_ struct sel_build *b = calloc(cfg->n_sels ? cfg->n_sels : 1, sizeof(*b));
	size_t n = 0;
	int r = 0;

	if (!b)
		return -ENOMEM;
	for (; n < cfg->n_sels && r >= 0; n++) {
		struct filter_emit_maps m = FILTER_EMIT_CHECK_MAPS;

		r = build_selection(reg, NULL, 0, &cfg->sels[n], &m, &b[n], d);
	}
	if (r >= 0)
		r = check_hist_room(NULL, b, n, d);
	if (r >= 0)
		r = check_links(reg, b, n, d);
	for (size_t i = 0; i < n; i++) {
		if (r >= 0)
			sel_emit_log(&b[i].emit, &cfg->sels[i]);
		build_free(&b[i]);
	}
	return r;
}

void tracer_apply_finish(struct tracer *t, loader_idle_fn idle, void *userdata)
{
	unsigned ids_end = 0, end;

	if (t->n_retiring) {
		detach_states(t, t->retiring, t->n_retiring, idle, userdata);
		/* Every slot in use, old and new: the old states go one by one. */
		ids_end = tracer_ids_end(t->sels, t->n_sels);
		end = tracer_ids_end(t->retiring, t->n_retiring);
		if (end > ids_end)
			ids_end = end;
		/* Detached: all their records are written; other events still fire. */
		if (t->cons)
			consumer_drain_written(t->cons);
	}
	for (size_t i = 0; i < t->n_retiring; i++)
		sel_state_finish(t, t->retiring[i], ids_end,
				 past_for(t, t->sels, t->n_sels, t->retiring[i]));
	free(t->retiring);
	t->retiring = NULL;
	t->n_retiring = 0;
	config_free(&t->retiring_cfg);
}

void tracer_retire(struct tracer *t)
{
	tracer_apply_finish(t, drain_meanwhile, t);
}

/* The selections as they will run: kept ones and new ones. */
static int link_new(struct tracer *t, struct sel_build *b, struct sel_state **fresh, size_t n,
		    struct diag *d)
{
	_cleanup_free_ struct sel_state **run = calloc(n ? n : 1, sizeof(*run));

	if (!run)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		run[i] = b[i].keep ? b[i].keep : fresh[i];
	return tracer_link(t, run, n, d);
}

/* A failed apply bound the running triggers to what it attached: back. */
static void relink_running(struct tracer *t)
{
	struct diag d = { 0 };
	int r = tracer_link(t, t->sels, t->n_sels, &d);

	if (r < 0)
		log_warning("cannot bind the running triggers again: %s", d.msg[0] ? d.msg :
			    strerror(-r));
}

int tracer_apply(struct tracer *t, struct config *cfg, struct diag *d)
{
	size_t n = cfg->n_sels;
	struct sel_build *b = calloc(n ? n : 1, sizeof(*b));
	struct sel_state **fresh = calloc(n ? n : 1, sizeof(*fresh));
	int r = b && fresh ? 0 : -ENOMEM;
	struct filter_emit_maps m;

	tracer_apply_finish(t, NULL, NULL);	/* the last apply's, if its caller did not */
	loader_filter_maps(t->ld, &m);
	m.task_comm_off = t->task_comm_off;
	if (r >= 0)	/* a reload's [Synthetic]: before the globs that name them */
		r = registry_synthetic(t->reg, cfg->synth, cfg->n_synth, d);
	for (size_t i = 0; i < n && r >= 0; i++)
		r = build_selection(t->reg, t->sels, t->n_sels, &cfg->sels[i], &m, &b[i], d);
	if (r >= 0)
		r = check_hist_room(t, b, n, d);
	if (r >= 0)
		r = check_links(t->reg, b, n, d);
	for (size_t i = 0; i < n && r >= 0; i++)
		if (!b[i].keep)
			r = prepare_selection(t, &b[i], &fresh[i], d);
	/* Triggers bound before anything new fires: the kept selections and
	 * the new ones, as they will run after the switch. */
	if (r >= 0)
		r = link_new(t, b, fresh, n, d);
	/* New attachments first: an event in both old and new config is then
	 * traced twice for a moment rather than not at all. */
	for (size_t i = 0; i < n && r >= 0; i++)
		if (!b[i].keep)
			r = attach_selection(t, &b[i], fresh[i], d);
	if (r >= 0)
		r = commit(t, cfg, b, n, fresh);
	if (r < 0 && fresh) {
		rollback(t, fresh, n);
		relink_running(t);
	}
	for (size_t i = 0; b && i < n; i++)
		build_free(&b[i]);
	free(b);
	free(fresh);
	return r;
}
