// SPDX-License-Identifier: GPL-2.0
/* The slot table and its counters, with no tracer around them: slots made
 * with trace_slot_new and set into a bare consumer (consumer_new(&c, -1)),
 * records handed straight to consumer_on_record. Checks the table (a free id,
 * set, lookup, clear, full), the out_slot's reference held by a queued record
 * past the slot's free, the rate limit's token bucket to the token, and the
 * sink errors by errno, per slot and summed per selection. */
#include <stdint.h>
#include <time.h>
#include "consume/consumer.h"
#include "fixtures.h"
#include "render/render.h"
#include "test.h"

/* What the output callback does with the next records: 0 delivered, > 0
 * queued (the output would count it later), < 0 a sink error. */
static int emit_result;
static unsigned emitted;
static const struct out_slot *held;	/* a "queued" record's reference */

static int emit(void *o, const struct out_record *r)
{
	(void)o;
	emitted++;
	if (emit_result > 0 && !held)
		held = out_slot_ref(r->slot);
	return emit_result;
}

/* One sched_process_exec record for slot id, in an exact-size buffer. */
static void feed(struct consumer *c, uint32_t id)
{
	static const char name[] = "/bin/true";
	uint8_t buf[sizeof(struct trace_rec_hdr) + 20 + sizeof(name)] = { 0 };
	struct trace_rec_hdr h = {
		.ts_ns = 1000, .slot = id, .cpu = 0, .pid = 7, .tid = 7,
		.len = 20 + sizeof(name), .comm = "slots",
	};
	uint32_t loc = sizeof(name) << 16 | 20, pid = 7;
	uint8_t *rec = buf + sizeof(h);

	memcpy(buf, &h, sizeof(h));
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, &pid, 4);
	memcpy(rec + 20, name, sizeof(name));
	consumer_on_record(c, buf, sizeof(buf));
}

static struct tp_event *exec_event(void)
{
	struct tp_event *e = fx_find("sched", "sched_process_exec");
	if (e && !e->render)
		render_prepare(e);
	return e;
}

static void a_new_slot_describes_itself(void)
{
	struct tp_event *e = exec_event();
	struct rate_limit rl = { 0 };
	struct trace_slot *s = NULL;

	EXPECT(e != NULL, "no fixture sched:sched_process_exec");
	EXPECT(trace_slot_new(&s, 17, e, "files", 5, &rl) == 0, "trace_slot_new failed");
	if (!s)
		return;
	EXPECT(s->id == 17 && s->out->id == 17, "ids %u %u", s->id, s->out->id);
	EXPECT(s->event == e && s->out->event == e && s->rl == &rl, "event or rate limit not kept");
	EXPECT_STREQ(s->out->selection, "files");
	EXPECT(out_slot_priority(s->out) == 5, "priority %d", out_slot_priority(s->out));
	out_slot_set_priority(s->out, 3);
	EXPECT(out_slot_priority(s->out) == 3, "priority after set %d", out_slot_priority(s->out));
	EXPECT(s->out->refs == 1 && s->suppressed == 0, "refs %u", s->out->refs);
	trace_slot_free(s);

	/* No selection name: "" rather than NULL, which sinks would print. */
	EXPECT(trace_slot_new(&s, 0, e, NULL, 6, &rl) == 0, "trace_slot_new failed");
	EXPECT_STREQ(s->out->selection, "");
	trace_slot_free(s);
	trace_slot_free(NULL);
}

/* The consumer's table: the lowest free id, lookups by the record's slot,
 * a cleared slot's records counted late, a full table -ENOSPC. */
static void the_table_allocates_looks_up_and_clears(void)
{
	struct tp_event *e = exec_event();
	struct rate_limit rl = { 0 };
	struct trace_slot *a, *b, *x;
	struct consumer *c;
	struct sel_totals ta = { 0 }, tb = { 0 };
	int id;

	consumer_new(&c, -1);
	consumer_set_output(c, emit, NULL, NULL);
	emit_result = 0;
	EXPECT(consumer_slot_alloc(c) == 0, "first id %d", consumer_slot_alloc(c));
	trace_slot_new(&a, 0, e, "a", 6, &rl);
	consumer_slot_set(c, a);
	id = consumer_slot_alloc(c);
	EXPECT(id == 1, "second id %d", id);
	trace_slot_new(&b, id, e, "b", 6, &rl);
	consumer_slot_set(c, b);
	EXPECT(c->slots[0] == a && c->slots[1] == b, "lookup by id");

	feed(c, 1);
	feed(c, 1);
	feed(c, 0);
	trace_slot_add_counts(a, &ta);
	trace_slot_add_counts(b, &tb);
	EXPECT(ta.delivered == 1 && tb.delivered == 2, "delivered a %llu b %llu",
	       (unsigned long long)ta.delivered, (unsigned long long)tb.delivered);

	/* Freed ids are reused lowest first; a cleared slot's records are late. */
	consumer_slot_clear(c, 0);
	EXPECT(consumer_slot_alloc(c) == 0, "id after clear %d", consumer_slot_alloc(c));
	feed(c, 0);
	feed(c, 2);
	EXPECT(c->counts.late == 2 && c->counts.malformed == 0, "late %llu malformed %llu",
	       (unsigned long long)c->counts.late, (unsigned long long)c->counts.malformed);
	trace_slot_free(a);

	/* Full: every id taken (one slot object standing in for all). */
	trace_slot_new(&x, 0, e, "x", 6, &rl);
	for (unsigned i = 0; i < TRACERD_MAX_EVENTS; i++)
		c->slots[i] = x;
	EXPECT(consumer_slot_alloc(c) == -ENOSPC, "full table gave %d", consumer_slot_alloc(c));
	consumer_slot_clear(c, TRACERD_MAX_EVENTS - 1);
	EXPECT(consumer_slot_alloc(c) == TRACERD_MAX_EVENTS - 1, "last id %d", consumer_slot_alloc(c));
	memset(c->slots, 0, sizeof(c->slots));
	trace_slot_free(x);
	trace_slot_free(b);
	consumer_free(c);
}

/* A record the sink queued holds the out_slot: the slot goes (a reload),
 * the writer still counts into it, and only the last unref frees it (the
 * SANITIZE=1 build turns a use after free into a failure). */
static void a_queued_record_keeps_the_out_slot(void)
{
	struct tp_event *e = exec_event();
	struct rate_limit rl = { 0 };
	struct trace_slot *s;
	struct consumer *c;
	uint64_t delivered = 0, errors = 0;
	struct sink_errno_count errnos[TRACERD_SINK_ERRNOS] = { 0 };
	const struct out_slot *o;

	consumer_new(&c, -1);
	consumer_set_output(c, emit, NULL, NULL);
	trace_slot_new(&s, 4, e, "queued", 6, &rl);
	consumer_slot_set(c, s);
	held = NULL;
	emit_result = 1;		/* queued: the consumer does not count it */
	feed(c, 4);
	o = s->out;
	EXPECT(held == o && o->refs == 2, "refs %u", o->refs);
	out_slot_counts(o, &delivered, &errors, errnos);
	EXPECT(delivered == 0 && errors == 0, "counted before the writer: %llu %llu",
	       (unsigned long long)delivered, (unsigned long long)errors);

	consumer_slot_clear(c, 4);
	trace_slot_free(s);		/* the reload frees the slot */
	EXPECT(o->refs == 1, "refs after the slot's free %u", o->refs);
	out_slot_delivered(o, 1);	/* the writer, later */
	out_slot_error(o, -EPIPE, 2);
	EXPECT_STREQ(o->selection, "queued");
	out_slot_counts(o, &delivered, &errors, errnos);
	EXPECT(delivered == 1 && errors == 2 && errnos[0].err == EPIPE && errnos[0].n == 2,
	       "after the slot's free: delivered %llu errors %llu", (unsigned long long)delivered,
	       (unsigned long long)errors);
	out_slot_unref(o);
	held = NULL;
	emit_result = 0;
	consumer_free(c);
}

/* The token bucket, to the token: burst events at once, then per_sec a
 * second, never more than burst saved up. Time is moved by moving the last
 * refill back; the calls themselves take microseconds, far below the 100 ms
 * a token takes at 10/s. */
static unsigned allowed(struct rate_limit *rl, unsigned tries)
{
	unsigned n = 0;

	for (unsigned i = 0; i < tries; i++)
		n += rate_limit_allows(rl);
	return n;
}

static void the_rate_limit_is_exact(void)
{
	struct rate_limit none = { 0 }, rl = { .per_sec = 10, .burst = 5, .tokens = 5 };
	unsigned n;

	EXPECT(allowed(&none, 100000) == 100000, "no limit suppressed something");
	n = allowed(&rl, 20);
	EXPECT(n == 5, "burst: %u of 20", n);
	rl.last_refill_ns -= 300000000;		/* 0.3 s: 3 tokens */
	n = allowed(&rl, 20);
	EXPECT(n == 3, "after 0.3 s: %u", n);
	rl.last_refill_ns -= 150000000;		/* 0.15 s: 1.5 tokens */
	n = allowed(&rl, 20);
	EXPECT(n == 1, "after 0.15 s: %u", n);
	rl.last_refill_ns -= 50000000;		/* the half left + 0.05 s: 1 */
	n = allowed(&rl, 20);
	EXPECT(n == 1, "after 0.05 s more: %u", n);
	rl.last_refill_ns -= 3600ull * 1000000000;	/* an hour: still only the burst */
	n = allowed(&rl, 20);
	EXPECT(n == 5, "after an hour: %u", n);

	/* A reload that lowers the burst caps what was saved up. */
	rl.last_refill_ns -= 1000000000;
	rl.burst = 2;
	n = allowed(&rl, 20);
	EXPECT(n == 2, "burst lowered to 2: %u", n);
}

/* Through the consumer: suppressed records count on the slot and for the
 * selection's report, delivered and sink errors on the out_slot. */
static void the_consumer_counts_every_record_once(void)
{
	struct tp_event *e = exec_event();
	struct rate_limit rl = { .per_sec = 1, .burst = 4, .tokens = 4 };
	struct sel_totals tot = { 0 };
	struct trace_slot *s;
	struct consumer *c;
	char errs[128];

	consumer_new(&c, -1);
	consumer_set_output(c, emit, NULL, NULL);
	trace_slot_new(&s, 9, e, "limited", 6, &rl);
	consumer_slot_set(c, s);
	emitted = 0;
	emit_result = 0;
	feed(c, 9);
	feed(c, 9);
	emit_result = -EPIPE;
	feed(c, 9);
	emit_result = -ENOBUFS;
	feed(c, 9);
	for (int i = 0; i < 10; i++)	/* the bucket is empty: all suppressed */
		feed(c, 9);
	trace_slot_add_counts(s, &tot);
	sink_errnos_format(tot.errnos, errs, sizeof(errs));
	EXPECT(emitted == 4, "emitted %u", emitted);
	EXPECT(tot.delivered == 2 && tot.sink_errors == 2 && tot.suppressed == 10,
	       "delivered %llu errors %llu suppressed %llu", (unsigned long long)tot.delivered,
	       (unsigned long long)tot.sink_errors, (unsigned long long)tot.suppressed);
	EXPECT(rl.suppressed_unreported == 10, "unreported %llu",
	       (unsigned long long)rl.suppressed_unreported);
	EXPECT_STREQ(errs, "EPIPE 1, ENOBUFS 1");
	EXPECT(c->counts.malformed == 0 && c->counts.late == 0, "miscounted as damaged");
	emit_result = 0;
	consumer_free(c);
	trace_slot_free(s);
}

/* Sink errors by errno: six buckets, the last of which becomes "other"
 * once a seventh errno comes; a sign makes no new errno, 0 counts as EIO;
 * the per-selection sum merges slots by errno. */
static void sink_errors_are_counted_by_errno(void)
{
	struct tp_event *e = exec_event();
	struct rate_limit rl = { 0 };
	struct trace_slot *a, *b;
	struct sel_totals tot = { 0 };
	char buf[256];

	trace_slot_new(&a, 1, e, "s", 6, &rl);
	trace_slot_new(&b, 2, e, "s", 6, &rl);
	out_slot_error(a->out, -EPIPE, 3);
	out_slot_error(a->out, EPIPE, 1);	/* a positive errno is the same one */
	out_slot_error(a->out, -ENOBUFS, 10);
	out_slot_error(b->out, -ENOBUFS, 2);
	out_slot_error(b->out, -ECANCELED, 1);
	out_slot_error(b->out, 0, 5);		/* no errno: EIO */
	a->suppressed = 7;
	out_slot_delivered(b->out, 11);
	trace_slot_add_counts(a, &tot);
	trace_slot_add_counts(b, &tot);
	sink_errnos_format(tot.errnos, buf, sizeof(buf));
	EXPECT_STREQ(buf, "EPIPE 4, ENOBUFS 12, ECANCELED 1, EIO 5");
	EXPECT(tot.sink_errors == 22 && tot.delivered == 11 && tot.suppressed == 7,
	       "errors %llu delivered %llu suppressed %llu", (unsigned long long)tot.sink_errors,
	       (unsigned long long)tot.delivered, (unsigned long long)tot.suppressed);

	out_slot_error(a->out, -ENOSPC, 1);
	out_slot_error(a->out, -EIO, 1);
	out_slot_error(a->out, -EAGAIN, 2);
	out_slot_error(a->out, -EBADF, 1);	/* the sixth bucket, still named */
	memset(&tot, 0, sizeof(tot));
	trace_slot_add_counts(a, &tot);
	sink_errnos_format(tot.errnos, buf, sizeof(buf));
	EXPECT_STREQ(buf, "EPIPE 4, ENOBUFS 10, ENOSPC 1, EIO 1, EAGAIN 2, EBADF 1");
	out_slot_error(a->out, -EINTR, 1);	/* a seventh errno: the sixth becomes other */
	out_slot_error(a->out, -EPIPE, 1);	/* a known one still finds its bucket */
	memset(&tot, 0, sizeof(tot));
	trace_slot_add_counts(a, &tot);
	sink_errnos_format(tot.errnos, buf, sizeof(buf));
	EXPECT_STREQ(buf, "EPIPE 5, ENOBUFS 10, ENOSPC 1, EIO 1, EAGAIN 2, other 2");
	EXPECT(tot.sink_errors == 21, "errors %llu", (unsigned long long)tot.sink_errors);
	trace_slot_free(a);
	trace_slot_free(b);
}

int main(void)
{
	RUN(a_new_slot_describes_itself);
	RUN(the_table_allocates_looks_up_and_clears);
	RUN(a_queued_record_keeps_the_out_slot);
	RUN(the_rate_limit_is_exact);
	RUN(the_consumer_counts_every_record_once);
	RUN(sink_errors_are_counted_by_errno);
	for (size_t i = 0; i < fx_n; i++) {
		render_release(fx_events[i]);
		tp_event_free(fx_events[i]);
	}
	free(fx_events);
	return TEST_EXIT();
}
