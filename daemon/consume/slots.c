// SPDX-License-Identifier: GPL-2.0
/* Slots: their output descriptor, rate limit and counters. */
#include <time.h>
#include "clock.h"
#include "aggregate/hist_map.h"
#include "consume/slots.h"
#include "util.h"

int trace_slot_new(struct trace_slot **ret, unsigned id, struct tp_event *e,
		   const char *selection, int priority, struct rate_limit *rl)
{
	struct trace_slot *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	r = out_slot_new(&s->out, id, e, selection, priority);
	if (r < 0) {
		free(s);
		return r;
	}
	s->id = id;
	s->event = e;
	s->rl = rl;
	*ret = s;
	return 0;
}

void trace_slot_free(struct trace_slot *s)
{
	if (!s)
		return;
	out_slot_unref(s->out);
	hist_free(s->hist);	/* normally gone with its last dump (hist_out.c) */
	hist_total_free(s->hist_total);
	free(s);
}

/* A token bucket of burst events, refilled at per_sec a second. */
bool rate_limit_allows(struct rate_limit *rl)
{
	uint64_t now;

	if (!rl->per_sec)
		return true;
	now = now_ns(CLOCK_MONOTONIC);
	if (rl->last_refill_ns) {
		rl->tokens += (double)(now - rl->last_refill_ns) * rl->per_sec / 1e9;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
	}
	rl->last_refill_ns = now;
	if (rl->tokens < 1)
		return false;
	rl->tokens -= 1;
	return true;
}

void trace_slot_add_counts(const struct trace_slot *slot, struct sel_totals *tot)
{
	tot->suppressed += slot->suppressed;
	tot->unit_judged += slot->unit_judged;
	tot->unit_rejected += slot->unit_rejected;
	tot->filtered += slot->unit_rejected;
	tot->vars_expired += slot->vars_expired;
	tot->agg_stack_cut += out_slot_hist_cuts(slot->out);
	out_slot_counts(slot->out, &tot->delivered, &tot->sink_errors, tot->errnos);
}
