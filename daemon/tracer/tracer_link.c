// SPDX-License-Identifier: GPL-2.0
/* Inter-event triggers across selections: every histogram of the running
 * selections bound by hist_link() (a $reference to the slot that sets it,
 * an action to its synthetic event), each trigger written to its slot, and
 * each synthetic event's selections to synth_subs, which its actions fire.
 * Kept selections are bound again too: a changed selection that sets their
 * variables has new slots. */
#include "clock.h"
#include "log.h"
#include "sink/sink.h"
#include "tracer.h"
#include "util.h"

static const struct tp_event *find_synth(void *userdata, const char *name, unsigned *index)
{
	struct registry *reg = userdata;
	char full[256];
	struct tp_event *e;

	snprintf(full, sizeof(full), "synthetic:%s", name);
	if (registry_event(reg, full, &e) < 0 || !tp_event_is_synthetic(e))
		return NULL;
	*index = e->id - TP_SYNTH_ID_FIRST;
	return e;
}

static int add_items(struct sel_state **sels, size_t n, struct hist_link_item **items,
		     size_t *n_items, size_t *cap)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; sels[i] && k < sels[i]->n_slots; k++) {
			struct trace_slot *s = sels[i]->slots[k];

			if (GROW(*items, *cap, *n_items) < 0)
				return -ENOMEM;
			(*items)[(*n_items)++] = (struct hist_link_item){
				.h = s->hist, .e = s->event, .slot = s->id,
			};
		}
	return 0;
}

/* Every synthetic event's selections, in the order they are configured. */
static int write_subs(struct tracer *t, struct hist_link_item *items, size_t n)
{
	static struct synth_subs subs[TRACERD_SYNTH_EVENTS];

	memset(subs, 0, sizeof(subs));
	for (size_t i = 0; i < n; i++) {
		unsigned idx;
		struct synth_subs *s;

		if (!tp_event_is_synthetic(items[i].e))
			continue;
		idx = items[i].e->id - TP_SYNTH_ID_FIRST;
		if (idx >= TRACERD_SYNTH_EVENTS)
			continue;
		s = &subs[idx];
		if (s->n == TRACERD_SYNTH_SUBS) {
			log_warning("synthetic:%s: more than %d selections: the action fires the "
				    "first %d only", items[i].e->name, TRACERD_SYNTH_SUBS,
				    TRACERD_SYNTH_SUBS);
			continue;
		}
		s->slots[s->n++] = items[i].slot;
	}
	/* Only those that have or had selections: each write is a bpf()
	 * call, during which the kernel skips this CPU's tracepoint programs. */
	for (unsigned i = 0; i < TRACERD_SYNTH_EVENTS; i++) {
		int r;

		if (!subs[i].n && !t->synth_written[i])
			continue;
		r = loader_set_synth_subs(t->ld, i, &subs[i]);
		if (r < 0)
			return r;
		t->synth_written[i] = subs[i].n > 0;
	}
	return 0;
}

int tracer_link(struct tracer *t, struct sel_state **sels, size_t n, struct diag *d)
{
	_cleanup_free_ struct hist_link_item *items = NULL;
	struct hist_synth_finder f = { .find = find_synth, .userdata = t->reg };
	size_t n_items = 0, cap = 0;
	int r;

	r = add_items(sels, n, &items, &n_items, &cap);
	if (r >= 0)
		r = hist_link(items, n_items, &f, d);
	for (size_t i = 0; i < n_items && r >= 0; i++)
		if (items[i].h && items[i].h->is_trigger) {
			r = loader_trigger_init(t->ld);
			if (r >= 0)
				r = loader_set_trigger(t->ld, items[i].h->desc.trigger - 1,
						       items[i].slot, &items[i].h->trig);
		}
	if (r >= 0)
		r = write_subs(t, items, n_items);
	return r;
}

int tracer_link_check(struct registry *reg, struct hist ***hists, struct tp_event ***events,
		      const size_t *n_events, size_t n, struct diag *d)
{
	_cleanup_free_ struct hist_link_item *items = NULL;
	struct hist_synth_finder f = { .find = find_synth, .userdata = reg };
	size_t n_items = 0, cap = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; hists[i] && k < n_events[i]; k++) {
			if (GROW(items, cap, n_items) < 0)
				return -ENOMEM;
			items[n_items++] = (struct hist_link_item){
				.h = hists[i][k], .e = events[i][k],
			};
		}
	return hist_link(items, n_items, &f, d);
}

void tracer_snapshot_poll(struct tracer *t)
{
	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++) {
			const struct hist *h = t->sels[i]->slots[k]->hist;
			unsigned index = h ? h->desc.trigger - 1 : 0;
			uint64_t n;

			if (!h || !h->is_trigger || !h->trig.snapshot || index >= TRACERD_HIST_TRIGGERS ||
			    loader_snapshot_requests(t->ld, index, &n) < 0 || n <= t->snap_seen[index])
				continue;
			/* What led to it is in the window: the flush's drain is
			 * budgeted and may have left records behind (as SIGUSR1). */
			tracer_drain_written(t);
			(void)sink_route_snapshot(t->sink, t->sels[i]->conf->name, n - t->snap_seen[index]);
			t->snap_seen[index] = n;
		}
}

static void on_expired(void *userdata, unsigned slot)
{
	struct tracer *t = userdata;

	if (slot < TRACERD_MAX_EVENTS && t->cons->slots[slot])
		t->cons->slots[slot]->vars_expired++;
}

/* Called each second: every tenth of VariableMaxAgeSec= (at least a
 * second), the variables not set for VariableMaxAgeSec= go. Only while a
 * trigger keeps variables: the walk reads the map entry by entry. */
void tracer_vars_tick(struct tracer *t, uint64_t due_usec)
{
	uint64_t age = t->cfg.variable_max_age_sec * 1000000ULL, every = age / 10;
	bool any = false;

	if (every < 1000000ULL)
		every = 1000000ULL;
	if (due_usec < t->vars_swept_usec + every)
		return;
	for (size_t i = 0; i < t->n_sels && !any; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots && !any; k++) {
			const struct hist *h = t->sels[i]->slots[k]->hist;

			any = h && h->is_trigger && h->trig.store;
		}
	if (!any && !t->vars_swept_usec)
		return;
	t->vars_swept_usec = due_usec;
	/* The clock now, not the timer's due time (earlier): a start set
	 * between the two is not old. */
	loader_vars_sweep(t->ld, now_usec(CLOCK_MONOTONIC) * 1000, age * 1000, on_expired, t);
}
