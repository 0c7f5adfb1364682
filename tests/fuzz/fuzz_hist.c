// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the Aggregate= parser and compiler, against real event formats.
 * Input: 2 bytes choose the event, the rest is the hist trigger. The
 * compiler either gives an agg_desc the BPF side can run (keys inside the key
 * buffer, offsets inside the record) or fails with a diagnostic; what
 * compiles also formats an all-zero entry; an inter-event trigger's
 * variables, references, params and saves stay inside what BPF indexes. */
#include <stdint.h>
#include "aggregate/hist.h"
#include "fixtures.h"

static void check_operand(const struct hist_operand *o, unsigned n_own, unsigned n_refs)
{
	if ((o->kind == HOP_VAR && o->idx >= n_own) || (o->kind == HOP_REF && o->idx >= n_refs) ||
	    (o->kind == HOP_FIELD && o->off + o->size > TRACERD_MAX_RECORD) ||
	    (o->kind == HOP_STR && (!o->size || o->off >= TRACERD_MAX_RECORD)))
		__builtin_trap();
}

static void check_trigger(const struct hist *h)
{
	const struct hist_trigger *t = &h->trig;

	if (!h->is_trigger)
		return;
	if (t->n_vars > TRACERD_HIST_VARS || t->n_refs > TRACERD_HIST_VARS ||
	    t->n_params > TRACERD_SYNTH_PARAMS || t->n_saves > TRACERD_TRACK_SAVES ||
	    h->desc.key_size > TRACERD_VAR_KEY || (t->track && t->track_var >= t->n_vars))
		__builtin_trap();
	for (unsigned i = 0; i < t->n_vars; i++) {
		if (!t->vars[i].n_terms || t->vars[i].n_terms > TRACERD_HIST_TERMS)
			__builtin_trap();
		for (unsigned k = 0; k < t->vars[i].n_terms; k++)
			check_operand(&t->vars[i].terms[k].op, i, t->n_refs);
	}
	for (unsigned i = 0; i < t->n_params; i++)
		check_operand(&t->params[i].src, t->n_vars, t->n_refs);
	for (unsigned i = 0; i < t->n_saves; i++) {
		check_operand(&t->saves[i].src, t->n_vars, t->n_refs);
		if (t->saves[i].off + TRACERD_TRACK_CELL > TRACERD_TRACK_BYTES ||
		    t->saves[i].src.size >= TRACERD_TRACK_CELL)
			__builtin_trap();
	}
}

static void check(const struct hist *h)
{
	static const uint8_t zero[TRACERD_AGG_LARGE];
	const struct agg_desc *a = &h->desc;
	struct hist_entry e = { .key = zero, .hitcount = 1 };
	struct strbuf sb = { 0 };

	if (a->n_keys < 1 || a->n_keys > TRACERD_AGG_KEYS || a->n_vals > TRACERD_AGG_VALS ||
	    a->key_size > TRACERD_AGG_LARGE || a->map != tracerd_agg_map_of(a->key_size) ||
	    a->max_entries < 128 || a->max_entries > 131072)
		__builtin_trap();
	for (unsigned i = 0; i < a->n_keys; i++)
		if (a->keys[i].key_off + a->keys[i].width > a->key_size ||
		    a->keys[i].off + a->keys[i].size > TRACERD_MAX_RECORD)
			__builtin_trap();
	for (unsigned i = 0; i < a->n_vals; i++)
		if (a->vals[i].off + a->vals[i].size > TRACERD_MAX_RECORD)
			__builtin_trap();
	check_trigger(h);
	hist_format(h, &e, 1, 0, &(struct hist_format_opts){ 0 }, &sb);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf_pos pos = { .file = (char *)"fuzz.conf", .line = 1, .col = 11 };
	_cleanup_free_ char *expr = NULL;
	struct diag d = { 0 };
	struct hist *h = NULL;
	struct tp_event *e;
	int r;

	fx_load();
	if (size < 2 || !fx_n)
		return 0;
	e = fx_events[(data[0] | data[1] << 8) % fx_n];
	expr = malloc(size - 1);
	if (!expr)
		return 0;
	memcpy(expr, data + 2, size - 2);
	expr[size - 2] = 0;
	r = hist_compile(expr, e, &pos, &h, &d);
	if (r < 0) {
		if (r == -EINVAL && !d.msg[0])
			__builtin_trap();
		return 0;
	}
	check(h);
	hist_free(h);
	return 0;
}
