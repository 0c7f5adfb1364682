// SPDX-License-Identifier: GPL-2.0
/* Inter-event hist triggers (Documentation/trace/histogram.rst, "Inter-event
 * hist triggers"): variables and the onmatch() action, parsed and compiled
 * for one event into a struct hist_trigger, which bpf/hist_trigger.bpf.h
 * runs. References to other triggers' variables are named here and bound to
 * their slots by hist_link.c, once every selection is built.
 *
 *   VAR=EXPR[,VAR=EXPR...]
 *   EXPR:  [-]TERM [(+|-) TERM]...        at most TRACERD_HIST_TERMS terms
 *   TERM:  OPERAND [(*|/) NUMBER]... or NUMBER [* OPERAND]
 *   OPERAND: FIELD | common_timestamp[.usecs] | $VAR | NUMBER
 *   onmatch(SYS.EVENT).SYNTH(PARAM,...)  or  onmatch(SYS.EVENT).trace(SYNTH,PARAM,...)
 *   PARAM: $VAR | FIELD
 *   onmax($VAR).save(FIELD,...)  or  onchange($VAR).save(FIELD,...)
 *
 * The kernel's arithmetic is u64; so is this. A term multiplies before it
 * divides; "/" takes a number only, as in the kernel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist_priv.h"
#include "kernel-events/field_source.h"
#include "util.h"

static void opnd_done(struct hist_opnd_spec *o)
{
	free(o->name);
	o->name = NULL;
}

void hist_vars_done(struct hist_spec *spec)
{
	for (size_t i = 0; i < spec->n_vars; i++) {
		free(spec->vars[i].name);
		for (size_t k = 0; k < spec->vars[i].n_terms; k++)
			opnd_done(&spec->vars[i].terms[k].op);
	}
	free(spec->action.sys);
	free(spec->action.event);
	free(spec->action.synth);
	for (size_t i = 0; i < spec->action.n_params; i++)
		opnd_done(&spec->action.params[i]);
	free(spec->track.var);
	for (size_t i = 0; i < spec->track.n_saves; i++)
		opnd_done(&spec->track.saves[i]);
}

static int parse_number(struct hparser *p, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(p->s + p->i, &end, 0);
	if (errno || end == p->s + p->i)
		return filter_error(p->src, p->i, "expected a number");
	p->i = end - p->s;
	return 0;
}

/* FIELD, common_timestamp[.usecs], $VAR or a number. */
static int parse_operand(struct hparser *p, struct hist_opnd_spec *o, bool param)
{
	*o = (struct hist_opnd_spec){ .off = p->i };
	if (isdigit((unsigned char)p->s[p->i]))
		return param ? filter_error(p->src, p->i, "expected a variable ($name) or a field")
			     : parse_number(p, &o->value);
	if (p->s[p->i] == '$') {
		o->is_var = true;
		p->i++;
	}
	if (hist_parse_name(p, &o->name, &o->off, o->is_var ? "a variable's name after '$'" :
			    "a field, common_timestamp, $variable or number") < 0)
		return -EINVAL;
	if (o->is_var)
		o->off--;
	if (p->s[p->i] != '.')
		return 0;
	if (!strcmp(o->name, "common_timestamp") && !strncmp(p->s + p->i, ".usecs", 6) &&
	    !hist_is_word(p->s[p->i + 6])) {
		o->usecs = true;
		p->i += 6;
		return 0;
	}
	return filter_error(p->src, p->i + 1, "expected no modifier here but .usecs of "
			    "common_timestamp");
}

/* OPERAND [* N | / N]..., or N * OPERAND. */
static int parse_term(struct hparser *p, struct hist_term_spec *t)
{
	bool divided = false;
	int r = parse_operand(p, &t->op, false);

	t->mul = 1;
	while (r >= 0 && (p->s[p->i] == '*' || p->s[p->i] == '/')) {
		char op = p->s[p->i++];
		uint64_t v;

		if (op == '*' && !t->op.name && !divided) {	/* N * OPERAND */
			t->mul *= t->op.value;
			r = parse_operand(p, &t->op, false);
			continue;
		}
		if (op == '*' && divided)
			return filter_error(p->src, p->i - 1, "expected '*' before '/': a term "
					    "multiplies, then divides");
		r = parse_number(p, &v);
		if (r < 0)
			return filter_error(p->src, p->i, "expected a number after '%c': %s by a "
					    "constant only", op, op == '*' ? "multiply" : "divide");
		if (op == '/' && !v)
			return filter_error(p->src, p->i - 1, "division by zero");
		if (op == '*')
			t->mul *= v;
		else
			t->div = (t->div ? t->div : 1) * v, divided = true;
	}
	if (r >= 0 && !t->op.name) {	/* a number alone */
		t->mul *= t->op.value;
		t->op.value = 1;
	}
	return r;
}

static int parse_expr(struct hparser *p, struct hist_var_spec *v)
{
	bool neg = false;

	if (p->s[p->i] == '-')
		neg = true, p->i++;
	for (;;) {
		struct hist_term_spec *t;
		int r;

		if (v->n_terms == TRACERD_HIST_TERMS)
			return filter_error(p->src, p->i, "too many terms: at most %d",
					    TRACERD_HIST_TERMS);
		t = &v->terms[v->n_terms++];
		r = parse_term(p, t);
		if (r < 0)
			return r;
		t->neg = neg;
		if (p->s[p->i] != '+' && p->s[p->i] != '-')
			return 0;
		neg = p->s[p->i++] == '-';
	}
}

int hist_parse_vars(struct hparser *p, struct hist_spec *spec, char *name, int name_off)
{
	for (;;) {
		struct hist_var_spec *v;
		int r;

		for (size_t i = 0; i < spec->n_vars; i++)
			if (!strcmp(spec->vars[i].name, name)) {
				free(name);
				return filter_error(p->src, name_off, "variable '%s' defined twice",
						    spec->vars[i].name);
			}
		if (spec->n_vars == TRACERD_HIST_VARS) {
			free(name);
			return filter_error(p->src, name_off, "too many variables: at most %d",
					    TRACERD_HIST_VARS);
		}
		v = &spec->vars[spec->n_vars++];
		*v = (struct hist_var_spec){ .name = name, .off = name_off };
		r = parse_expr(p, v);
		v->end = p->i;
		if (r < 0 || p->s[p->i] != ',')
			return r;
		p->i++;
		r = hist_parse_name(p, &name, &name_off, "a variable's name");
		if (r < 0)
			return r;
		if (p->s[p->i] != '=') {
			free(name);
			return filter_error(p->src, p->i, "expected '=' after a variable's name");
		}
		p->i++;
	}
}

static int expect(struct hparser *p, char c, const char *what)
{
	if (p->s[p->i] != c)
		return filter_error(p->src, p->i, "expected %s", what);
	p->i++;
	return 0;
}

static int parse_params(struct hparser *p, struct hist_action_spec *a)
{
	a->params_off = p->i;
	if (p->s[p->i] == ')')
		return 0;
	do {
		int r;

		if (a->n_params == TRACERD_SYNTH_PARAMS)
			return filter_error(p->src, p->i, "too many params: at most %d",
					    TRACERD_SYNTH_PARAMS);
		r = parse_operand(p, &a->params[a->n_params++], true);
		if (r < 0)
			return r;
	} while (p->s[p->i] == ',' && ++p->i);
	return 0;
}

/* onmatch(SYS.EVENT).SYNTH(PARAMS) or .trace(SYNTH,PARAMS) */
int hist_parse_onmatch(struct hparser *p, struct hist_spec *spec, int start)
{
	struct hist_action_spec *a = &spec->action;
	char *action = NULL;
	int off = 0, r;

	if (spec->has_action)
		return filter_error(p->src, start, "one action per trigger: onmatch() given twice");
	spec->has_action = true;
	if ((r = expect(p, '(', "'(' after onmatch")) < 0 ||
	    (r = hist_parse_name(p, &a->sys, &a->event_off, "SYSTEM.EVENT: the event whose "
				 "variables the action reads")) < 0 ||
	    (r = expect(p, '.', "'.' between the system and the event")) < 0 ||
	    (r = hist_parse_name(p, &a->event, &off, "the event's name")) < 0 ||
	    (r = expect(p, ')', "')' after the event")) < 0 ||
	    (r = expect(p, '.', "'.' and an action: .SYNTH(params) or .trace(SYNTH,params)")) < 0)
		return r;
	r = hist_parse_name(p, &action, &off, "an action: a synthetic event's name or trace");
	if (r < 0)
		return r;
	if (!strcmp(action, "save") || !strcmp(action, "snapshot")) {
		free(action);
		return filter_error(p->src, off, "onmatch().%s() is not supported: the synthetic "
				    "event's action (.NAME(params) or .trace(NAME,params)) is",
				    p->s[off] == 's' && p->s[off + 1] == 'a' ? "save" : "snapshot");
	}
	if ((r = expect(p, '(', "'(' and the action's params")) < 0) {
		free(action);
		return r;
	}
	if (strcmp(action, "trace")) {
		a->synth = action;
		a->synth_off = off;
	} else {
		free(action);
		r = hist_parse_name(p, &a->synth, &a->synth_off, "the synthetic event's name");
		if (r < 0)
			return r;
		if (p->s[p->i] == ',')
			p->i++;
		else if (p->s[p->i] != ')')
			return filter_error(p->src, p->i, "expected ',' and the params, or ')'");
	}
	a->start = start;
	r = parse_params(p, a);
	if (r >= 0)
		r = expect(p, ')', "',' or ')' after a param");
	a->end = p->i;
	return r;
}

/* onmax($VAR).save(FIELD,...) or onchange($VAR).save(FIELD,...), or
 * .snapshot() instead of .save() */
int hist_parse_ontrack(struct hparser *p, struct hist_spec *spec, int start, int kind)
{
	struct hist_track_spec *t = &spec->track;
	const char *what = kind == TRACK_MAX ? "onmax" : "onchange";
	char *action = NULL;
	int off = 0, r;

	if (spec->has_track)
		return filter_error(p->src, start, "one onmax() or onchange() per trigger");
	spec->has_track = true;
	t->kind = kind;
	if ((r = expect(p, '(', "'(' and the variable to track")) < 0)
		return r;
	if (p->s[p->i] != '$')
		return filter_error(p->src, p->i, "expected a variable of this trigger: %s($name)",
				    what);
	p->i++;
	if ((r = hist_parse_name(p, &t->var, &t->var_off, "a variable's name")) < 0 ||
	    (r = expect(p, ')', "')' after the variable")) < 0 ||
	    (r = expect(p, '.', "'.' and an action: .save(fields)")) < 0)
		return r;
	t->var_off--;
	r = hist_parse_name(p, &action, &off, "an action: save(fields) or snapshot()");
	if (r < 0)
		return r;
	t->snapshot = !strcmp(action, "snapshot");
	r = t->snapshot ? 0 : strcmp(action, "save");
	free(action);
	if (r)
		return filter_error(p->src, off, "%s().%.*s() is not supported: .save(fields) "
				    "and .snapshot() are", what, p->i - off, p->s + off);
	if (t->snapshot) {	/* the recorder's window (tracer.c asks it) */
		t->start = start;
		if ((r = expect(p, '(', "'()' after snapshot")) < 0 ||
		    (r = expect(p, ')', "')': snapshot() takes nothing")) < 0)
			return r;
		t->end = p->i;
		return 0;
	}
	if ((r = expect(p, '(', "'(' and the fields to save")) < 0)
		return r;
	do {
		if (t->n_saves == TRACERD_TRACK_SAVES)
			return filter_error(p->src, p->i, "too many fields to save: at most %d",
					    TRACERD_TRACK_SAVES);
		r = parse_operand(p, &t->saves[t->n_saves++], true);
		if (r < 0)
			return r;
	} while (p->s[p->i] == ',' && ++p->i);
	t->start = start;
	r = expect(p, ')', "',' or ')' after a field");
	t->end = p->i;
	return r;
}
