// SPDX-License-Identifier: GPL-2.0
/* One field resolver (kernel-events/field_source.c) for Filter= (and
 * --read --filter, which compiles the same bytecode) and Aggregate=: every
 * field of every event of this kernel, and the names that are not fields,
 * with their aliases, resolve to the same source for both, or are refused
 * by both. */
#include <errno.h>
#include "aggregate/hist.h"
#include "filter/filter.h"
#include "kernel-events/field_source.h"
#include "fixtures.h"
#include "test.h"

static const struct conf_pos pos = { .file = "t.conf", .line = 1, .col = 8 };

/* The names besides an event's own fields; aliases in one row. */
static const char *const common[][3] = {
	{ "common_pid", NULL, NULL },
	{ "common_type", NULL, NULL },
	{ "cpu", "CPU", "common_cpu" },
	{ "comm", "COMM", "common_comm" },
	{ "common_flags", NULL, NULL },
	{ "common_preempt_count", NULL, NULL },
	{ "no_such_field", NULL, NULL },
};

struct both {
	int filter_r, hist_r;
	struct filter_insn in;		/* the filter's compare */
	struct agg_key_src key;		/* the histogram's key */
	char msg[2][1024];
};

/* "name == 1" compiles for numbers and strings alike (an unquoted value
 * is a string for a string field, as in the kernel's filter). */
static void compile_both(const struct tp_event *e, const char *name, struct both *b)
{
	char expr[300];
	struct event_desc d = {};
	struct diag dg = {};
	struct hist *h = NULL;

	memset(b, 0, sizeof(*b));
	snprintf(expr, sizeof(expr), "%s == 1", name);
	b->filter_r = filter_compile(expr, e, &pos, &d, &dg);
	if (b->filter_r >= 0)
		b->in = d.insns[0];
	snprintf(b->msg[0], sizeof(b->msg[0]), "%s", dg.msg);
	memset(&dg, 0, sizeof(dg));
	snprintf(expr, sizeof(expr), "hist:keys=%s", name);
	b->hist_r = hist_compile(expr, e, &pos, &h, &dg);
	if (b->hist_r >= 0)
		b->key = h->desc.keys[0];
	snprintf(b->msg[1], sizeof(b->msg[1]), "%s", dg.msg);
	hist_free(h);
}

/* The same source, offset, and for numbers size and sign; a char array
 * the filter compares over its size, the key holds it and a NUL. */
static bool same_source(const struct both *b)
{
	const struct filter_insn *in = &b->in;
	const struct agg_key_src *k = &b->key;

	if (in->src != k->src || in->off != k->off)
		return false;
	if (in->src == SRC_RECORD)
		return in->size == k->size && in->is_signed == k->is_signed;
	if (in->src == SRC_STR)
		return in->imm + 1 == k->width;
	return true;
}

static void check_name(const struct tp_event *e, const char *name, const struct both *want,
		       size_t *n)
{
	struct both b;

	compile_both(e, name, &b);
	(*n)++;
	EXPECT((b.filter_r < 0) == (b.hist_r < 0), "%s:%s %s: filter %d '%s', hist %d '%s'",
	       e->system, e->name, name, b.filter_r, b.msg[0], b.hist_r, b.msg[1]);
	if (b.filter_r >= 0 && b.hist_r >= 0)
		EXPECT(same_source(&b), "%s:%s %s: filter src %u off %u size %u; key src %u off %u "
		       "size %u", e->system, e->name, name, b.in.src, b.in.off, b.in.size,
		       b.key.src, b.key.off, b.key.size);
	if (want)
		EXPECT(b.filter_r == want->filter_r && b.hist_r == want->hist_r &&
		       !memcmp(&b.in, &want->in, sizeof(b.in)) &&
		       !memcmp(&b.key, &want->key, sizeof(b.key)),
		       "%s:%s: alias %s resolves otherwise than %s", e->system, e->name, name,
		       "its first name");
}

static void every_name_of_every_event(void)
{
	size_t names = 0, events = 0;

	for (size_t i = 0; i < n_fixtures && !test_failed_now; i++) {
		_cleanup_(tp_event_freep) struct tp_event *e = fixture_event(fixtures[i].name);

		if (!e)
			continue;
		events++;
		for (size_t k = 0; k < e->n_fields; k++)
			if (!e->fields[k].is_common)
				check_name(e, e->fields[k].name, NULL, &names);
		for (size_t k = 0; k < ARRAY_SIZE(common); k++) {
			struct both first;

			/* An event's own field of that name comes first. */
			if (tp_event_field(e, common[k][0]) && !tp_event_field(e, common[k][0])->is_common)
				continue;
			compile_both(e, common[k][0], &first);
			check_name(e, common[k][0], NULL, &names);
			for (size_t a = 1; a < 3 && common[k][a]; a++)
				if (!tp_event_field(e, common[k][a]))
					check_name(e, common[k][a], &first, &names);
		}
	}
	printf("# %zu names of %zu events\n", names, events);
	EXPECT(events > 2000 && names > 20000, "only %zu names of %zu events", names, events);
}

/* What each name is, on one event: the resolver itself. */
static void sources(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = fixture_event("sched:sched_switch");
	static const struct {
		const char *name;
		int r;
		enum trace_src src;
		bool is_string;
	} want[] = {
		{ "prev_pid", 0, SRC_RECORD, false },
		{ "next_comm", 0, SRC_STR, true },
		{ "common_pid", 0, SRC_PID, false },
		{ "common_type", 0, SRC_RECORD, false },
		{ "CPU", 0, SRC_CPU, false },
		{ "common_cpu", 0, SRC_CPU, false },
		{ "COMM", 0, SRC_COMM, true },
		{ "common_comm", 0, SRC_COMM, true },
		{ "common_stacktrace", 0, SRC_STACKTRACE, false },
		{ "stacktrace", 0, SRC_STACKTRACE, false },
		{ "common_flags", -EPERM, 0, false },
		{ "nxt_pid", -ENOENT, 0, false },
	};

	EXPECT(e, "no sched_switch fixture");
	for (size_t i = 0; e && i < ARRAY_SIZE(want); i++) {
		struct field_source s;
		int r = field_source_resolve(e, want[i].name, &s);

		EXPECT(r == want[i].r && (r < 0 || (s.src == want[i].src &&
						   s.is_string == want[i].is_string)),
		       "%s: %d src %u", want[i].name, r, s.src);
	}
}

int main(void)
{
	fixtures_load();
	RUN(sources);
	RUN(every_name_of_every_event);
	fixtures_free();
	return TEST_EXIT();
}
