// SPDX-License-Identifier: GPL-2.0
/* The ring reader (consume/ringbuf.c) over a real BPF ring buffer (root):
 * tests/tools/ringbuf_fill.bpf.c, run by BPF_PROG_TEST_RUN, writes records
 * of known index, size and bytes into a 16 KiB ring; the reader must hand
 * back exactly those, in order, skip discarded ones, stop at its record
 * budget and its time limit, and give the space back so that the ring
 * wraps around round after round. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdint.h>
#include <unistd.h>
#include "consume/ringbuf.h"
#include "ringbuf_fill.skel.h"
#include "test.h"

#define RING 16384

static struct ringbuf_fill_bpf *skel;
static struct rb_reader *rd;

struct seen {
	uint32_t next;		/* the index the next record must have */
	unsigned n, bad;
	uint32_t span, discard_every;
	unsigned sleep_us;	/* per record, to make a drain slow */
	char why[160];
};

static uint32_t size_of(uint32_t i, uint32_t span)
{
	return 8 + (i * 13) % span;
}

static int check(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	const uint8_t *p = data;
	uint32_t idx, sz;

	while (s->discard_every && s->next % s->discard_every == 0)
		s->next++;
	memcpy(&idx, p, 4);
	memcpy(&sz, p + 4, 4);
	if (!s->bad && (idx != s->next || sz != size || size != size_of(s->next, s->span)))
		snprintf(s->why, sizeof(s->why), "record %u: index %u, size %zu (says %u), want %u of %u",
			 s->n, idx, size, sz, s->next, size_of(s->next, s->span));
	else
		for (size_t k = 8; k < size && !s->bad; k++)
			if (p[k] != (uint8_t)k) {
				snprintf(s->why, sizeof(s->why), "record %u: byte %zu is %u", idx, k, p[k]);
				s->bad++;
			}
	if (s->why[0])
		s->bad++;
	s->next++;
	s->n++;
	if (s->sleep_us)
		usleep(s->sleep_us);
	return 0;
}

/* Runs the producer: n records from index first. */
static int fill(uint32_t first, uint32_t n, uint32_t span, uint32_t discard_every)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);

	skel->bss->first = first;
	skel->bss->n = n;
	skel->data->span = span;
	skel->bss->discard_every = discard_every;
	return bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fill), &run);
}

static bool setup(void)
{
	int r;

	skel = ringbuf_fill_bpf__open_and_load();
	if (!skel) {
		EXPECT(0, "cannot load tests/tools/ringbuf_fill.bpf.c: %s (root needed)", strerror(errno));
		return false;
	}
	for (int k = 8; k < 256; k++)
		skel->bss->buf[k] = k;
	r = rb_reader_new(&rd, bpf_map__fd(skel->maps.rb));
	EXPECT(r == 0, "rb_reader_new: %s", strerror(-r));
	return r == 0;
}

static void teardown(void)
{
	rb_reader_free(rd);
	rd = NULL;
	ringbuf_fill_bpf__destroy(skel);
	skel = NULL;
}

static void every_record_in_order(void)
{
	struct seen s = { .span = 121 };
	int more;

	if (!setup())
		return teardown();
	EXPECT(fill(0, 100, 121, 0) == 0, "test run: %s", strerror(errno));
	EXPECT(skel->bss->written == 100 && skel->bss->failed == 0, "written %u failed %u",
	       skel->bss->written, skel->bss->failed);
	more = rb_reader_consume(rd, check, &s, SIZE_MAX, 0);
	EXPECT(more == 0, "more %d", more);
	EXPECT(s.n == 100 && !s.bad, "%u records; %s", s.n, s.why);
	more = rb_reader_consume(rd, check, &s, SIZE_MAX, 0);
	EXPECT(more == 0 && s.n == 100, "an empty ring gave %u more (%d)", s.n - 100, more);
	teardown();
}

static void discarded_records_are_skipped(void)
{
	struct seen s = { .span = 57, .discard_every = 3 };

	if (!setup())
		return teardown();
	fill(0, 90, 57, 3);
	EXPECT(skel->bss->written == 60 && skel->bss->discarded == 30, "written %u discarded %u",
	       skel->bss->written, skel->bss->discarded);
	EXPECT(rb_reader_consume(rd, check, &s, SIZE_MAX, 0) == 0, "more");
	EXPECT(s.n == 60 && !s.bad, "%u records; %s", s.n, s.why);
	teardown();
}

/* The budget is exact; reaching it says "more may wait" even when the
 * ring happens to be empty, and the next call then reads nothing. */
static void the_budget_is_exact(void)
{
	struct seen s = { .span = 200 };
	int more;

	if (!setup())
		return teardown();
	fill(0, 50, 200, 0);
	more = rb_reader_consume(rd, check, &s, 20, 0);
	EXPECT(more == 1 && s.n == 20, "first drain: %u records, more %d", s.n, more);
	more = rb_reader_consume(rd, check, &s, 20, 0);
	EXPECT(more == 1 && s.n == 40, "second drain: %u records, more %d", s.n, more);
	more = rb_reader_consume(rd, check, &s, 10, 0);
	EXPECT(more == 1 && s.n == 50, "third drain: %u records, more %d", s.n, more);
	more = rb_reader_consume(rd, check, &s, 10, 0);
	EXPECT(more == 0 && s.n == 50, "fourth drain: %u records, more %d", s.n, more);
	fill(50, 5, 200, 0);
	more = rb_reader_consume(rd, check, &s, 10, 0);
	EXPECT(more == 0 && s.n == 55 && !s.bad, "after a refill: %u records, more %d; %s", s.n, more, s.why);
	teardown();
}

/* A mark of what was written so far: passed once every record before it was
 * read, whatever was written after (a reload drains to it while events
 * still fire, rather than until the ring is empty). */
static void a_mark_is_passed_at_its_records(void)
{
	struct seen s = { .span = 100 };
	unsigned long mark;
	int calls = 0;

	if (!setup())
		return teardown();
	fill(0, 50, 100, 0);
	mark = rb_reader_written(rd);
	fill(50, 30, 100, 0);
	EXPECT(!rb_reader_passed(rd, mark), "passed before any read");
	while (!rb_reader_passed(rd, mark) && calls < 100) {
		rb_reader_consume(rd, check, &s, 10, 0);
		calls++;
	}
	EXPECT(calls == 5 && s.n == 50, "passed after %d reads of 10, %u records", calls, s.n);
	EXPECT(rb_reader_passed(rd, rb_reader_written(rd)) == false, "the 30 after it not read yet");
	rb_reader_consume(rd, check, &s, SIZE_MAX, 0);
	EXPECT(s.n == 80 && !s.bad && rb_reader_passed(rd, rb_reader_written(rd)),
	       "%u records; %s", s.n, s.why);
	teardown();
}

/* The time limit: the clock is read every 32 records, so a drain whose
 * records take 100 us each stops after exactly 32 of them once 1 ms went by. */
static void the_time_limit_stops_a_drain(void)
{
	struct seen s = { .span = 33, .sleep_us = 100 };
	int more;

	if (!setup())
		return teardown();
	fill(0, 200, 33, 0);
	EXPECT(skel->bss->written == 200, "written %u", skel->bss->written);
	more = rb_reader_consume(rd, check, &s, SIZE_MAX, 1000);
	EXPECT(more == 1 && s.n == 32, "%u records, more %d", s.n, more);
	s.sleep_us = 0;
	more = rb_reader_consume(rd, check, &s, SIZE_MAX, 1000000);
	EXPECT(more == 0 && s.n == 200 && !s.bad, "rest: %u records, more %d; %s", s.n, more, s.why);
	teardown();
}

/* A full ring refuses records (the BPF side counts them lost); the reader
 * gets exactly those that went in, and once it has read them the space is
 * free again: 30 rounds of ~10 KiB through a 16 KiB ring wrap it around
 * many times, records straddling the end read whole through the double
 * mapping. */
static void a_full_ring_then_wrap_around(void)
{
	struct seen s = { .span = 1 };
	uint32_t next = 0;

	if (!setup())
		return teardown();
	/* 2000 records of 8 bytes, 16 in the ring each: the kernel takes a record
	 * only while it leaves a byte of the 16 KiB free, so 1023 go in. */
	fill(0, 2000, 1, 0);
	EXPECT(skel->bss->written == 1023 && skel->bss->failed == 977, "written %u failed %u",
	       skel->bss->written, skel->bss->failed);
	EXPECT(rb_reader_consume(rd, check, &s, SIZE_MAX, 0) == 0, "more");
	EXPECT(s.n == 1023 && !s.bad, "%u records from a full ring; %s", s.n, s.why);
	teardown();

	if (!setup())
		return teardown();
	s = (struct seen){ .span = 248 };
	for (int round = 0; round < 30 && !s.bad; round++) {
		fill(next, 80, 248, 0);
		EXPECT(skel->bss->failed == 0, "round %d: %u refused (space not given back)", round,
		       skel->bss->failed);
		next += skel->bss->written;
		rb_reader_consume(rd, check, &s, SIZE_MAX, 0);
	}
	EXPECT(s.n == next && next == 30 * 80 && !s.bad, "%u records of %u; %s", s.n, next, s.why);
	teardown();
}

static void only_a_ring_buffer_map(void)
{
	struct rb_reader *r = NULL;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "not_a_ring", 4, 8, 1, NULL);
	int ret;

	EXPECT(fd >= 0, "bpf_map_create: %s", strerror(errno));
	ret = rb_reader_new(&r, fd);
	EXPECT(ret == -EINVAL && !r, "an array map gave %d", ret);
	close(fd);
	ret = rb_reader_new(&r, 1000000);
	EXPECT(ret < 0 && ret != -EINVAL && !r, "a bad fd gave %d", ret);
}

int main(void)
{
	RUN(every_record_in_order);
	RUN(discarded_records_are_skipped);
	RUN(the_budget_is_exact);
	RUN(a_mark_is_passed_at_its_records);
	RUN(the_time_limit_stops_a_drain);
	RUN(a_full_ring_then_wrap_around);
	RUN(only_a_ring_buffer_map);
	return TEST_EXIT();
}
