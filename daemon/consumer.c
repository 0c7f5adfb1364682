// SPDX-License-Identifier: GPL-2.0
/* The ring-buffer consumer: checks each record against its slot's event,
 * applies the selection's rate limit, renders it and hands it to the sink.
 * Every record ends up counted: delivered, suppressed, a sink error,
 * malformed, or late (its slot already detached). */
#include <time.h>
#include "render.h"
#include "sink.h"
#include "util.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A token bucket of rate_burst events, refilled at rate_limit per second. */
static bool rate_allows(struct sel_state *s)
{
	const struct selection *c = s->conf;
	uint64_t now;

	if (!c->rate_limit)
		return true;
	now = now_ns();
	if (s->last_refill_ns) {
		s->tokens += (double)(now - s->last_refill_ns) * c->rate_limit / 1e9;
		if (s->tokens > c->rate_burst)
			s->tokens = c->rate_burst;
	}
	s->last_refill_ns = now;
	if (s->tokens < 1)
		return false;
	s->tokens -= 1;
	return true;
}

int tracer_on_record(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	const struct trace_rec_hdr *h = data;
	struct trace_slot *slot;
	struct out_record r;
	int err;

	if (size < sizeof(*h) || h->len > size - sizeof(*h) || h->slot >= TRACERD_MAX_EVENTS) {
		t->malformed++;
		return 0;
	}
	slot = t->slots[h->slot];
	if (!slot) {
		t->late++;
		return 0;
	}
	if (!rate_allows(slot->sel)) {
		slot->suppressed++;
		slot->sel->suppressed_unreported++;
		return 0;
	}
	sb_reset(&t->text);
	render_event(slot->event, (const uint8_t *)(h + 1), h->len, &t->text);
	r = (struct out_record){
		.slot = slot, .hdr = h, .rec = (const uint8_t *)(h + 1), .len = h->len,
		.text = sb_str(&t->text), .realtime_offset_ns = t->realtime_offset_ns,
	};
	err = sink_emit(t->sink, &r);
	if (err < 0)
		slot->sink_errors++;
	else
		slot->delivered++;
	return 0;
}
