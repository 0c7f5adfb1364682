// SPDX-License-Identifier: GPL-2.0
/* A hist_spec compiled for one event: keys and values resolved against its
 * format, the key's byte layout (numbers take 8 bytes, as in the kernel's
 * compound key; strings their array's size and a NUL), and the agg_desc
 * that the class program builds keys and sums by. */
#include "hist.h"
#include "kernel-events/field_source.h"
#include "kernel-events/symbols.h"
#include "util.h"

struct hcomp {
	const struct filter_text *src;
	const struct tp_event *e;
	struct hist *h;
	unsigned key_off;
	uint32_t span;
};

/* The names a histogram offers beside the event's own: common_type is
 * the event's id, one key for all of a histogram's records. */
#define HIST_COMMON "common_pid, comm, cpu, common_stacktrace"

static int resolve(struct hcomp *c, const struct hist_fref *f, struct field_source *s)
{
	char why[1000];
	int r = field_source_resolve(c->e, f->name, s);

	if (r >= 0 || r == -EMEDIUMTYPE)
		return r;
	field_source_explain(c->e, f->name, r, HIST_COMMON, why, sizeof(why));
	return filter_error(c->src, f->off, "%s", why);
}

static void extend_span(struct hcomp *c, unsigned end)
{
	if (end > c->span)
		c->span = end;
}

/* A key's place in the key bytes: numbers take 8 as in the kernel's
 * compound key, a char array its size and a NUL, a __data_loc string
 * TRACERD_AGG_STR; common_pid.execname the comm beside the pid. */
static int resolve_key_field(struct hcomp *c, const struct hist_fref *f, struct hist_key *k,
			     struct agg_key_src *s)
{
	struct field_source fs;
	int r;

	if (!strcmp(f->name, "common_timestamp")) {	/* the program's clock, not a field */
		*s = (struct agg_key_src){ .src = SRC_TIMESTAMP, .width = 8 };
		return 0;
	}
	r = resolve(c, f, &fs);

	if (r == -EMEDIUMTYPE)
		return filter_error(c->src, f->off, "%s is %s, an array: a key is a number or a string",
				    fs.name, fs.type);
	if (r < 0)
		return r;
	k->field = fs.field;
	k->is_string = fs.is_string;
	k->is_signed = fs.is_signed;
	*s = (struct agg_key_src){ .src = fs.src, .off = fs.off };
	switch (fs.src) {
	case SRC_RECORD:
		s->size = fs.size;
		s->is_signed = fs.is_signed;
		s->width = 8;
		extend_span(c, fs.off + fs.size);
		break;
	case SRC_STR:
		s->width = fs.str_size + 1;	/* a full array and its NUL */
		extend_span(c, fs.off + fs.str_size);
		break;
	case SRC_DATA_LOC:
	case SRC_REL_LOC:
		s->width = TRACERD_AGG_STR;
		extend_span(c, fs.off + 4);	/* the loc word: the string is read from the event */
		break;
	case SRC_COMM:
		s->width = TRACERD_COMM_LEN;
		break;
	case SRC_STACKTRACE:
		/* Return addresses as bpf_get_stack() gives them, zeros after
		 * the last; hist_stack.c takes the tracing machinery's own off. */
		k->is_stack = true;
		s->width = TRACERD_HIST_STACK_FRAMES * 8;
		break;
	case SRC_CGROUP:
	case SRC_UNIT:
		k->src = fs.src;
		s->width = 8;
		break;
	case SRC_PID:
		if (f->mod == HM_EXECNAME)
			s->src = SRC_PID_COMM;
		s->width = f->mod == HM_EXECNAME ? 8 + TRACERD_COMM_LEN : 8;
		break;
	default:	/* cpu */
		s->width = 8;
	}
	return 0;
}

/* Which modifiers fit the key: numbers take them all but .execname, which
 * is common_pid's (the comm is kept in the key beside the pid). */
static int check_modifier(struct hcomp *c, const struct hist_fref *f, const struct hist_key *k,
			  const struct agg_key_src *s)
{
	if (f->mod == HM_NONE)
		return 0;
	if ((f->mod == HM_USECS) != (s->src == SRC_TIMESTAMP && f->mod == HM_USECS))
		return filter_error(c->src, f->mod_off, ".usecs applies to common_timestamp only");
	if (k->is_stack)
		return filter_error(c->src, f->mod_off, "%s takes no modifier: it prints as the "
				    "kernel's hist file prints it, a frame per line", f->name);
	if (s->src == SRC_CGROUP || s->src == SRC_UNIT)
		return filter_error(c->src, f->mod_off, "%s is printed by name: no .%s", f->name,
				    hist_mod_name(f->mod));
	if (k->is_string)
		return filter_error(c->src, f->mod_off, "%s is a string: .%s applies to numbers",
				    f->name, hist_mod_name(f->mod));
	if (f->mod == HM_EXECNAME && s->src != SRC_PID_COMM)
		return filter_error(c->src, f->mod_off, ".execname applies to common_pid only: "
				    "the comm is the current task's");
	return 0;
}

static int compile_key(struct hcomp *c, size_t i)
{
	const struct hist_fref *f = &c->h->spec.keys[i];
	struct hist_key *k = &c->h->keys[i];
	struct agg_key_src *s = &c->h->desc.keys[i];
	int r;

	*k = (struct hist_key){ .name = f->name, .mod = f->mod, .buckets = f->buckets };
	r = resolve_key_field(c, f, k, s);
	if (r < 0)
		return r;
	r = check_modifier(c, f, k, s);
	if (r < 0)
		return r;
	s->xform = f->mod == HM_LOG2 ? AGG_X_LOG2 : f->mod == HM_BUCKETS ? AGG_X_BUCKETS :
		   f->mod == HM_USECS ? AGG_X_USECS : AGG_X_NONE;
	s->buckets = f->buckets;
	s->key_off = k->key_off = c->key_off;
	k->width = s->width;
	c->key_off += (s->width + 7) & ~7u;
	if (c->key_off > TRACERD_AGG_LARGE)
		return filter_error(c->src, f->off, "the key is too large: more than %d bytes",
				    TRACERD_AGG_LARGE);
	if (k->field && f->mod == HM_NONE)
		k->tab = tp_event_symtab(c->e, k->field->name);
	return 0;
}

static int compile_val(struct hcomp *c, size_t i)
{
	const struct hist_fref *f = &c->h->spec.vals[i];
	struct agg_val_src *s = &c->h->desc.vals[i];
	struct field_source fs;
	int r;

	if (!strcmp(f->name, "common_timestamp")) {
		if (f->mod != HM_NONE && f->mod != HM_USECS)
			return filter_error(c->src, f->mod_off, ".%s does not apply to "
					    "common_timestamp: only .usecs does", hist_mod_name(f->mod));
		*s = (struct agg_val_src){ .ts = f->mod == HM_USECS ? AGG_X_USECS : 1 };
		c->h->vals[i] = (struct hist_val){ .name = f->name };
		return 0;
	}
	if (f->mod == HM_USECS)
		return filter_error(c->src, f->mod_off, ".usecs applies to common_timestamp only");
	r = resolve(c, f, &fs);

	if (r < 0 && r != -EMEDIUMTYPE)
		return r;
	if (r < 0 || fs.src != SRC_RECORD || !fs.field || fs.field->is_common)
		return filter_error(c->src, f->off, "%s is %s: vals= sums numeric fields of the event",
				    fs.name, fs.type);
	if (f->mod != HM_NONE && f->mod != HM_HEX)
		return filter_error(c->src, f->mod_off, ".%s does not apply to a value: only .hex does",
				    hist_mod_name(f->mod));
	*s = (struct agg_val_src){ .off = fs.off, .size = fs.size, .is_signed = fs.is_signed };
	c->h->vals[i] = (struct hist_val){ .name = f->name, .hex = f->mod == HM_HEX };
	extend_span(c, fs.off + fs.size);
	return 0;
}

/* sort= names hitcount, a key or a value, by its field name. */
static int compile_sort(struct hcomp *c)
{
	struct hist *h = c->h;

	h->n_sort = h->spec.n_sort ? h->spec.n_sort : 1;
	h->sort[0] = (struct hist_sort){ .kind = HS_HITCOUNT };
	for (size_t i = 0; i < h->spec.n_sort; i++) {
		const struct hist_sortref *r = &h->spec.sort[i];
		struct hist_sort *s = &h->sort[i];

		*s = (struct hist_sort){ .kind = HS_HITCOUNT, .descending = r->descending };
		if (!strcmp(r->name, "hitcount"))
			continue;
		for (s->idx = 0; s->idx < h->n_keys; s->idx++)
			if (!strcmp(h->keys[s->idx].name, r->name))
				break;
		s->kind = HS_KEY;
		if (s->idx < h->n_keys)
			continue;
		for (s->idx = 0; s->idx < h->n_vals; s->idx++)
			if (!strcmp(h->vals[s->idx].name, r->name))
				break;
		s->kind = HS_VAL;
		if (s->idx == h->n_vals)
			return filter_error(c->src, r->off, "cannot sort by '%s': it is neither "
					    "hitcount nor one of the keys and values", r->name);
	}
	return 0;
}

/* A key with __data_loc strings (TRACERD_AGG_STR bytes: the large map):
 * its compact layout, each part at short_off (a string in
 * TRACERD_AGG_STR_SHORT bytes), when that fits the small map; a key of
 * short strings is counted there. */
static void compact_layout(struct agg_desc *d)
{
	unsigned off = 0;
	bool strs = false;

	d->short_size = 0;
	if (d->map != AGG_MAP_LARGE || d->stack_ids)
		return;
	for (size_t i = 0; i < d->n_keys; i++) {
		struct agg_key_src *k = &d->keys[i];

		if (k->src == SRC_STACKTRACE)
			return;
		strs |= tracerd_agg_dyn_str(k->src);
		k->short_off = off;
		off += (tracerd_agg_short_width(k) + 7) & ~7u;
	}
	if (strs && off <= TRACERD_AGG_SMALL)
		d->short_size = off;
}

static void print_fref(const struct hist_fref *f, struct strbuf *out)
{
	sb_puts(out, f->name);
	if (f->mod != HM_NONE)
		sb_printf(out, ".%s", hist_mod_name(f->mod));
	if (f->mod == HM_BUCKETS)
		sb_printf(out, "=%llu", (unsigned long long)f->buckets);
}

static bool uses_timestamp(const struct hist *h)
{
	for (size_t i = 0; i < h->trig.n_vars; i++)
		for (size_t k = 0; k < h->trig.vars[i].n_terms; k++)
			if (h->trig.vars[i].terms[k].op.kind == HOP_TS ||
			    h->trig.vars[i].terms[k].op.kind == HOP_TS_USECS)
				return true;
	return false;
}

/* The trigger as the kernel prints it at the top of its hist file. */
static int trigger_text(struct hist *h)
{
	struct strbuf sb = { 0 };

	sb_puts(&sb, "hist:keys=");
	for (size_t i = 0; i < h->spec.n_keys; i++) {
		if (i)
			sb_putc(&sb, ',');
		if (h->keys[i].is_stack)	/* stacktrace too, as the kernel prints it */
			sb_puts(&sb, "common_stacktrace");
		else
			print_fref(&h->spec.keys[i], &sb);
	}
	sb_puts(&sb, ":vals=hitcount");
	for (size_t i = 0; i < h->spec.n_vals; i++) {
		sb_putc(&sb, ',');
		print_fref(&h->spec.vals[i], &sb);
	}
	for (size_t i = 0; i < h->spec.n_vars; i++)	/* as the kernel: after vals, one ':' */
		sb_printf(&sb, "%c%.*s", i ? ',' : ':', h->spec.vars[i].end - h->spec.vars[i].off,
			  h->expr + h->spec.vars[i].off);
	sb_puts(&sb, ":sort=");
	for (size_t i = 0; i < h->n_sort; i++)
		sb_printf(&sb, "%s%s%s", i ? "," : "",
			  h->sort[i].kind == HS_HITCOUNT ? "hitcount" : h->spec.sort[i].name,
			  h->sort[i].descending ? ".descending" : "");
	sb_printf(&sb, ":size=%u", h->spec.size);
	if (uses_timestamp(h))	/* bpf_ktime_get_ns(): the kernel's mono clock */
		sb_puts(&sb, ":clock=mono");
	if (h->spec.has_track)
		sb_printf(&sb, ":%.*s", h->spec.track.end - h->spec.track.start,
			  h->expr + h->spec.track.start);
	if (h->spec.has_action)
		sb_printf(&sb, ":%.*s", h->spec.action.end - h->spec.action.start,
			  h->expr + h->spec.action.start);
	if (sb.oom) {
		sb_free(&sb);
		return -ENOMEM;
	}
	h->trigger = sb.buf;
	return 0;
}

static int compile(struct hcomp *c)
{
	struct hist *h = c->h;
	int r;

	tp_event_load_symbols((struct tp_event *)c->e);
	h->n_keys = h->spec.n_keys;
	h->n_vals = h->spec.n_vals;
	for (size_t i = 0; i < h->n_keys; i++)
		if ((r = compile_key(c, i)) < 0)
			return r;
	for (size_t i = 0; i < h->n_vals; i++)
		if ((r = compile_val(c, i)) < 0)
			return r;
	r = compile_sort(c);
	if (r < 0)
		return r;
	h->desc.key_size = c->key_off;
	h->desc.map = tracerd_agg_map_of(c->key_off);
	/* The stack alone: by its id where the id map gives one. */
	h->desc.stack_ids = h->n_keys == 1 && h->keys[0].is_stack;
	h->desc.max_entries = h->spec.size;
	h->desc.n_keys = h->n_keys;
	h->desc.n_vals = h->n_vals;
	compact_layout(&h->desc);
	r = hist_trigger_compile(c->src, h, &c->span);
	if (r < 0)
		return r;
	h->span = c->span > 8 ? c->span : 8;
	return trigger_text(h);
}

int hist_compile(const char *expr, const struct tp_event *e, const struct conf_pos *pos,
		 struct hist **ret, struct diag *d)
{
	struct filter_text src = { .expr = expr, .pos = pos, .d = d };
	struct hist *h = calloc(1, sizeof(*h));
	struct hcomp c = { .src = &src, .e = e, .h = h };
	int r;

	*ret = NULL;
	if (!h)
		return -ENOMEM;
	h->e = e;
	h->expr = strdup(expr);
	if (pos)
		h->pos = *pos;
	r = h->expr ? hist_parse(&src, &h->spec) : -ENOMEM;
	if (r >= 0)
		r = compile(&c);
	if (r < 0) {
		hist_free(h);
		return r;
	}
	*ret = h;
	return 0;
}

void hist_free(struct hist *h)
{
	if (!h)
		return;
	hist_spec_done(&h->spec);
	free(h->expr);
	free(h->trigger);
	free(h);
}

uint32_t hist_record_span(const struct hist *h, const struct event_desc *d)
{
	if (!h->span || (d->n_insns && !d->filter_span))
		return 0;
	return h->span > d->filter_span ? h->span : d->filter_span;
}
