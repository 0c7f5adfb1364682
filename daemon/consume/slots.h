/* SPDX-License-Identifier: GPL-2.0 */
/* The slot table's entries: one per attached (selection, event) pair. A
 * slot's id is the BPF cookie of its attachment, the key of its descriptor
 * and counters in the maps, and the index into the consumer's table. */
#ifndef TRACERD_SLOTS_H
#define TRACERD_SLOTS_H

#include <stdint.h>
#include "attach/loader.h"
#include "consume/out_record.h"
#include "aggregate/hist.h"

/* A selection's rate limit: a token bucket in events, shared by its slots.
 * A reload that keeps the selection sets the new limit and burst. */
struct rate_limit {
	unsigned per_sec, burst;	/* per_sec 0: no limit */
	double tokens;
	uint64_t last_refill_ns;
	uint64_t suppressed_unreported;
};

struct trace_slot {
	unsigned id;
	struct tp_event *event;
	struct rate_limit *rl;
	struct out_slot *out;		/* what sinks see; the sink queue refs it */
	uint64_t suppressed;		/* dropped by the rate limit */
	unsigned unit_set;		/* Unit=: its selection's set (event_desc.unit_set) */
	/* Records the consumer judged by Unit= (TRACERD_REC_UNIT_ASK), and
	 * of them those it rejected. */
	uint64_t unit_judged, unit_rejected;
	uint64_t vars_expired;		/* starts aged out (tracer_link.c) */
	struct attachment att;		/* set and cleared by tracer.c */
	/* Aggregate=: the slot's histogram, NULL when it has records; its
	 * desc.gen is the generation events go to (aggregate/hist_map.c). */
	struct hist *hist;
	bool hist_done;			/* nothing to dump any more: only clear the maps */
	/* GET /metrics: what the interval dumps cleared, for counts that only
	 * go up (aggregate/hist_total.c); NULL until the first. */
	struct hist_total *hist_total;
};

/* Per selection (or slot) accounting: every record the program saw ends up
 * in exactly one of these. */
struct sel_totals {
	uint64_t hits, filtered, lost, truncated;	/* from BPF */
	uint64_t aggregated, agg_dropped;		/* Aggregate=, from BPF */
	uint64_t agg_nostack;	/* of agg_dropped: common_stacktrace without a stack */
	uint64_t agg_compiled;	/* of aggregated: counted in the emitted program */
	/* Besides: syscall user strings that could not be read (their records
	 * are delivered or not like any other), from BPF. */
	uint64_t unreadable;
	/* StackTrace=: stacks cut at TRACERD_STACK_DEPTH, walks that failed
	 * (their records are delivered, marked), from BPF. */
	uint64_t stack_cut, stack_lost;
	/* Aggregate=: events shown under a cut common_stacktrace key. */
	uint64_t agg_stack_cut;
	/* Unit=: events of a cgroup BPF had no verdict for yet, judged by the
	 * daemon, and of them those it rejected (in filtered too); an
	 * aggregating slot's, which BPF rejects (in filtered too), from BPF. */
	uint64_t unit_judged, unit_rejected, unit_unjudged;
	/* Inter-event triggers: events whose references found no start (not
	 * counted, as in the kernel), starts that found no room for their
	 * variables, from BPF; starts whose end never came, aged out by the
	 * daemon. */
	uint64_t unmatched, vars_dropped, vars_expired;
	uint64_t delivered, suppressed, sink_errors;	/* from the daemon */
	struct sink_errno_count errnos[TRACERD_SINK_ERRNOS];	/* sink_errors by errno */
};

int trace_slot_new(struct trace_slot **ret, unsigned id, struct tp_event *e,
		   const char *selection, int priority, struct rate_limit *rl);
/* Records still queued for a sink keep the slot's out_slot. */
void trace_slot_free(struct trace_slot *s);
/* Whether the rate limit lets one more event through. */
bool rate_limit_allows(struct rate_limit *rl);
/* Adds slot's daemon-side counters to tot (thread-safe against the writer). */
void trace_slot_add_counts(const struct trace_slot *slot, struct sel_totals *tot);

#endif
