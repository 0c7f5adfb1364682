// SPDX-License-Identifier: GPL-2.0
/* The ring-buffer consumer: see consumer.h. */
#include <time.h>
#include "clock.h"
#include "knobs.h"
#include "consume/consumer.h"
#include "consume/ringbuf.h"
#include "render/render.h"
#include "render/ustack_text.h"
#include "util.h"

/* TRACERD_TEST_CONSUMER_DELAY_US: a test knob that makes the consumer sleep
 * this long per record, so that tests can overrun a tiny ring buffer and
 * check that every lost record is counted. Not for production use. */
static unsigned consumer_delay_us(void)
{
	static int delay = -1;

	if (delay < 0) {
		delay = knob_num(KNOB_TEST_CONSUMER_DELAY_US, 0);
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
	r = ustack_syms_new(&c->ustack);
	if (r < 0) {
		consumer_free(c);
		return r;
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
	sb_free(&c->wire);
	ustack_syms_free(c->ustack);
	free(c);
}

void consumer_set_output(struct consumer *c, consumer_emit_fn emit, consumer_flush_fn flush,
			 void *out)
{
	c->emit = emit;
	c->flush = flush;
	c->out = out;
}

/* The line is rendered here, once, for every output but the store and the
 * recorder (raw records both). */
static bool needs_text(const struct consumer *c, const struct out_slot *s)
{
	int o = out_slot_output(s);

	if (o == OUTPUT_DAEMON)
		o = c->daemon_output;
	return c->text_always || (o != OUTPUT_STORE && o != OUTPUT_RECORDER);
}

void consumer_refresh_clock(struct consumer *c)
{
	c->realtime_offset_ns = realtime_offset_ns();
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

void consumer_drain_written(struct consumer *c)
{
	unsigned long mark;

	if (!c->rb)
		return;
	mark = rb_reader_written(c->rb);
	/* A record reserved but not committed stops a drain short of the
	 * mark; its program commits it within microseconds. */
	while (!rb_reader_passed(c->rb, mark))
		consumer_drain(c);
}

/* Checks a record against its event's format, so that damage is counted
 * (the renderer itself never reads past len either way, and marks it). */
static void check_record(struct consumer *c, const struct tp_event *e, const uint8_t *rec,
			 uint32_t len, uint32_t flags)
{
	if (flags & TRACERD_REC_TRUNCATED)
		c->counts.truncated_records++;
	switch (tp_record_check(e, rec, len)) {
	case TP_REC_SHORT:
		c->counts.short_records++;
		break;
	case TP_REC_BAD_DYN:
		c->counts.bad_dyn_records++;
		break;
	case TP_REC_OK:
		break;
	}
}

/* User frames name files and symbols of a process that may exit any
 * moment: resolved here, once, as the record is read, and kept with it
 * for every output, the store included (render/ustack_text.h). */
static void resolve_user_frames(struct consumer *c, struct out_record *r, pid_t tgid)
{
	const struct trace_rec_hdr *h = r->hdr;
	const uint8_t *user = r->stacks.frames + 8 * r->stacks.tail.n_kern;
	unsigned n = r->stacks.tail.n_user;
	int done;

	/* Within what the store takes (store_writer_append()). */
	done = ustack_text_attach(c->ustack, tgid, r->rec, h->len, user, n,
				  TRACERD_MAX_RECORD + TRACERD_MAX_STACKS, &c->wire);
	if (done < 0 || c->wire.oom) {
		c->counts.ustack_unresolved += n;
		return;
	}
	c->counts.ustack_unresolved += n - done;
	c->wire_hdr = *h;
	c->wire_hdr.flags |= TRACERD_REC_USTACK_TEXT;
	c->wire_hdr.len = c->wire.len;
	r->hdr = &c->wire_hdr;
	r->rec = (const uint8_t *)c->wire.buf;
	r->len = rec_stacks_split(r->hdr->flags, r->rec, c->wire.len, &r->stacks);
}

/* The tgid /proc knows the record's task by: the one BPF appended when
 * tracerd runs in a PID namespace of its own (tracerd_record.h,
 * TRACERD_REC_NS_TGID), taken off here before anything reads the record;
 * else the record's. */
static pid_t proc_tgid(struct consumer *c, struct out_record *r)
{
	uint32_t len = r->hdr->len, tgid;

	if (!(r->hdr->flags & TRACERD_REC_NS_TGID))
		return r->hdr->pid;
	if (!tracerd_ns_tgid_split(r->rec, &len, &tgid))
		tgid = TRACERD_NS_TGID_NONE;
	if (r->hdr != &c->ns_hdr)
		c->ns_hdr = *r->hdr;
	c->ns_hdr.len = len;
	c->ns_hdr.flags &= ~TRACERD_REC_NS_TGID;
	r->hdr = &c->ns_hdr;
	return tgid;
}

/* A record BPF could not judge by Unit= (TRACERD_REC_UNIT_ASK): the
 * tracer judges it, before the rate limit sees it. Counted as judged, and
 * as rejected when it is out. */
static bool unit_keeps(struct consumer *c, struct trace_slot *slot, const struct trace_rec_hdr *h)
{
	bool in = c->unit_judge && c->unit_judge(c->unit_userdata, slot->unit_set, h->cgroup_id);

	slot->unit_judged++;
	if (!in)
		slot->unit_rejected++;
	return in;
}

int consumer_on_record(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct trace_rec_hdr *h = data;
	struct trace_slot *slot;
	struct out_record r;
	pid_t tgid;
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
	if ((h->flags & TRACERD_REC_UNIT_ASK) && !unit_keeps(c, slot, h))
		return 0;
	if (consumer_delay_us())
		usleep(consumer_delay_us());
	if (!rate_limit_allows(slot->rl)) {
		slot->suppressed++;
		slot->rl->suppressed_unreported++;
		return 0;
	}
	r = (struct out_record){
		.slot = slot->out, .priority = out_slot_priority(slot->out), .hdr = h,
		.rec = (const uint8_t *)(h + 1), .render = c->render,
		.realtime_offset_ns = c->realtime_offset_ns,
	};
	if (h->flags & TRACERD_REC_UNIT_ASK) {
		c->ns_hdr = *h;
		c->ns_hdr.flags &= ~TRACERD_REC_UNIT_ASK;
		r.hdr = &c->ns_hdr;
	}
	tgid = proc_tgid(c, &r);
	r.len = rec_stacks_split(r.hdr->flags, r.rec, r.hdr->len, &r.stacks);
	if (r.stacks.tail.n_user)
		resolve_user_frames(c, &r, tgid);
	check_record(c, slot->event, r.rec, r.len, h->flags);
	if (needs_text(c, slot->out)) {
		sb_reset(&c->text);
		render_event(slot->event, &r.render, r.rec, r.len, &c->text);
		r.text = sb_str(&c->text);
		r.text_len = c->text.len;
	}
	err = c->emit ? c->emit(c->out, &r) : -ENODEV;
	if (err < 0)
		out_slot_error(slot->out, err, 1);
	else if (err == 0)
		out_slot_delivered(slot->out, 1);
	/* > 0: queued; the queue's writer counts it */
	return 0;
}
