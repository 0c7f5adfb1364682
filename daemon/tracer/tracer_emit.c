// SPDX-License-Identifier: GPL-2.0
/* Which selections run as emitted BPF programs (filter/filter_emit.c), and
 * which the shared class program runs (its interpreter for a Filter=), with
 * the reason: per selection, so that all events of one selection decide
 * alike. A selection without a Filter= is emitted too: its program keeps
 * every event and writes the record itself (of fixed size, or with
 * __data_loc strings), where the class program would look up the event's
 * descriptor and copy the record twice.
 * Events whose emitted code is the same (a class's events; any that read
 * only common_pid, cpu or comm) share one loaded program. */
#include "aggregate/hist.h"
#include "clock.h"
#include "knobs.h"
#include "log.h"
#include "tracer.h"
#include "util.h"

void sel_emit_free(struct sel_emit *se)
{
	for (size_t i = 0; se->code && i < se->n; i++)
		free(se->code[i]);
	free(se->code);
	free(se->n_code);
	free(se->fd);
	se->code = NULL;
	se->n_code = NULL;
	se->fd = NULL;
}

/* TRACERD_TEST_INTERPRET: selection names, comma-separated ("*": all),
 * whose filters the interpreter runs: one side of the differential test. */
static bool forced_interpreted(const char *name)
{
	const char *k = knob_str(KNOB_TEST_INTERPRET), *p;
	size_t n = strlen(name);

	if (!k)
		return false;
	if (!strcmp(k, "*"))
		return true;
	for (p = k; (p = strstr(p, name)); p += n)
		if ((p == k || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static int emit_one(struct sel_emit *se, size_t i, const struct event_desc *d,
		    const struct filter_emit_maps *m, struct bpf_insn *buf)
{
	int n = filter_emit(d, m, buf, se->why, sizeof(se->why));

	if (n < 0)
		return n;
	se->code[i] = malloc(n * sizeof(*buf));
	if (!se->code[i])
		return -ENOMEM;
	memcpy(se->code[i], buf, n * sizeof(*buf));
	se->n_code[i] = n;
	return 0;
}

/* Whether every event's histogram is counted in the emitted program
 * (filter_emit_aggregates()), not only handed to the accept program. */
static bool all_aggregate_here(struct filter_emit_maps *m, struct hist **hists, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		m->agg = hists[i] ? &hists[i]->desc : NULL;
		if (!filter_emit_aggregates(m))
			return false;
	}
	return true;
}

/* Without a Filter=, an event whose program would only hand every record
 * to the accept half stays with the class program, which does the same in
 * one program, without a second head and the tail call (4% more inside
 * the program on sched_process_wait, bench/results/2026-12-06-emit.txt);
 * NULL: emitted. */
static const char *stays_shared(const struct sel_emit *se, const struct event_desc *d,
				const struct filter_emit_maps *m)
{
	/* A trigger's events go to the accept program alike, with no class
	 * program to load for it. */
	if (se->filter || filter_emit_aggregates(m) || (m->agg && m->agg->trigger))
		return NULL;
	return filter_emit_hands_on(d, m);
}

int sel_emit_build(struct sel_emit *se, const struct selection *s, struct tp_event **events,
		   const struct event_desc *descs, struct hist **hists, size_t n,
		   const struct filter_emit_maps *maps)
{
	struct filter_emit_maps m_sel = *maps, *m = &m_sel;
	_cleanup_free_ struct bpf_insn *buf = NULL;
	bool filter = n && descs[0].n_insns;	/* Filter=, or a trigger's "if" */
	int r = 0;

	*se = (struct sel_emit){ .n = n, .filter = filter };
	for (size_t i = 0; i < n; i++)
		if (tp_event_is_synthetic(events[i])) {
			se->synthetic = true;
			return 0;
		}
	if (forced_interpreted(s->name)) {
		snprintf(se->why, sizeof(se->why), "TRACERD_TEST_INTERPRET names it");
		return 0;
	}
	m->unit = s->n_units > 0;
	se->aggregates = s->aggregate && all_aggregate_here(m, hists, n);
	buf = calloc(FILTER_EMIT_MAX, sizeof(*buf));
	se->code = calloc(n ? n : 1, sizeof(*se->code));
	se->n_code = calloc(n ? n : 1, sizeof(*se->n_code));
	if (!buf || !se->code || !se->n_code)
		return -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const char *why;

		m->agg = hists[i] ? &hists[i]->desc : NULL;
		why = stays_shared(se, &descs[i], m);
		if (!why)
			r = emit_one(se, i, &descs[i], m, buf);
		else if (!se->n_shared++)
			snprintf(se->why, sizeof(se->why), "%s: an emitted program would only hand "
				 "every record on to the class program's accept half", why);
	}
	if (r == -EOPNOTSUPP || (r >= 0 && se->n_shared == n)) {
		sel_emit_free(se);
		return 0;
	}
	if (r < 0)
		return r;
	se->compiled = true;
	return 0;
}

static bool same_code(const struct sel_emit *se, size_t a, size_t b)
{
	return se->code[a] && se->code[b] && se->n_code[a] == se->n_code[b] &&
	       !memcmp(se->code[a], se->code[b], se->n_code[a] * sizeof(struct bpf_insn));
}

/* The first event whose code is event i's: the one whose program i shares. */
static size_t first_same(const struct sel_emit *se, size_t i)
{
	size_t j = 0;

	while (j < i && !same_code(se, i, j))
		j++;
	return j;
}

static void close_all(struct loader *l, int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		loader_filter_close(l, fds[i]);
}

int sel_emit_load(struct loader *l, struct sel_emit *se, const struct selection *s,
		  int **progs, size_t *n_progs)
{
	_cleanup_free_ int *fds = NULL;
	uint64_t t0 = now_usec(CLOCK_MONOTONIC);
	size_t k = 0;

	*progs = NULL;
	*n_progs = 0;
	if (!se->compiled)
		return 0;
	se->fd = malloc(se->n * sizeof(*se->fd));
	fds = malloc((se->n ? se->n : 1) * sizeof(*fds));
	if (!se->fd || !fds)
		return -ENOMEM;
	for (size_t i = 0; i < se->n; i++) {
		size_t j = first_same(se, i);

		se->fd[i] = -1;
		if (!se->code[i])	/* the class program's */
			continue;
		if (j < i) {
			se->fd[i] = se->fd[j];
			continue;
		}
		se->fd[i] = loader_filter_load(l, se->code[i], se->n_code[i], se->why,
					       sizeof(se->why));
		if (se->fd[i] < 0) {
			/* A bug of the emitter's; the interpreter still works. */
			log_warning("selection %s: the kernel refused its compiled filter (%s); "
				    "the interpreter runs it", s->name, se->why);
			close_all(l, fds, k);
			se->compiled = false;
			for (size_t x = 0; x < se->n; x++)
				se->fd[x] = -1;
			return 0;
		}
		fds[k++] = se->fd[i];
	}
	se->n_loaded = k;
	se->load_usec = now_usec(CLOCK_MONOTONIC) - t0;
	*progs = TAKE_PTR(fds);
	*n_progs = k;
	return 0;
}

/* What is compiled: the filter, the histogram, or (neither) the events. */
static const char *emit_what(const struct sel_emit *se)
{
	if (se->filter)
		return se->compiled && se->aggregates ? "Filter= and Aggregate=" : "Filter=";
	return se->compiled && se->aggregates ? "Aggregate=" : "Events= (no Filter=)";
}

void sel_emit_log(const struct sel_emit *se, const struct selection *s)
{
	const char *what = emit_what(se);
	char events[48], loaded[48] = "";
	size_t n_progs = 0;

	if (se->synthetic) {
		log_info("selection %s: a synthetic event, on no tracepoint: the trigger whose "
			 "action fires it runs the selection%s", s->name,
			 se->filter ? " (its Filter= in the interpreter)" : "");
		return;
	}
	if (!se->compiled) {
		log_info("selection %s: %s runs in the %s: %s", s->name, what,
			 se->filter ? "interpreter" : "class program", se->why);
		return;
	}
	for (size_t i = 0; i < se->n; i++)
		n_progs += se->code[i] && first_same(se, i) == i;
	if (se->n_shared)
		snprintf(events, sizeof(events), "%zu of %zu", se->n - se->n_shared, se->n);
	else
		snprintf(events, sizeof(events), "%zu", se->n);
	if (se->n_loaded)	/* at start or reload: loaded */
		snprintf(loaded, sizeof(loaded), ", loaded in %.1f ms", se->load_usec / 1000.0);
	log_info("selection %s: %s compiled to BPF: %zu program(s) for %s events%s%s%s", s->name,
		 what, n_progs, events, loaded, se->n_shared ? "; the class program runs the others: " : "",
		 se->n_shared ? se->why : "");
}
