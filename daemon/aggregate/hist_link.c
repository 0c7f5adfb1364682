// SPDX-License-Identifier: GPL-2.0
/* Binds the inter-event triggers of a config to each other, once every
 * selection is compiled: a $reference to the slot and variable of the
 * trigger that sets it (on the event onmatch() names, else on any one event,
 * as the kernel looks it up), and an onmatch() action to its synthetic
 * event, its params to the event's fields. Errors point into Aggregate=. */
#include <stdarg.h>
#include <stdio.h>
#include "hist.h"
#include "util.h"

static int link_error(const struct hist *h, int off, struct diag *d, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int link_error(const struct hist *h, int off, struct diag *d, const char *fmt, ...)
{
	struct filter_text src = { .expr = h->expr, .pos = &h->pos, .d = d };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return filter_error(&src, off, "%s", msg);
}

static bool on_event(const struct hist_link_item *it, const char *sys, const char *event)
{
	return it->h && !strcmp(it->e->system, sys) && !strcmp(it->e->name, event);
}

static int var_index(const struct hist *h, const char *name)
{
	for (size_t i = 0; i < h->spec.n_vars; i++)
		if (!strcmp(h->spec.vars[i].name, name))
			return i;
	return -1;
}

/* The variable's own key and the reference's must be the same bytes. */
static bool keys_match(const struct hist *a, const struct hist *b)
{
	if (a->desc.key_size != b->desc.key_size || a->n_keys != b->n_keys)
		return false;
	for (size_t i = 0; i < a->n_keys; i++)
		if (a->desc.keys[i].width != b->desc.keys[i].width ||
		    a->desc.keys[i].xform != b->desc.keys[i].xform)
			return false;
	return true;
}

static int link_ref(struct hist_link_item *items, size_t n, struct hist *h, size_t r,
		    struct diag *d)
{
	const struct hist_opnd_spec *o = h->refs[r];
	const struct hist_action_spec *a = h->spec.has_action ? &h->spec.action : NULL;
	struct hist_link_item *found = NULL;
	int var = -1;

	for (size_t i = 0; i < n; i++) {
		int v;

		if (!items[i].h || items[i].h == h || (a && !on_event(&items[i], a->sys, a->event)))
			continue;
		v = var_index(items[i].h, o->name);
		if (v < 0)
			continue;
		if (found)
			return link_error(h, o->off, d, "$%s is set by more than one trigger (%s:%s "
					  "and %s:%s): name its event with onmatch(SYSTEM.EVENT)",
					  o->name, found->e->system, found->e->name, items[i].e->system,
					  items[i].e->name);
		found = &items[i];
		var = v;
	}
	if (!found)
		return a ? link_error(h, o->off, d, "unknown variable $%s: no trigger on %s:%s sets "
				      "it (expected NAME=EXPR in the Aggregate= of a selection of "
				      "that event)", o->name, a->sys, a->event)
			 : link_error(h, o->off, d, "unknown variable $%s: no trigger sets it",
				      o->name);
	if (!keys_match(found->h, h))
		return link_error(h, o->off, d, "$%s is kept by the key of %s:%s, which is not "
				  "this trigger's: expected keys of the same types", o->name,
				  found->e->system, found->e->name);
	h->trig.refs[r] = (struct hist_ref){ .slot = found->slot, .var = var };
	found->h->trig.store = 1;
	return 0;
}

static bool field_is_string(const struct tp_field *f)
{
	return f->kind == TP_FIELD_ARRAY;
}

/* The action's synthetic event: its params in the event's field order. */
static int link_action(struct hist *h, const struct tp_event *synth, unsigned index,
		       struct diag *d)
{
	const struct hist_action_spec *a = &h->spec.action;
	struct hist_trigger *t = &h->trig;
	unsigned size = 8;
	size_t k = 0;

	for (size_t i = 0; i < synth->n_fields; i++) {
		const struct tp_field *f = &synth->fields[i];
		struct synth_param *p;
		bool str;

		if (f->is_common)
			continue;
		if (k == a->n_params)
			return link_error(h, a->params_off, d, "%s has more fields than the %zu "
					  "params given: expected a param for %s", a->synth,
					  a->n_params, f->name);
		p = &t->params[k];
		str = p->src.kind == HOP_STR || p->src.kind == HOP_COMM;
		if (str != field_is_string(f))
			return link_error(h, a->params[k].off, d, "param %zu is %s, and %s's field "
					  "%s is %s", k + 1, str ? "a string" : "a number", a->synth,
					  f->name, field_is_string(f) ? "a string" : "a number");
		p->off = f->offset;
		p->size = f->size;
		/* a u64 slot, a string STR_VAR_LEN_MAX bytes, as the kernel writes */
		if (f->offset + (str ? TRACERD_SYNTH_STR : 8) > size)
			size = f->offset + (str ? TRACERD_SYNTH_STR : 8);
		if (str && p->src.size > f->size)
			p->src.size = f->size;
		if (str && p->src.kind == HOP_COMM && f->size < TRACERD_COMM_LEN)
			return link_error(h, a->params[k].off, d, "%s's field %s has %u bytes: "
					  "comm takes %d", a->synth, f->name, f->size,
					  TRACERD_COMM_LEN);
		k++;
	}
	if (k < a->n_params)
		return link_error(h, a->params[k].off, d, "%s has %zu fields: this param is one "
				  "too many", a->synth, k);
	if (size > TRACERD_SYNTH_REC)
		return link_error(h, a->synth_off, d, "%s's record takes %u bytes: an action "
				  "fills at most %d", a->synth, size, TRACERD_SYNTH_REC);
	t->synth = index + 1;
	t->synth_id = synth->id;
	t->synth_size = size;
	return 0;
}

static int link_one(struct hist_link_item *items, size_t n, struct hist *h,
		    const struct hist_synth_finder *f, struct diag *d)
{
	const struct hist_action_spec *a = &h->spec.action;
	const struct tp_event *synth;
	unsigned index;
	bool seen = false;

	if (h->spec.has_action) {
		for (size_t i = 0; i < n && !seen; i++)
			seen = on_event(&items[i], a->sys, a->event) && items[i].h->spec.n_vars;
		if (!seen)
			return link_error(h, a->event_off, d, "onmatch(%s.%s): no selection's "
					  "Aggregate= on %s:%s sets variables: expected the event "
					  "whose variables this trigger reads", a->sys, a->event,
					  a->sys, a->event);
	}
	for (size_t k = 0; k < h->trig.n_refs; k++) {
		int r = link_ref(items, n, h, k, d);

		if (r < 0)
			return r;
	}
	if (!h->spec.has_action)
		return 0;
	synth = f->find(f->userdata, a->synth, &index);
	if (!synth)
		return link_error(h, a->synth_off, d, "no synthetic event %s: expected one "
				  "declared with [Synthetic] Event= (or --synthetic)", a->synth);
	return link_action(h, synth, index, d);
}

int hist_link(struct hist_link_item *items, size_t n, const struct hist_synth_finder *f,
	      struct diag *d)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].h && items[i].h->is_trigger)
			items[i].h->trig.store = 0;
	for (size_t i = 0; i < n; i++) {
		int r;

		if (!items[i].h || !items[i].h->is_trigger)
			continue;
		r = link_one(items, n, items[i].h, f, d);
		if (r < 0)
			return r;
	}
	return 0;
}
