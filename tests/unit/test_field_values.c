// SPDX-License-Identifier: GPL-2.0
/* The structured value of a flag or symbolic field (the journal's
 * TRACE_<FIELD>=) is what the line (MESSAGE=) shows for it, ternaries,
 * masks and neighbouring conversions of the same field applied, and
 * TRACE_<FIELD>_RAW= is the field's number. Checked on sched_switch's
 * prev_state by hand, then on every captured format with such a field,
 * over values from its table, combinations, zero and noise. */
#include <stdlib.h>
#include "render/render_priv.h"
#include "fixtures.h"
#include "test.h"
#include "util.h"

static const struct render_opts raw_ptrs = { .raw_pointers = true };

struct got {
	const struct tp_field *want;
	char value[4096], raw[64];
	bool seen;
};

static void take(void *ctx, const struct tp_field *f, const char *value, const char *raw)
{
	struct got *g = ctx;

	if (f != g->want)
		return;
	g->seen = true;
	snprintf(g->value, sizeof(g->value), "%s", value);
	snprintf(g->raw, sizeof(g->raw), "%s", raw ? raw : "(none)");
}

static struct tp_event *prepared(size_t i)
{
	struct tp_event *e = fixture_parse(i);

	if (!e)
		return NULL;
	if (render_prepare(e) < 0) {
		tp_event_free(e);
		return NULL;
	}
	return e;
}

static void drop(struct tp_event *e)
{
	render_release(e);
	tp_event_free(e);
}

static void value_of(const struct tp_event *e, const struct tp_field *f, const uint8_t *rec,
		     size_t len, struct got *g)
{
	memset(g, 0, sizeof(*g));
	g->want = f;
	render_fields(e, &raw_ptrs, rec, len, take, g);
}

static void sched_switch_prev_state(void)
{
	static const struct { uint64_t state; const char *line, *value, *raw; } cases[] = {
		{ 0, "prev_state=R ==>", "R", "0" },
		{ 0x100, "prev_state=R+ ==>", "R+", "256" },	/* preempted */
		{ 1, "prev_state=S ==>", "S", "1" },
		{ 2, "prev_state=D ==>", "D", "2" },
		{ 0x102, "prev_state=D+ ==>", "D+", "258" },
		{ 0x3, "prev_state=S|D ==>", "S|D", "3" },
	};
	size_t i;
	struct tp_event *e = NULL;
	const struct tp_field *f;
	struct strbuf line = { 0 };
	uint8_t rec[512] = { 0 };
	struct got g;

	for (i = 0; i < n_fixtures && strcmp(fixtures[i].name, "sched:sched_switch"); i++)
		;
	if (i < n_fixtures)
		e = prepared(i);
	f = e ? tp_event_field(e, "prev_state") : NULL;
	EXPECT(f, "sched:sched_switch with prev_state");
	if (!f) {
		if (e)
			drop(e);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memcpy(rec + f->offset, &cases[i].state, f->size);
		sb_reset(&line);
		render_event(e, &raw_ptrs, rec, e->fixed_size, &line);
		value_of(e, f, rec, e->fixed_size, &g);
		EXPECT(strstr(sb_str(&line), cases[i].line), "line '%s' lacks '%s'", sb_str(&line),
		       cases[i].line);
		EXPECT_STREQ(g.value, cases[i].value);
		EXPECT_STREQ(g.raw, cases[i].raw);
	}
	sb_free(&line);
	drop(e);
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Whether line has lit_before, spaces, value, spaces, then lit_after (or
 * its end): the value is the line's own text for that conversion. */
static bool shown_in(const char *line, const char *before, const char *value, const char *after,
		     bool at_end)
{
	for (const char *p = strstr(line, before); p; p = *p ? strstr(p + 1, before) : NULL) {
		const char *q = p + strlen(before);

		while (*q == ' ' && strncmp(q, value, strlen(value)))
			q++;
		if (strncmp(q, value, strlen(value)))
			continue;
		q += strlen(value);
		while (*q == ' ' && (at_end || strncmp(q, after, strlen(after))))
			q++;
		if (at_end ? !*q : !strncmp(q, after, strlen(after)))
			return true;
	}
	return false;
}

/* Values worth trying for a field with table t. */
static size_t candidates(const struct tp_symtab *t, uint64_t *seed, uint64_t *v, size_t max)
{
	size_t n = 0;

	v[n++] = 0;
	v[n++] = rng(seed);
	for (size_t i = 0; i < t->n && n + 3 < max; i++) {
		uint64_t other = t->syms[rng(seed) % t->n].value;

		v[n++] = t->syms[i].value;
		v[n++] = t->syms[i].value | other;
		v[n++] = t->syms[i].value | (rng(seed) & 0xff00);
	}
	return n;
}

/* Fills the fixed part with noise, __data_loc words left empty. */
static void noise(const struct tp_event *e, uint64_t *seed, uint8_t *rec)
{
	for (size_t k = 8; k < e->fixed_size; k++)
		rec[k] = rng(seed);
	for (size_t k = 0; k < e->n_fields; k++)
		if (e->fields[k].kind == TP_FIELD_DATA_LOC || e->fields[k].kind == TP_FIELD_REL_LOC)
			memset(rec + e->fields[k].offset, 0, 4);
}

struct tally {
	size_t events, fields, values, bad;
};

static void check_field(const struct tp_event *e, const struct rspan *s, uint64_t *seed,
			struct tally *n)
{
	const struct rprog *p = e->render;
	const struct tp_field *f = s->field;
	const char *before = p->segs[s->first].lit ? p->segs[s->first].lit : "";
	bool at_end = s->last + 1 == p->n_segs;
	const char *after = !at_end && p->segs[s->last + 1].lit ? p->segs[s->last + 1].lit : "";
	uint64_t v[256];
	size_t nv = candidates(tp_event_symtab(e, f->name), seed, v, ARRAY_SIZE(v));
	uint8_t rec[4096] = { 0 };
	struct strbuf line = { 0 }, raw = { 0 };
	struct got g;

	n->fields++;
	for (size_t i = 0; i < nv && e->fixed_size <= sizeof(rec); i++) {
		noise(e, seed, rec);
		memcpy(rec + f->offset, &v[i], f->size < 8 ? f->size : 8);
		sb_reset(&line);
		sb_reset(&raw);
		render_event(e, &raw_ptrs, rec, e->fixed_size, &line);
		render_field_plain(f, rec, e->fixed_size, true, &raw);
		value_of(e, f, rec, e->fixed_size, &g);
		n->values++;
		if (g.seen && shown_in(sb_str(&line), before, g.value, after, at_end) &&
		    !strcmp(g.raw, sb_str(&raw)))
			continue;
		if (n->bad++ < 10)
			EXPECT(0, "%s:%s %s=0x%llx: value '%s' raw '%s', line '%s'", e->system,
			       e->name, f->name, (unsigned long long)v[i], g.value, g.raw,
			       sb_str(&line));
	}
	sb_free(&line);
	sb_free(&raw);
}

static void every_captured_format(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct tally n = { 0 };

	for (size_t i = 0; i < n_fixtures; i++) {
		struct tp_event *e = prepared(i);
		const struct rprog *p = e ? e->render : NULL;

		if (!p || p->mode != RM_COMPILED || !p->n_spans) {
			if (e)
				drop(e);
			continue;
		}
		n.events++;
		for (size_t k = 0; k < p->n_spans; k++)
			check_field(e, &p->spans[k], &seed, &n);
		drop(e);
	}
	printf("# %zu events, %zu flag or symbolic fields, %zu values: %zu differ from the line\n",
	       n.events, n.fields, n.values, n.bad);
	EXPECT(n.bad == 0, "%zu values differ", n.bad);
	/* 884 such fields on this kernel, 5 in print fmts that do not compile. */
	EXPECT(n.fields >= 850, "only %zu fields checked", n.fields);
}

int main(void)
{
	fixtures_load();
	RUN(sched_switch_prev_state);
	RUN(every_captured_format);
	fixtures_free();
	return TEST_EXIT();
}
