// SPDX-License-Identifier: GPL-2.0
/* A trigger's variables and onmatch() params (hist_vars.c parsed them)
 * compiled for its event into the struct hist_trigger that bpf/
 * hist_trigger.bpf.h runs: each operand to where its value comes from. A
 * $name that is none of the trigger's own variables is a reference, bound
 * to the trigger that sets it by hist_link.c. */
#include "hist.h"
#include "kernel-events/field_source.h"
#include "util.h"

struct tcomp {
	const struct filter_text *src;
	struct hist *h;
	uint32_t *span;
};

static void extend(struct tcomp *c, unsigned end)
{
	if (end > *c->span)
		*c->span = end;
}

/* $name: the trigger's own variable, one defined before (n_own), or a
 * reference to another trigger's. */
static int compile_var(struct tcomp *c, const struct hist_opnd_spec *o, size_t n_own,
		       struct hist_operand *out)
{
	struct hist *h = c->h;
	size_t i;

	for (i = 0; i < h->spec.n_vars; i++) {
		if (strcmp(h->spec.vars[i].name, o->name))
			continue;
		if (i >= n_own)
			return filter_error(c->src, o->off, "$%s is defined %s: a variable may use "
					    "only those defined before it", o->name,
					    i == n_own ? "by this very expression" : "after it");
		*out = (struct hist_operand){ .kind = HOP_VAR, .idx = i };
		return 0;
	}
	for (i = 0; i < h->trig.n_refs; i++)
		if (!strcmp(h->refs[i]->name, o->name))
			break;
	if (i == TRACERD_HIST_VARS)
		return filter_error(c->src, o->off, "too many references to other triggers' "
				    "variables: at most %d", TRACERD_HIST_VARS);
	if (i == h->trig.n_refs)
		h->refs[h->trig.n_refs++] = o;
	*out = (struct hist_operand){ .kind = HOP_REF, .idx = i };
	return 0;
}

static int compile_field(struct tcomp *c, const struct hist_opnd_spec *o, bool param,
			 struct hist_operand *out)
{
	struct field_source fs;
	char why[1000];
	int r = field_source_resolve(c->h->e, o->name, &fs);

	if (r < 0 && r != -EMEDIUMTYPE) {
		field_source_explain(c->h->e, o->name, r, "common_pid, cpu, comm, common_timestamp",
				     why, sizeof(why));
		return filter_error(c->src, o->off, "%s", why);
	}
	switch (r < 0 ? -1 : (int)fs.src) {
	case SRC_RECORD:
		*out = (struct hist_operand){ .kind = HOP_FIELD, .off = fs.off, .size = fs.size,
					      .is_signed = fs.is_signed };
		extend(c, fs.off + fs.size);
		return 0;
	case SRC_PID:
		*out = (struct hist_operand){ .kind = HOP_PID };
		return 0;
	case SRC_CPU:
		*out = (struct hist_operand){ .kind = HOP_CPU };
		return 0;
	case SRC_STR:
		if (!param)
			break;
		*out = (struct hist_operand){ .kind = HOP_STR, .off = fs.off,
					      .size = fs.str_size < TRACERD_SYNTH_STR ? fs.str_size :
						      TRACERD_SYNTH_STR - 1 };
		extend(c, fs.off + fs.str_size);
		return 0;
	case SRC_COMM:
		if (!param)
			break;
		*out = (struct hist_operand){ .kind = HOP_COMM };
		return 0;
	}
	return filter_error(c->src, o->off, "%s is %s: %s", fs.name, fs.type, param ?
			    "a param is a number, a char array or a variable" :
			    "an expression takes numbers");
}

static int compile_operand(struct tcomp *c, const struct hist_opnd_spec *o, size_t n_own,
			   bool param, struct hist_operand *out)
{
	if (!o->name) {
		*out = (struct hist_operand){ .kind = HOP_CONST };
		return 0;
	}
	if (o->is_var)
		return compile_var(c, o, n_own, out);
	if (!strcmp(o->name, "common_timestamp")) {
		*out = (struct hist_operand){ .kind = o->usecs ? HOP_TS_USECS : HOP_TS };
		return 0;
	}
	return compile_field(c, o, param, out);
}

/* onmax()/onchange(): the trigger's own variable, and the fields saved
 * with it, each in its cell (a string cut to the cell, NUL-ended). */
static int compile_track(struct tcomp *c)
{
	const struct hist_track_spec *s = &c->h->spec.track;
	struct hist_trigger *t = &c->h->trig;
	size_t v;

	for (v = 0; v < c->h->spec.n_vars; v++)
		if (!strcmp(c->h->spec.vars[v].name, s->var))
			break;
	if (v == c->h->spec.n_vars)
		return filter_error(c->src, s->var_off, "$%s is not a variable of this trigger: "
				    "%s() tracks one (NAME=EXPR)", s->var,
				    s->kind == TRACK_MAX ? "onmax" : "onchange");
	t->track = s->kind;
	t->track_var = v;
	t->snapshot = s->snapshot;
	t->n_saves = s->n_saves;
	for (size_t i = 0; i < s->n_saves; i++) {
		struct synth_param *p = &t->saves[i];
		int r = compile_operand(c, &s->saves[i], c->h->spec.n_vars, true, &p->src);

		if (r < 0)
			return r;
		p->off = i * TRACERD_TRACK_CELL;
		p->size = 8;
		if (p->src.kind == HOP_STR && p->src.size > TRACERD_TRACK_CELL - 1)
			p->src.size = TRACERD_TRACK_CELL - 1;
	}
	return 0;
}

/* The variables' entries are keyed by the histogram's key, in the small
 * map's layout: numbers and char arrays that fit TRACERD_VAR_KEY bytes. */
static int check_key(struct tcomp *c)
{
	const struct hist *h = c->h;

	for (size_t i = 0; i < h->n_keys; i++)
		if (h->keys[i].is_stack || tracerd_agg_dyn_str(h->desc.keys[i].src))
			return filter_error(c->src, h->spec.keys[i].off, "a trigger with variables "
					    "or an action takes keys of numbers and char arrays: "
					    "%s is not one", h->spec.keys[i].name);
	if (h->desc.key_size > TRACERD_VAR_KEY)
		return filter_error(c->src, h->spec.keys[0].off, "a trigger with variables or an "
				    "action takes keys of up to %d bytes: these take %u",
				    TRACERD_VAR_KEY, h->desc.key_size);
	return 0;
}

int hist_trigger_compile(const struct filter_text *src, struct hist *h, uint32_t *span)
{
	struct tcomp c = { .src = src, .h = h, .span = span };
	struct hist_trigger *t = &h->trig;
	int r;

	if (!h->spec.n_vars && !h->spec.has_action && !h->spec.has_track)
		return 0;
	h->is_trigger = true;
	h->desc.trigger = 1;
	r = check_key(&c);
	if (r < 0)
		return r;
	t->n_vars = h->spec.n_vars;
	for (size_t i = 0; i < h->spec.n_vars; i++) {
		const struct hist_var_spec *v = &h->spec.vars[i];

		t->vars[i].n_terms = v->n_terms;
		for (size_t k = 0; k < v->n_terms; k++) {
			struct hist_term *tm = &t->vars[i].terms[k];

			r = compile_operand(&c, &v->terms[k].op, i, false, &tm->op);
			if (r < 0)
				return r;
			tm->neg = v->terms[k].neg;
			tm->mul = v->terms[k].mul;
			tm->div = v->terms[k].div;
		}
	}
	/* Params: their layout comes with the synthetic event (hist_link.c). */
	t->n_params = h->spec.action.n_params;
	for (size_t i = 0; i < t->n_params; i++) {
		r = compile_operand(&c, &h->spec.action.params[i], h->spec.n_vars, true,
				    &t->params[i].src);
		if (r < 0)
			return r;
	}
	return h->spec.has_track ? compile_track(&c) : 0;
}
