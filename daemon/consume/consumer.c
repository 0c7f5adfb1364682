// SPDX-License-Identifier: GPL-2.0
/* The ring-buffer consumer: checks each record against its slot's event,
 * applies the selection's rate limit, renders it and hands it to the sink.
 * Every record ends up counted: delivered, suppressed, a sink error (by
 * errno), malformed, or late (its slot already detached). */
#include <pthread.h>
#include <time.h>
#include "render/render.h"
#include "sink/sink.h"
#include "util.h"

/* Sink errors are rare: one lock for every slot's errno table is enough,
 * and it keeps the writer thread and the main loop consistent. */
static pthread_mutex_t errno_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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

struct trace_slot *trace_slot_ref(struct trace_slot *slot)
{
	__atomic_add_fetch(&slot->refs, 1, __ATOMIC_RELAXED);
	return slot;
}

void trace_slot_unref(struct trace_slot *slot)
{
	if (slot && __atomic_sub_fetch(&slot->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(slot);
}

void trace_slot_delivered_n(struct trace_slot *slot, uint64_t n)
{
	__atomic_add_fetch(&slot->delivered, n, __ATOMIC_RELAXED);
}

void trace_slot_delivered(struct trace_slot *slot)
{
	trace_slot_delivered_n(slot, 1);
}

void trace_slot_error(struct trace_slot *slot, int err)
{
	trace_slot_error_n(slot, err, 1);
}

void trace_slot_error_n(struct trace_slot *slot, int err, uint64_t n)
{
	struct sink_errno_count *b = &slot->errnos[TRACERD_SINK_ERRNOS - 1];

	err = err < 0 ? -err : err ? err : EIO;
	pthread_mutex_lock(&errno_lock);
	slot->sink_errors += n;
	for (size_t i = 0; i < TRACERD_SINK_ERRNOS - 1; i++)
		if (slot->errnos[i].err == err || !slot->errnos[i].err) {
			b = &slot->errnos[i];
			break;
		}
	if (b == &slot->errnos[TRACERD_SINK_ERRNOS - 1] && b->err && b->err != err)
		b->err = -1;	/* "other" */
	else
		b->err = err;
	b->n += n;
	pthread_mutex_unlock(&errno_lock);
}

static void add_errno(struct sink_errno_count *t, int err, uint64_t n)
{
	size_t i;

	for (i = 0; i < TRACERD_SINK_ERRNOS - 1; i++)
		if (t[i].err == err || !t[i].err)
			break;
	if (t[i].err && t[i].err != err)
		err = -1;
	t[i].err = err;
	t[i].n += n;
}

void trace_slot_add_counts(const struct trace_slot *slot, struct sel_totals *tot)
{
	tot->delivered += __atomic_load_n(&slot->delivered, __ATOMIC_RELAXED);
	tot->suppressed += slot->suppressed;
	pthread_mutex_lock(&errno_lock);
	tot->sink_errors += slot->sink_errors;
	for (size_t i = 0; i < TRACERD_SINK_ERRNOS && slot->errnos[i].err; i++)
		add_errno(tot->errnos, slot->errnos[i].err, slot->errnos[i].n);
	pthread_mutex_unlock(&errno_lock);
}

void sink_errnos_format(const struct sink_errno_count *e, char *buf, size_t size)
{
	size_t k = 0;

	buf[0] = 0;
	for (size_t i = 0; i < TRACERD_SINK_ERRNOS && e[i].err && k < size; i++) {
		const char *name = e[i].err > 0 ? strerrorname_np(e[i].err) : "other";

		k += snprintf(buf + k, size - k, "%s%s %llu", i ? ", " : "", name ? name : "?",
			      (unsigned long long)e[i].n);
	}
}

/* Checks a record against its event's format, so that damage is counted
 * (the renderer itself never reads past len either way, and marks it). */
static void check_record(struct tracer *t, const struct tp_event *e, const uint8_t *rec,
			 uint32_t len, uint32_t flags)
{
	bool bad_dyn = false;

	if (flags & TRACERD_REC_TRUNCATED)
		t->truncated_records++;
	if (len < e->fixed_size) {
		t->short_records++;
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
		t->bad_dyn_records++;
}

int tracer_on_record(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	const struct trace_rec_hdr *h = data;
	struct trace_slot *slot;
	struct out_record r;
	int err;

	/* The ring buffer is written by our own program, but a record that does
	 * not fit its header or names no slot must still never be read past. */
	if (size < sizeof(*h) || h->len > size - sizeof(*h) || h->slot >= TRACERD_MAX_EVENTS) {
		t->malformed++;
		return 0;
	}
	slot = t->slots[h->slot];
	if (!slot) {
		t->late++;
		return 0;
	}
	if (consumer_delay_us())
		usleep(consumer_delay_us());
	if (!rate_allows(slot->sel)) {
		slot->suppressed++;
		slot->sel->suppressed_unreported++;
		return 0;
	}
	check_record(t, slot->event, (const uint8_t *)(h + 1), h->len, h->flags);
	r = (struct out_record){
		.slot = slot, .hdr = h, .rec = (const uint8_t *)(h + 1), .len = h->len,
		.realtime_offset_ns = t->realtime_offset_ns,
	};
	if (!t->sink || !t->sink->renders) {
		sb_reset(&t->text);
		render_event(slot->event, r.rec, r.len, &t->text);
		r.text = sb_str(&t->text);
		r.text_len = t->text.len;
	}
	err = t->sink ? sink_emit(t->sink, &r) : -ENODEV;
	if (err < 0)
		trace_slot_error(slot, err);
	else if (err == 0)
		trace_slot_delivered(slot);
	/* > 0: queued; the queue's writer counts it */
	return 0;
}
