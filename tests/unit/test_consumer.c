// SPDX-License-Identifier: GPL-2.0
/* The ring-buffer consumer against crafted records, as a damaged or hostile
 * kernel side could hand them over: too short for the header, a length past
 * the buffer, an unknown or detached slot, a __data_loc pointing past the
 * record, a record shorter than its format. Each is counted, and nothing is
 * read out of bounds (every record sits in an exact-size allocation, so the
 * SANITIZE=1 build catches any stray read). Then the sink queue: a real
 * writer thread in front of the real stdout sink, with exact counts. */
#include <stdint.h>
#include "consume/consumer.h"
#include "fixtures.h"
#include "render/render.h"
#include "sink/sink.h"
#include "test.h"

#define SLOT 3

static struct consumer *c;
static struct sink *sink;		/* replaced by some tests: to_sink() reads it */
static struct trace_slot *slot;
static struct rate_limit rl;		/* none */
static char *out;
static size_t out_len;
static FILE *mem;
static uint64_t feed_cgroup;		/* the cgroup id feed() puts in the header */

static int to_sink(void *o, const struct out_record *r)
{
	(void)o;
	return sink_emit(sink, r);
}

static void flush_sink(void *o)
{
	(void)o;
	sink_flush(sink);
}

static void setup_event(bool queued, const char *sys, const char *name)
{

	consumer_new(&c, -1);
	trace_slot_new(&slot, SLOT, fx_find(sys, name), "crafted", 6, &rl);
	consumer_slot_set(c, slot);
	consumer_set_output(c, to_sink, flush_sink, NULL);
	render_prepare(slot->event);
	mem = open_memstream(&out, &out_len);
	sink_stdout_new(&sink, mem);
	if (queued)
		sink_queue_new(&sink, sink, 0);
}

static void setup(bool queued)
{
	setup_event(queued, "sched", "sched_process_exec");
}

/* Closes and frees the sink (draining the queue), and the consumer. */
static void finish(void)
{
	sink_free(sink);
	sink = NULL;
	consumer_free(c);
	c = NULL;
}

static void teardown(void)
{
	finish();
	trace_slot_free(slot);
	fclose(mem);
	free(out);
	out = NULL;
}

/* A record in an exact-size buffer: header, then the event's bytes. */
static void feed(uint32_t slot_id, const void *rec, uint32_t len, uint32_t claimed_len,
		 size_t size, uint32_t flags)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct trace_rec_hdr h = {
		.ts_ns = 1500000000, .slot = slot_id, .cpu = 1, .pid = 42, .tid = 42,
		.len = claimed_len, .flags = flags, .comm = "crafted", .cgroup_id = feed_cgroup,
	};

	memcpy(buf, &h, size < sizeof(h) ? size : sizeof(h));
	if (size > sizeof(h))
		memcpy(buf + sizeof(h), rec, len < size - sizeof(h) ? len : size - sizeof(h));
	consumer_on_record(c, buf, size);
	free(buf);
}

/* sched_process_exec: __data_loc filename at 8, pid at 12, old_pid at 16. */
static size_t exec_record(uint8_t *rec, uint32_t loc, const char *name)
{
	uint32_t pid = 42;
	size_t n = strlen(name) + 1;

	memset(rec, 0, 20);
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, &pid, 4);
	memcpy(rec + 20, name, n);
	return 20 + n;
}

static uint64_t delivered(void)
{
	struct sel_totals tot = { 0 };

	trace_slot_add_counts(slot, &tot);
	return tot.delivered;
}

static void malformed_headers_are_counted(void)
{
	uint8_t rec[64];
	size_t n;

	setup(false);
	EXPECT(slot->event != NULL, "no fixture");
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	feed(SLOT, rec, n, n, 7, 0);				/* shorter than a header */
	feed(SLOT, rec, n, 100000, sizeof(struct trace_rec_hdr) + n, 0);	/* len past the buffer */
	feed(SLOT, rec, n, n + 1, sizeof(struct trace_rec_hdr) + n, 0);	/* one byte past */
	feed(TRACERD_MAX_EVENTS, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);	/* no such slot */
	feed(UINT32_MAX, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	feed(SLOT + 1, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);	/* detached slot */
	EXPECT(c->counts.malformed == 5, "malformed %llu", (unsigned long long)c->counts.malformed);
	EXPECT(c->counts.late == 1, "late %llu", (unsigned long long)c->counts.late);
	EXPECT(delivered() == 0, "delivered %llu", (unsigned long long)delivered());
	teardown();
}

static void a_good_record_renders(void)
{
	uint8_t rec[64];
	size_t n;

	setup(false);
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	fflush(mem);
	EXPECT(delivered() == 1, "delivered %llu", (unsigned long long)delivered());
	EXPECT(out && strstr(out, "crafted-42      [001]     1.500000: sched_process_exec: filename=/bin/true pid=42 old_pid=42\n"),
	       "output '%s'", out);
	EXPECT(!c->counts.short_records && !c->counts.bad_dyn_records && !c->counts.malformed, "counted as damaged");
	teardown();
}

/* The kernel's trace has no "event_name: " before a syscall event's text:
 * "crafted-42 [001] 1.500000: sys_openat -> 0x3", directly and queued. */
static void a_syscall_line_has_no_event_name(void)
{
	for (int queued = 0; queued < 2; queued++) {
		uint8_t rec[24] = { 0 };
		uint64_t ret = 3;

		setup_event(queued, "syscalls", "sys_exit_openat");
		memcpy(rec + 16, &ret, 8);
		feed(SLOT, rec, 24, 24, sizeof(struct trace_rec_hdr) + 24, 0);
		finish();		/* drains the queue */
		fflush(mem);
		EXPECT(out && strstr(out, "crafted-42      [001]     1.500000: sys_openat -> 0x3\n"),
		       "queued %d: output '%s'", queued, out);
		teardown();
	}
}

static void damaged_records_are_counted_and_never_overread(void)
{
	uint8_t rec[64];
	size_t n;

	setup(false);
	/* __data_loc length past the record */
	n = exec_record(rec, 200 << 16 | 20, "/bin/true");
	feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	/* __data_loc offset past the record */
	n = exec_record(rec, 4 << 16 | 0xfff0, "/bin/true");
	feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	/* offset + length wraps 16 bits */
	n = exec_record(rec, 0xffffu << 16 | 0xffff, "x");
	feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	EXPECT(c->counts.bad_dyn_records == 3, "bad __data_loc %llu", (unsigned long long)c->counts.bad_dyn_records);
	/* shorter than the fixed fields: 6 bytes, and none */
	feed(SLOT, rec, 6, 6, sizeof(struct trace_rec_hdr) + 6, 0);
	feed(SLOT, rec, 0, 0, sizeof(struct trace_rec_hdr), 0);
	EXPECT(c->counts.short_records == 2, "short %llu", (unsigned long long)c->counts.short_records);
	/* cut by the BPF side */
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, TRACERD_REC_TRUNCATED);
	EXPECT(c->counts.truncated_records == 1, "truncated %llu", (unsigned long long)c->counts.truncated_records);
	fflush(mem);
	EXPECT(out && strstr(out, "filename=[bad __data_loc] pid=42"), "output '%s'", out);
	EXPECT(out && strstr(out, "filename=[field past the record] pid=[field past the record]"),
	       "output '%s'", out);
	/* damaged but delivered, with markers: every record is still counted once */
	EXPECT(delivered() == 6, "delivered %llu", (unsigned long long)delivered());
	EXPECT(!c->counts.malformed, "malformed %llu", (unsigned long long)c->counts.malformed);
	teardown();
}

static void the_queue_delivers_and_counts_exactly(void)
{
	uint8_t rec[64];
	size_t n;
	unsigned lines = 0;

	setup(true);
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	for (int i = 0; i < 1000; i++)
		feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	sink_close(sink);	/* waits for the writer: counts are final */
	fflush(mem);
	for (const char *p = out; p && (p = strstr(p, "sched_process_exec: filename=/bin/true")); p++)
		lines++;
	EXPECT(delivered() == 1000, "delivered %llu", (unsigned long long)delivered());
	EXPECT(lines == 1000, "%u lines", lines);
	teardown();
}

static void a_full_queue_counts_enobufs(void)
{
	struct sel_totals tot = { 0 };
	uint8_t rec[64];
	size_t n;
	char errs[128];

	setup(false);
	/* 4 entries, a writer slowed to 20 ms a record: most of 200 overflow */
	setenv("TRACERD_TEST_SINK_DELAY_US", "20000", 1);
	sink_queue_new(&sink, sink, 4);
	unsetenv("TRACERD_TEST_SINK_DELAY_US");
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	for (int i = 0; i < 200; i++)
		feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	sink_close(sink);
	trace_slot_add_counts(slot, &tot);
	sink_errnos_format(tot.errnos, errs, sizeof(errs));
	EXPECT(tot.delivered + tot.sink_errors == 200, "%llu + %llu",
	       (unsigned long long)tot.delivered, (unsigned long long)tot.sink_errors);
	EXPECT(tot.sink_errors >= 150, "sink errors %llu", (unsigned long long)tot.sink_errors);
	EXPECT(!strncmp(errs, "ENOBUFS ", 8), "errnos '%s'", errs);
	teardown();
}

/* A sink that takes rendered records one by one, as the journal's does:
 * the queue copies each record for it instead of batching lines. */
struct counting_sink {
	struct sink base;
	unsigned n, bad_text;
};

static int counting_emit(struct sink *s, const struct out_record *r)
{
	struct counting_sink *c = (struct counting_sink *)s;

	c->n++;
	if (!r->text || strcmp(r->text, "filename=/bin/true pid=42 old_pid=42"))
		c->bad_text++;
	return 0;
}

static int counting_message(struct sink *s, int priority, const char *msg,
			    const char *const *fields, size_t n_fields)
{
	(void)s; (void)priority; (void)msg; (void)fields; (void)n_fields;
	return 0;
}

static void counting_free(struct sink *s)
{
	(void)s;
}

static const struct sink_ops counting_ops = {
	.emit = counting_emit, .message = counting_message, .free = counting_free,
};

static void the_record_queue_counts_exactly(void)
{
	struct counting_sink cs = { .base.ops = &counting_ops };
	uint8_t rec[64];
	size_t n;

	setup(false);
	sink_free(sink);
	sink_queue_new(&sink, &cs.base, 0);
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	for (int i = 0; i < 1000; i++)
		feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
	sink_close(sink);
	EXPECT(delivered() == 1000, "delivered %llu", (unsigned long long)delivered());
	EXPECT(cs.n == 1000 && !cs.bad_text, "%u records, %u with the wrong text", cs.n, cs.bad_text);
	teardown();
}

/* A sink that keeps the user frames' text of the last record it took. */
struct stack_sink {
	struct sink base;
	char text[512];
	size_t len;
};

static int stack_emit(struct sink *s, const struct out_record *r)
{
	struct stack_sink *k = (struct stack_sink *)s;

	k->len = r->len;
	snprintf(k->text, sizeof(k->text), "%.*s", (int)r->stacks.user_text_len,
		 r->stacks.user_text ? r->stacks.user_text : "");
	return 0;
}

static const struct sink_ops stack_ops = {
	.emit = stack_emit, .message = counting_message, .free = counting_free,
};

/* A record of /bin/true's exec with one user frame (getpid's address) for
 * host_pid; ns_tgid >= 0: tracerd's PID namespace is another, and BPF
 * appended that tgid (TRACERD_REC_NS_TGID). What the sink got: the record
 * proper's length and the frames' text. */
static size_t user_frame_record(pid_t host_pid, long ns_tgid, struct stack_sink *ks)
{
	struct trace_stack_tail t = { .n_user = 1, .user = TRACERD_STACK_WHOLE };
	uint8_t buf[sizeof(struct trace_rec_hdr) + 128], *rec = buf + sizeof(struct trace_rec_hdr);
	struct trace_rec_hdr h = { .slot = SLOT, .pid = host_pid, .tid = host_pid,
				   .flags = TRACERD_REC_STACKS };
	uint64_t ip = (uintptr_t)&getpid;
	uint32_t tgid = ns_tgid;
	size_t n;

	*ks = (struct stack_sink){ .base.ops = &stack_ops };
	setup(false);
	sink_free(sink);
	sink_queue_new(&sink, &ks->base, 0);
	n = exec_record(rec, 20 << 16 | 20, "/bin/true");
	memcpy(rec + n, &ip, 8);
	memcpy(rec + n + 8, &t, sizeof(t));
	h.len = n + 8 + sizeof(t);
	if (ns_tgid >= 0) {
		memcpy(rec + h.len, &tgid, sizeof(tgid));
		h.len += sizeof(tgid);
		h.flags |= TRACERD_REC_NS_TGID;
	}
	memcpy(buf, &h, sizeof(h));
	consumer_on_record(c, buf, sizeof(h) + h.len);
	sink_close(sink);
	return n;
}

/* StackTrace=user: the consumer resolves the frames as it reads the record
 * (this process's own getpid here), and the queue carries the text to the
 * journal's kind of sink with the record proper apart. */
static void user_frames_are_resolved_and_queued(void)
{
	struct stack_sink ks;
	size_t n = user_frame_record(getpid(), -1, &ks);

	EXPECT(ks.len == n, "the record proper: %zu bytes, want %zu", ks.len, n);
	EXPECT(strstr(ks.text, "libc.so.6[+0x") && strstr(ks.text, "] __getpid+0x0"),
	       "user frames: '%s'", ks.text);
	EXPECT(c->counts.ustack_unresolved == 0, "unresolved %llu",
	       (unsigned long long)c->counts.ustack_unresolved);
	teardown();
}

/* tracerd in a PID namespace of its own: the frames are looked up by the
 * tgid BPF appended, not the record's (a pid no process has here), which
 * is taken off the record; tgid 0 (not in tracerd's namespace) is marked. */
static void user_frames_by_ns_tgid(void)
{
	struct stack_sink ks;
	size_t n = user_frame_record(0x3ffffff0, getpid(), &ks);
	char want[96];

	EXPECT(ks.len == n, "the record proper: %zu bytes, want %zu", ks.len, n);
	EXPECT(strstr(ks.text, "libc.so.6[+0x") && strstr(ks.text, "] __getpid+0x0"),
	       "user frames by the namespace's tgid: '%s'", ks.text);
	teardown();
	n = user_frame_record(getpid(), TRACERD_NS_TGID_NONE, &ks);
	snprintf(want, sizeof(want), "<%016llx> (process not in tracerd's PID namespace)",
		 (unsigned long long)(uintptr_t)&getpid);
	EXPECT(ks.len == n, "the record proper: %zu bytes, want %zu", ks.len, n);
	EXPECT_STREQ(ks.text, want);
	teardown();
}

/* Unit=: a record flagged TRACERD_REC_UNIT_ASK (BPF had no verdict on its
 * cgroup) is judged by the tracer's callback, by its slot's set and its
 * cgroup: kept, it reaches the output without the flag; else it counts as
 * judged, rejected and filtered. Without a callback it is rejected. */
static unsigned judge_calls, seen, seen_flags;

static bool judge(void *userdata, unsigned set, uint64_t cgroup_id)
{
	(void)userdata;
	judge_calls++;
	return set == 5 && cgroup_id == 7;
}

static int capture(void *o, const struct out_record *r)
{
	(void)o;
	seen++;
	seen_flags |= r->hdr->flags;
	return 0;
}

static void unit_ask_records_are_judged(void)
{
	struct sel_totals tot = { 0 };
	uint8_t rec[64];
	size_t n, size;

	setup(false);
	consumer_set_output(c, capture, NULL, NULL);
	slot->unit_set = 5;
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	size = sizeof(struct trace_rec_hdr) + n;
	feed_cgroup = 7;
	feed(SLOT, rec, n, n, size, TRACERD_REC_UNIT_ASK);	/* no callback yet */
	c->unit_judge = judge;
	for (int i = 0; i < 3; i++)
		feed(SLOT, rec, n, n, size, TRACERD_REC_UNIT_ASK | TRACERD_REC_TRUNCATED);
	feed_cgroup = 8;
	for (int i = 0; i < 2; i++)
		feed(SLOT, rec, n, n, size, TRACERD_REC_UNIT_ASK);
	feed(SLOT, rec, n, n, size, 0);		/* BPF's verdict: in */
	feed_cgroup = 0;
	trace_slot_add_counts(slot, &tot);
	EXPECT(judge_calls == 5, "judged %u times, want 5", judge_calls);
	EXPECT(seen == 4 && tot.delivered == 4, "%u seen, %llu delivered, want 4", seen,
	       (unsigned long long)tot.delivered);
	EXPECT(tot.unit_judged == 6 && tot.unit_rejected == 3 && tot.filtered == 3,
	       "judged %llu rejected %llu filtered %llu, want 6 3 3",
	       (unsigned long long)tot.unit_judged, (unsigned long long)tot.unit_rejected,
	       (unsigned long long)tot.filtered);
	EXPECT(seen_flags == TRACERD_REC_TRUNCATED, "the output saw flags %#x", seen_flags);
	EXPECT(c->counts.truncated_records == 3, "%llu truncated counted",
	       (unsigned long long)c->counts.truncated_records);
	teardown();
}

/* Batched writes that fail count every line they carried, by errno: the
 * stdout sink into /dev/full, whose writes fail with ENOSPC. */
static void failed_batches_count_each_line(void)
{
	struct sel_totals tot = { 0 };
	FILE *full = fopen("/dev/full", "we");
	uint8_t rec[64];
	size_t n;
	char errs[128];

	EXPECT(full != NULL, "no /dev/full");
	if (!full)
		return;
	setup(false);
	sink_free(sink);
	sink_stdout_new(&sink, full);
	sink_queue_new(&sink, sink, 0);
	n = exec_record(rec, 10 << 16 | 20, "/bin/true");
	for (int i = 0; i < 300; i++) {
		feed(SLOT, rec, n, n, sizeof(struct trace_rec_hdr) + n, 0);
		if (i % 100 == 99)
			sink_flush(sink);	/* the end of a drain: a batch */
	}
	sink_close(sink);
	trace_slot_add_counts(slot, &tot);
	sink_errnos_format(tot.errnos, errs, sizeof(errs));
	EXPECT(tot.delivered == 0 && tot.sink_errors == 300, "%llu + %llu",
	       (unsigned long long)tot.delivered, (unsigned long long)tot.sink_errors);
	EXPECT(!strcmp(errs, "ENOSPC 300"), "errnos '%s'", errs);
	teardown();
	fclose(full);
}

int main(void)
{
	RUN(malformed_headers_are_counted);
	RUN(a_good_record_renders);
	RUN(a_syscall_line_has_no_event_name);
	RUN(damaged_records_are_counted_and_never_overread);
	RUN(the_queue_delivers_and_counts_exactly);
	RUN(a_full_queue_counts_enobufs);
	RUN(failed_batches_count_each_line);
	RUN(the_record_queue_counts_exactly);
	RUN(user_frames_are_resolved_and_queued);
	RUN(user_frames_by_ns_tgid);
	RUN(unit_ask_records_are_judged);
	for (size_t i = 0; i < fx_n; i++) {
		render_release(fx_events[i]);
		tp_event_free(fx_events[i]);
	}
	free(fx_events);
	return TEST_EXIT();
}
