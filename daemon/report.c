// SPDX-License-Identifier: GPL-2.0
/* Statistics entries: periodic and final, per selection, and the
 * "suppressed N events" entries of the rate limit. */
#include <syslog.h>
#include "report.h"
#include "sink/sink.h"
#include "util.h"

static void report_selection(struct tracer *t, struct sel_state *s, bool final)
{
	struct sel_totals tot;
	char f[12][160], errs[128];
	const char *fields[12];

	tracer_totals(t, s, &tot);
	sink_errnos_format(tot.errnos, errs, sizeof(errs));
	snprintf(f[0], sizeof(f[0]), "TRACE_STATS=1");
	snprintf(f[1], sizeof(f[1]), "TRACE_SELECTION=%s", s->conf->name);
	snprintf(f[2], sizeof(f[2]), "TRACE_STATS_DELIVERED=%llu", (unsigned long long)tot.delivered);
	snprintf(f[3], sizeof(f[3]), "TRACE_STATS_LOST=%llu", (unsigned long long)tot.lost);
	snprintf(f[4], sizeof(f[4]), "TRACE_STATS_SUPPRESSED=%llu", (unsigned long long)tot.suppressed);
	snprintf(f[5], sizeof(f[5]), "TRACE_STATS_SINK_ERRORS=%llu", (unsigned long long)tot.sink_errors);
	snprintf(f[6], sizeof(f[6]), "TRACE_STATS_FILTERED=%llu", (unsigned long long)tot.filtered);
	snprintf(f[7], sizeof(f[7]), "TRACE_STATS_EVENTS=%zu", s->n_slots);
	snprintf(f[8], sizeof(f[8]), "TRACE_STATS_FINAL=%d", final);
	snprintf(f[9], sizeof(f[9]), "TRACE_STATS_SINK_ERRNOS=%s", errs);
	snprintf(f[10], sizeof(f[10]), "TRACE_STATS_AGGREGATED=%llu", (unsigned long long)tot.aggregated);
	snprintf(f[11], sizeof(f[11]), "TRACE_STATS_AGG_DROPPED=%llu", (unsigned long long)tot.agg_dropped);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		fields[i] = f[i];
	sink_message(t->sink, LOG_INFO, fields, ARRAY_SIZE(fields),
		     "%s: selection %s: %llu delivered, %llu lost, %llu suppressed, %llu sink errors%s%s%s, %llu filtered out, %llu aggregated, %llu dropped (histogram full)",
		     final ? "summary" : "stats", s->conf->name,
		     (unsigned long long)tot.delivered, (unsigned long long)tot.lost,
		     (unsigned long long)tot.suppressed, (unsigned long long)tot.sink_errors,
		     errs[0] ? " (" : "", errs, errs[0] ? ")" : "",
		     (unsigned long long)tot.filtered, (unsigned long long)tot.aggregated,
		     (unsigned long long)tot.agg_dropped);
}

void report_stats(struct tracer *t, bool final)
{
	const struct record_counts *c = tracer_record_counts(t);

	for (size_t i = 0; i < t->n_sels; i++)
		report_selection(t, t->sels[i], final);
	if (c->malformed || c->late || c->short_records || c->bad_dyn_records || c->truncated_records)
		sink_message(t->sink, LOG_WARNING, NULL, 0,
			     "%llu malformed records, %llu records for detached events; delivered "
			     "damaged: %llu shorter than their format, %llu with a __data_loc past the "
			     "record, %llu truncated",
			     (unsigned long long)c->malformed, (unsigned long long)c->late,
			     (unsigned long long)c->short_records,
			     (unsigned long long)c->bad_dyn_records,
			     (unsigned long long)c->truncated_records);
}

/* Per event, for the foreground summary. */
void report_events(struct tracer *t, FILE *out)
{
	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++) {
			struct trace_slot *slot = t->sels[i]->slots[k];
			struct sel_totals tot = { 0 };

			tracer_slot_totals(t, slot, &tot);
			if (!tot.hits && !tot.delivered)
				continue;
			fprintf(out, "tracerd:   %-12s %s:%s delivered=%llu lost=%llu suppressed=%llu sink_errors=%llu filtered=%llu aggregated=%llu agg_dropped=%llu\n",
				t->sels[i]->conf->name, slot->event->system, slot->event->name,
				(unsigned long long)tot.delivered, (unsigned long long)tot.lost,
				(unsigned long long)tot.suppressed, (unsigned long long)tot.sink_errors,
				(unsigned long long)tot.filtered, (unsigned long long)tot.aggregated,
				(unsigned long long)tot.agg_dropped);
		}
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
