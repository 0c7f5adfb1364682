// SPDX-License-Identifier: GPL-2.0
/* What the daemon writes beside the events themselves: statistics entries
 * (periodic and final, per selection) and the "suppressed N events" entries
 * of the rate limit; and the accounting read across the stages that they,
 * STATUS and the summary show. Aggregate='s dumps are report_hist.c's. */
#include <inttypes.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include "report.h"
#include "sink/sink.h"
#include "util.h"
#include "render/ustack.h"
#include "log.h"
#include "tracer.h"

/* The accounting, read across the stages. Here, not in tracer.c: tracer.c
 * calls the dumps below as slots go, and the entries below read these, so
 * in tracer.c the two files would call each other in a circle. */
static void add_bpf(const struct event_stats *bpf, struct sel_totals *tot)
{
	tot->hits += bpf->hits;
	tot->filtered += bpf->filtered;
	tot->lost += bpf->lost;
	tot->truncated += bpf->truncated;
	tot->aggregated += bpf->aggregated;
	tot->agg_dropped += bpf->agg_dropped;
	tot->agg_nostack += bpf->agg_nostack;
	tot->agg_compiled += bpf->agg_compiled;
	tot->unreadable += bpf->ustr_unreadable;
	tot->stack_cut += bpf->stack_cut;
	tot->stack_lost += bpf->stack_lost;
	tot->unit_unjudged += bpf->unit_unjudged;
	tot->unmatched += bpf->unmatched;
	tot->vars_dropped += bpf->vars_dropped;
}

void tracer_slot_totals(struct tracer *t, const struct trace_slot *slot, struct sel_totals *tot)
{
	struct event_stats bpf = { 0 };

	loader_slot_stats(t->ld, slot->id, &bpf);
	add_bpf(&bpf, tot);
	trace_slot_add_counts(slot, tot);
}

static void past_add(const struct slot_past *p, struct sel_totals *tot)
{
	add_bpf(&p->bpf, tot);
	tot->suppressed += p->suppressed;
	tot->unit_judged += p->unit_judged;
	tot->unit_rejected += p->unit_rejected;
	tot->filtered += p->unit_rejected;
	tot->vars_expired += p->vars_expired;
	tot->agg_stack_cut += out_slot_hist_cuts(p->out);
	out_slot_counts(p->out, &tot->delivered, &tot->sink_errors, tot->errnos);
}

void sel_past_totals(const struct sel_past *p, struct sel_totals *tot)
{
	for (size_t i = 0; i < p->n; i++)
		past_add(&p->v[i], tot);
}

void tracer_totals(struct tracer *t, const struct sel_state *s, struct sel_totals *tot)
{
	memset(tot, 0, sizeof(*tot));
	for (size_t i = 0; i < s->n_slots; i++)
		tracer_slot_totals(t, s->slots[i], tot);
	sel_past_totals(&s->past, tot);
}

unsigned tracer_ids_end(struct sel_state *const *sels, size_t n)
{
	unsigned end = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sels[i]->n_slots; k++)
			if (sels[i]->slots[k]->id >= end)
				end = sels[i]->slots[k]->id + 1;
	return end;
}

int tracer_read_stats(struct tracer *t)
{
	return loader_read_stats(t->ld, tracer_ids_end(t->sels, t->n_sels));
}

int tracer_keep_counts(struct tracer *t, const struct sel_state *st, unsigned ids_end,
		       struct sel_past *into)
{
	int r = loader_read_stats(t->ld, ids_end);

	if (r < 0)
		return r;
	for (size_t i = 0; i < st->n_slots; i++) {
		const struct trace_slot *slot = st->slots[i];
		struct slot_past *p;

		if (GROW(into->v, into->cap, into->n) < 0)
			return -ENOMEM;
		p = &into->v[into->n++];
		*p = (struct slot_past){ .event = slot->event, .out = out_slot_ref(slot->out),
					 .suppressed = slot->suppressed,
					 .unit_judged = slot->unit_judged,
					 .unit_rejected = slot->unit_rejected,
					 .vars_expired = slot->vars_expired };
		loader_slot_stats(t->ld, slot->id, &p->bpf);
	}
	return 0;
}

int sel_past_move(struct sel_past *to, struct sel_past *from)
{
	for (size_t i = 0; i < from->n; i++) {
		if (GROW(to->v, to->cap, to->n) < 0)
			return -ENOMEM;
		to->v[to->n++] = from->v[i];
		from->v[i].out = NULL;
	}
	sel_past_free(from);
	return 0;
}

void sel_past_free(struct sel_past *p)
{
	for (size_t i = 0; i < p->n; i++)
		out_slot_unref(p->v[i].out);
	free(p->v);
	free(p->name);
	*p = (struct sel_past){ 0 };
}

void tracer_all_totals(struct tracer *t, struct sel_totals *sum)
{
	*sum = (struct sel_totals){ 0 };
	for (size_t i = 0; i < t->n_sels; i++) {
		for (size_t k = 0; k < t->sels[i]->n_slots; k++) {
			const struct trace_slot *slot = t->sels[i]->slots[k];
			struct event_stats bpf = { 0 };

			trace_slot_add_counts(slot, sum);
			/* As of the last stats read (per report, not per STATUS). */
			loader_slot_stats(t->ld, slot->id, &bpf);
			sum->agg_dropped += bpf.agg_dropped;
			sum->agg_nostack += bpf.agg_nostack;
			sum->vars_dropped += bpf.vars_dropped;
		}
		sel_past_totals(&t->sels[i]->past, sum);
	}
	for (size_t i = 0; i < t->n_removed; i++)
		sel_past_totals(&t->removed[i], sum);
	/* One element, not every slot's counters: this runs every 2 s. */
	sum->lost = loader_lost_total(t->ld);
}

uint64_t tracer_skipped(struct tracer *t)
{
	return loader_skipped(t->ld);
}

const struct record_counts *tracer_record_counts(struct tracer *t)
{
	return &t->cons->counts;
}

/* One selection's statistics entry; removed: a reload removed it, and the
 * entry says what it counted until then. */
static void report_selection(struct tracer *t, const char *name, const struct sel_totals *tot,
			     size_t n_events, bool final, bool removed, uint64_t skipped)
{
	char f[25][160], errs[128], units[160] = "", trig[200] = "";
	const char *fields[25];

	sink_errnos_format(tot->errnos, errs, sizeof(errs));
	snprintf(f[0], sizeof(f[0]), "TRACE_STATS=1");
	snprintf(f[1], sizeof(f[1]), "TRACE_SELECTION=%s", name);
	snprintf(f[2], sizeof(f[2]), "TRACE_STATS_DELIVERED=%llu", (unsigned long long)tot->delivered);
	snprintf(f[3], sizeof(f[3]), "TRACE_STATS_LOST=%llu", (unsigned long long)tot->lost);
	snprintf(f[4], sizeof(f[4]), "TRACE_STATS_SUPPRESSED=%llu", (unsigned long long)tot->suppressed);
	snprintf(f[5], sizeof(f[5]), "TRACE_STATS_SINK_ERRORS=%llu", (unsigned long long)tot->sink_errors);
	snprintf(f[6], sizeof(f[6]), "TRACE_STATS_FILTERED=%llu", (unsigned long long)tot->filtered);
	snprintf(f[7], sizeof(f[7]), "TRACE_STATS_EVENTS=%zu", n_events);
	snprintf(f[8], sizeof(f[8]), "TRACE_STATS_FINAL=%d", final);
	snprintf(f[9], sizeof(f[9]), "TRACE_STATS_SINK_ERRNOS=%s", errs);
	snprintf(f[10], sizeof(f[10]), "TRACE_STATS_AGGREGATED=%llu", (unsigned long long)tot->aggregated);
	snprintf(f[11], sizeof(f[11]), "TRACE_STATS_AGG_DROPPED=%llu", (unsigned long long)tot->agg_dropped);
	/* The daemon's figure, the same in every selection's entry: the one
	 * shared program does not tell the kernel's skips apart by event. */
	snprintf(f[12], sizeof(f[12]), "TRACE_STATS_SKIPPED=%llu", (unsigned long long)skipped);
	snprintf(f[13], sizeof(f[13]), "TRACE_STATS_REMOVED=%d", removed);
	snprintf(f[14], sizeof(f[14]), "TRACE_STATS_UNREADABLE_STRINGS=%llu",
		 (unsigned long long)tot->unreadable);
	/* Of AGG_DROPPED: events of a common_stacktrace key that the kernel
	 * gave no stack for (the rest found the histogram full). */
	snprintf(f[15], sizeof(f[15]), "TRACE_STATS_AGG_NO_STACK=%llu",
		 (unsigned long long)tot->agg_nostack);
	snprintf(f[16], sizeof(f[16]), "TRACE_STATS_STACKS_CUT=%llu", (unsigned long long)tot->stack_cut);
	snprintf(f[17], sizeof(f[17]), "TRACE_STATS_STACKS_LOST=%llu", (unsigned long long)tot->stack_lost);
	/* Of AGGREGATED: events the dumps showed under a cut stack key. */
	snprintf(f[18], sizeof(f[18]), "TRACE_STATS_AGG_STACKS_CUT=%llu",
		 (unsigned long long)tot->agg_stack_cut);
	/* Unit=: events of a cgroup BPF had no verdict for yet (a unit's
	 * first), judged by the daemon; an aggregating slot's not at all. */
	snprintf(f[19], sizeof(f[19]), "TRACE_STATS_UNIT_JUDGED=%llu", (unsigned long long)tot->unit_judged);
	snprintf(f[20], sizeof(f[20]), "TRACE_STATS_UNIT_REJECTED=%llu",
		 (unsigned long long)tot->unit_rejected);
	snprintf(f[21], sizeof(f[21]), "TRACE_STATS_UNIT_UNJUDGED=%llu",
		 (unsigned long long)tot->unit_unjudged);
	/* Inter-event triggers: every event counted once still (unmatched is
	 * an outcome of its own); the starts are counted apart from events. */
	snprintf(f[22], sizeof(f[22]), "TRACE_STATS_UNMATCHED=%llu", (unsigned long long)tot->unmatched);
	snprintf(f[23], sizeof(f[23]), "TRACE_STATS_VARS_DROPPED=%llu",
		 (unsigned long long)tot->vars_dropped);
	snprintf(f[24], sizeof(f[24]), "TRACE_STATS_VARS_EXPIRED=%llu",
		 (unsigned long long)tot->vars_expired);
	if (tot->unmatched || tot->vars_dropped || tot->vars_expired)
		snprintf(trig, sizeof(trig), "; triggers: %llu unmatched (no start for the key), "
			 "%llu starts without room, %llu starts aged out",
			 (unsigned long long)tot->unmatched, (unsigned long long)tot->vars_dropped,
			 (unsigned long long)tot->vars_expired);
	if (tot->unit_judged || tot->unit_unjudged)
		snprintf(units, sizeof(units), "; Unit=: %llu judged by the daemon (%llu rejected), "
			 "%llu not judged (Aggregate=)", (unsigned long long)tot->unit_judged,
			 (unsigned long long)tot->unit_rejected, (unsigned long long)tot->unit_unjudged);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		fields[i] = f[i];
	sink_message(t->sink, LOG_INFO, fields, ARRAY_SIZE(fields),
		     "%s: selection %s%s: %llu delivered, %llu lost, %llu suppressed, %llu sink errors%s%s%s, %llu filtered out, %llu aggregated, %llu dropped (histogram full: %llu, no stack: %llu); %llu syscall strings unreadable; %llu stacks cut, %llu stacks lost; %llu aggregated under a cut stack%s%s",
		     final ? "summary" : "stats", name, removed ? " (removed by a reload)" : "",
		     (unsigned long long)tot->delivered, (unsigned long long)tot->lost,
		     (unsigned long long)tot->suppressed, (unsigned long long)tot->sink_errors,
		     errs[0] ? " (" : "", errs, errs[0] ? ")" : "",
		     (unsigned long long)tot->filtered, (unsigned long long)tot->aggregated,
		     (unsigned long long)tot->agg_dropped,
		     (unsigned long long)(tot->agg_dropped - tot->agg_nostack),
		     (unsigned long long)tot->agg_nostack, (unsigned long long)tot->unreadable,
		     (unsigned long long)tot->stack_cut, (unsigned long long)tot->stack_lost,
		     (unsigned long long)tot->agg_stack_cut, units, trig);
}

/* What became of the user stack frames (StackTrace=user): each is named,
 * or printed as its address with the reason, and counted here. */
static void report_user_frames(struct tracer *t, const struct record_counts *c, bool final)
{
	struct ustack_stats u;

	ustack_syms_stats(t->cons->ustack, &u);
	if (!u.frames && !c->ustack_unresolved)
		return;
	sink_message(t->sink, u.frames == u.named ? LOG_INFO : LOG_NOTICE, NULL, 0,
		     "%s: user stack frames: %llu named, %llu in a file without a symbol for them, %llu "
		     "without a file, %llu not mapped, %llu of exited processes, %llu of processes "
		     "whose maps tracerd cannot read, %llu of processes outside tracerd's PID "
		     "namespace; %llu not resolved (record full); /proc/PID/maps read %llu times",
		     final ? "summary" : "stats", (unsigned long long)u.named, (unsigned long long)u.file_only,
		     (unsigned long long)u.no_file, (unsigned long long)u.unmapped,
		     (unsigned long long)u.exited, (unsigned long long)u.unreadable,
		     (unsigned long long)u.other_pidns,
		     (unsigned long long)c->ustack_unresolved, (unsigned long long)u.maps_reads);
}

/* Unit=, for every selection: verdicts the map had no room for, and
 * records of cgroups gone before they could be named. */
static void report_units(struct tracer *t, bool final)
{
	char f[2][64];
	const char *fields[2] = { f[0], f[1] };

	if (!t->unit_sets && !t->unit_unwritten && !t->unit_unnamed)
		return;
	snprintf(f[0], sizeof(f[0]), "TRACE_STATS_UNIT_UNWRITTEN=%llu", (unsigned long long)t->unit_unwritten);
	snprintf(f[1], sizeof(f[1]), "TRACE_STATS_UNIT_UNNAMED=%llu", (unsigned long long)t->unit_unnamed);
	sink_message(t->sink, t->unit_unwritten || t->unit_unnamed ? LOG_WARNING : LOG_INFO, fields, 2,
		     "%s: %llu Unit= verdicts not written (the map is full: their cgroups' events are "
		     "judged by the daemon, one by one), %llu events rejected by Unit= because their "
		     "cgroup was gone before tracerd could name it",
		     final ? "summary" : "stats", (unsigned long long)t->unit_unwritten,
		     (unsigned long long)t->unit_unnamed);
}

void report_stats(struct tracer *t, bool final)
{
	const struct record_counts *c = tracer_record_counts(t);
	uint64_t skipped = tracer_skipped(t);
	char f[64];
	const char *fields[1] = { f };
	int r;

	/* One read of the program's counters for every selection below (and
	 * for report_events() after the final one). */
	r = tracer_read_stats(t);
	if (r < 0)
		log_warning("cannot read the BPF program's counters (%s): lost and filtered below are "
			    "as last read", strerror(-r));
	for (size_t i = 0; i < t->n_sels; i++) {
		struct sel_totals tot;

		tracer_totals(t, t->sels[i], &tot);
		report_selection(t, t->sels[i]->conf->name, &tot, t->sels[i]->n_slots, final, false,
				 skipped);
	}
	/* Selections a reload removed: once, in the summary, so that its
	 * entries add up to every record since the start. */
	for (size_t i = 0; final && i < t->n_removed; i++) {
		struct sel_totals tot = { 0 };

		sel_past_totals(&t->removed[i], &tot);
		report_selection(t, t->removed[i].name, &tot, 0, final, true, skipped);
	}
	/* Not a TRACE_STATS=1 entry: those are one per selection. */
	snprintf(f, sizeof(f), "TRACE_STATS_SKIPPED=%llu", (unsigned long long)skipped);
	sink_message(t->sink, skipped ? LOG_WARNING : LOG_INFO, fields, 1,
		     "%s: %llu skipped by the kernel, all selections (a BPF program already ran on "
		     "the CPU; the kernel does not say which event)",
		     final ? "summary" : "stats", (unsigned long long)skipped);
	report_units(t, final);
	if (c->malformed || c->late || c->short_records || c->bad_dyn_records || c->truncated_records)
		sink_message(t->sink, LOG_WARNING, NULL, 0,
			     "%llu malformed records, %llu records for detached events; delivered "
			     "damaged: %llu shorter than their format, %llu with a __data_loc past the "
			     "record, %llu truncated",
			     (unsigned long long)c->malformed, (unsigned long long)c->late,
			     (unsigned long long)c->short_records,
			     (unsigned long long)c->bad_dyn_records,
			     (unsigned long long)c->truncated_records);
	report_user_frames(t, c, final);
}

static void event_line(FILE *out, const char *sel, const struct tp_event *e,
		       const struct sel_totals *tot)
{
	if (!tot->hits && !tot->delivered)
		return;
	fprintf(out, "tracerd:   %-12s %s:%s delivered=%llu lost=%llu suppressed=%llu sink_errors=%llu filtered=%llu aggregated=%llu agg_dropped=%llu agg_no_stack=%llu agg_stack_cut=%llu unreadable=%llu stack_cut=%llu stack_lost=%llu agg_compiled=%llu unit_judged=%llu unit_rejected=%llu unit_unjudged=%llu unmatched=%llu vars_dropped=%llu vars_expired=%llu\n",
		sel, e->system, e->name,
		(unsigned long long)tot->delivered, (unsigned long long)tot->lost,
		(unsigned long long)tot->suppressed, (unsigned long long)tot->sink_errors,
		(unsigned long long)tot->filtered, (unsigned long long)tot->aggregated,
		(unsigned long long)tot->agg_dropped, (unsigned long long)tot->agg_nostack,
		(unsigned long long)tot->agg_stack_cut, (unsigned long long)tot->unreadable,
		(unsigned long long)tot->stack_cut, (unsigned long long)tot->stack_lost,
		(unsigned long long)tot->agg_compiled, (unsigned long long)tot->unit_judged,
		(unsigned long long)tot->unit_rejected, (unsigned long long)tot->unit_unjudged,
		(unsigned long long)tot->unmatched, (unsigned long long)tot->vars_dropped,
		(unsigned long long)tot->vars_expired);
}

/* Adds what p's entries for e counted to tot. */
static void past_event_totals(const struct sel_past *p, const struct tp_event *e,
			      struct sel_totals *tot)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].event == e)
			past_add(&p->v[i], tot);
}

static bool attached(const struct sel_state *st, const struct tp_event *e)
{
	for (size_t i = 0; st && i < st->n_slots; i++)
		if (st->slots[i]->event == e)
			return true;
	return false;
}

/* Each event of p that st (NULL: none) no longer has. */
static void past_events(const char *name, const struct sel_past *p, const struct sel_state *st,
			tracer_event_fn fn, void *userdata)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct tp_event *e = p->v[i].event;
		struct sel_totals tot = { 0 };
		size_t k;

		for (k = 0; k < i && p->v[k].event != e; k++)
			;
		if (k < i || attached(st, e))
			continue;	/* on its own already */
		past_event_totals(p, e, &tot);
		fn(userdata, name, e, &tot);
	}
}

void tracer_each_event(struct tracer *t, tracer_event_fn fn, void *userdata)
{
	for (size_t i = 0; i < t->n_sels; i++) {
		const struct sel_state *st = t->sels[i];

		for (size_t k = 0; k < st->n_slots; k++) {
			struct sel_totals tot = { 0 };

			tracer_slot_totals(t, st->slots[k], &tot);
			past_event_totals(&st->past, st->slots[k]->event, &tot);
			fn(userdata, st->conf->name, st->slots[k]->event, &tot);
		}
		past_events(st->conf->name, &st->past, st, fn, userdata);
	}
	for (size_t i = 0; i < t->n_removed; i++)
		past_events(t->removed[i].name, &t->removed[i], NULL, fn, userdata);
}

static void event_line_fn(void *out, const char *sel, const struct tp_event *e,
			  const struct sel_totals *tot)
{
	event_line(out, sel, e, tot);
}

/* Per event, for the foreground summary: the program's counters as
 * report_stats() read them, with what earlier states of the selection
 * counted for the same event. */
void report_events(struct tracer *t, FILE *out)
{
	tracer_each_event(t, event_line_fn, out);
}

void report_suppressed(struct tracer *t)
{
	for (size_t i = 0; i < t->n_sels; i++) {
		struct sel_state *s = t->sels[i];
		char f[2][96];
		const char *fields[2] = { f[0], f[1] };
		struct sel_totals tot;

		if (!s->rl.suppressed_unreported)
			continue;
		tracer_totals(t, s, &tot);
		snprintf(f[0], sizeof(f[0]), "TRACE_SELECTION=%s", s->conf->name);
		snprintf(f[1], sizeof(f[1]), "TRACE_SUPPRESSED=%llu",
			 (unsigned long long)s->rl.suppressed_unreported);
		sink_message(t->sink, LOG_WARNING, fields, 2,
			     "selection %s: suppressed %llu events of %llu by RateLimit=%u/s",
			     s->conf->name, (unsigned long long)s->rl.suppressed_unreported,
			     (unsigned long long)(tot.delivered + tot.suppressed), s->conf->rate_limit);
		s->rl.suppressed_unreported = 0;
	}
}
