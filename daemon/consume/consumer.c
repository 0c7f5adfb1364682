// SPDX-License-Identifier: GPL-2.0
/* The ring-buffer consumer: see consumer.h. */
#include <time.h>
#include "consume/consumer.h"
#include "consume/ringbuf.h"
#include "render/render.h"
#include "util.h"

/* TRACERD_TEST_CONSUMER_DELAY_US: a test knob that makes the consumer sleep
 * this long per record, so that tests can overrun a tiny ring buffer and
 * check that every lost record is counted. Not for production use. */
static unsigned consumer_delay_us(void)
{
	static int delay = -1;

	if (delay < 0) {
		const char *e = getenv("TRACERD_TEST_CONSUMER_DELAY_US");

		delay = e ? atoi(e) : 0;
		if (delay < 0)
			delay = 0;
	}
	return delay;
}

int consumer_new(struct consumer **ret, int ring_fd)
{
	struct consumer *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	if (ring_fd >= 0) {
		r = rb_reader_new(&c->rb, ring_fd);
		if (r < 0) {
			free(c);
			return r;
		}
	}
	consumer_refresh_clock(c);
	*ret = c;
	return 0;
}

void consumer_free(struct consumer *c)
{
	if (!c)
		return;
	rb_reader_free(c->rb);
	sb_free(&c->text);
	free(c);
}

void consumer_set_output(struct consumer *c, consumer_emit_fn emit, consumer_flush_fn flush,
			 void *out)
{
	c->emit = emit;
	c->flush = flush;
	c->out = out;
}

void consumer_refresh_clock(struct consumer *c)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	c->realtime_offset_ns = (rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
}

int consumer_slot_alloc(const struct consumer *c)
{
	for (unsigned i = 0; i < TRACERD_MAX_EVENTS; i++)
		if (!c->slots[i])
			return i;
	return -ENOSPC;
}

int consumer_drain(struct consumer *c)
{
	int r = 0;

	if (c->rb)
		r = rb_reader_consume(c->rb, consumer_on_record, c, CONSUMER_DRAIN_BUDGET,
				      CONSUMER_DRAIN_USEC);
	if (c->flush)
		c->flush(c->out);
	return r;
}

void consumer_drain_all(struct consumer *c)
{
	while (consumer_drain(c) > 0)
		;
}

/* Checks a record against its event's format, so that damage is counted
 * (the renderer itself never reads past len either way, and marks it). */
static void check_record(struct consumer *c, const struct tp_event *e, const uint8_t *rec,
			 uint32_t len, uint32_t flags)
{
	bool bad_dyn = false;

	if (flags & TRACERD_REC_TRUNCATED)
		c->counts.truncated_records++;
	if (len < e->fixed_size) {
		c->counts.short_records++;
		return;
	}
	for (size_t i = 0; i < e->n_fields && e->n_dyn_fields && !bad_dyn; i++) {
		const struct tp_field *f = &e->fields[i];
		uint32_t loc;
		uint64_t off;

		if (f->kind != TP_FIELD_DATA_LOC && f->kind != TP_FIELD_REL_LOC)
			continue;
		if ((uint64_t)f->offset + 4 > len) {
			bad_dyn = true;
			break;
		}
		memcpy(&loc, rec + f->offset, 4);
		off = (loc & 0xffff) + (f->kind == TP_FIELD_REL_LOC ? f->offset + 4ULL : 0);
		bad_dyn = off + (loc >> 16) > len;
	}
	if (bad_dyn)
		c->counts.bad_dyn_records++;
}

int consumer_on_record(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct trace_rec_hdr *h = data;
	struct trace_slot *slot;
	struct out_record r;
	int err;

	/* The ring buffer is written by our own program, but a record that does
	 * not fit its header or names no slot must still never be read past. */
	if (size < sizeof(*h) || h->len > size - sizeof(*h) || h->slot >= TRACERD_MAX_EVENTS) {
		c->counts.malformed++;
		return 0;
	}
	slot = c->slots[h->slot];
	if (!slot) {
		c->counts.late++;
		return 0;
	}
	if (consumer_delay_us())
		usleep(consumer_delay_us());
	if (!rate_limit_allows(slot->rl)) {
		slot->suppressed++;
		slot->rl->suppressed_unreported++;
		return 0;
	}
	check_record(c, slot->event, (const uint8_t *)(h + 1), h->len, h->flags);
	r = (struct out_record){
		.slot = slot->out, .priority = out_slot_priority(slot->out), .hdr = h,
		.rec = (const uint8_t *)(h + 1), .len = h->len,
		.realtime_offset_ns = c->realtime_offset_ns,
	};
	sb_reset(&c->text);
	render_event(slot->event, r.rec, r.len, &c->text);
	r.text = sb_str(&c->text);
	r.text_len = c->text.len;
	err = c->emit ? c->emit(c->out, &r) : -ENODEV;
	if (err < 0)
		out_slot_error(slot->out, err, 1);
	else if (err == 0)
		out_slot_delivered(slot->out, 1);
	/* > 0: queued; the queue's writer counts it */
	return 0;
}
