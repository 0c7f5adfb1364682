// SPDX-License-Identifier: GPL-2.0
/* The trace.dat writer's pages, byte by byte as the kernel's ring buffer
 * lays them out (trace_dat.sh reads whole files with trace-cmd), and what
 * it leaves out and says so: records a page cannot hold, records out of
 * order. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "export/trace_dat.h"
#include "export/trace_dat_priv.h"
#include "fixtures.h"
#include "test.h"

static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void test_page_layout(void)
{
	static struct td_cpu c;
	uint8_t rec[200] = { 0 }, page[2][TD_PAGE_SIZE];
	const uint64_t t0 = 1000000000, gap = (1ull << 27) + 5;

	c.fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	EXPECT(c.fd >= 0, "O_TMPFILE");
	EXPECT(td_cpu_append(&c, t0, rec, 40, 1000) == 0, "a small record");
	EXPECT(td_cpu_append(&c, t0 + 10, rec, 199, 1001) == 0, "a record past 112 bytes");
	EXPECT(td_cpu_append(&c, t0 + 10 + gap, rec, 8, 1000) == 0, "a record 2^27 ns later");
	EXPECT(td_cpu_lost(&c, 3) == 0, "a loss");
	EXPECT(td_cpu_append(&c, t0 + 20 + gap, rec, 8, 1000) == 0, "a record after it");
	EXPECT(td_cpu_flush(&c) == 0, "flush");
	EXPECT(c.bytes == 2 * TD_PAGE_SIZE, "two pages: %llu bytes", (unsigned long long)c.bytes);
	EXPECT(pread(c.fd, page, sizeof(page), 0) == sizeof(page), "read back");
	close(c.fd);

	const uint8_t *d = page[0] + TD_PAGE_HDR;
	EXPECT(get64(page[0]) == t0, "page time stamp: the first record's");
	/* 4 + 40, 8 + 200, 8 (time extend) + 4 + 8 */
	EXPECT(get64(page[0] + 8) == 44 + 208 + 20, "commit: %llu", (unsigned long long)get64(page[0] + 8));
	EXPECT(get32(d) == 10, "type_len 10 (40 bytes), delta 0: %#x", get32(d));
	EXPECT(get32(d + 4) == 1000, "common_type is the export's id");
	EXPECT(get32(d + 44) == (10u << 5), "type_len 0 past 112 bytes, delta 10: %#x", get32(d + 44));
	EXPECT(get32(d + 48) == 204, "length word: the padded 200 bytes + 4: %u", get32(d + 48));
	EXPECT((get32(d + 252) & 31) == 30, "a time extend: %#x", get32(d + 252));
	EXPECT((get32(d + 252) >> 5) + ((uint64_t)get32(d + 256) << 27) == gap, "its delta");
	EXPECT(get32(d + 260) == 2, "then the record, delta 0: %#x", get32(d + 260));
	EXPECT(get64(page[1] + 8) == (12 | TD_MISSED_EVENTS | TD_MISSED_STORED),
	       "the next page says events were lost: %#llx", (unsigned long long)get64(page[1] + 8));
	EXPECT(get64(page[1] + TD_PAGE_HDR + 12) == 3, "and how many, after its data");
	EXPECT(get64(page[1]) == t0 + 20 + gap, "its time stamp");
}

static void test_left_out(void)
{
	struct tp_event *e = fx_find("sched", "sched_switch");
	struct trace_dat *t = NULL;
	struct trace_dat_stats s;
	struct trace_rec_hdr h = { .ts_ns = 2000, .cpu = 1, .tid = 7, .comm = "x" };
	uint8_t rec[5000] = { 0 }, head[11];
	char path[] = "/tmp/test_trace_dat.XXXXXX";
	unsigned id;
	int fd = mkstemp(path);

	EXPECT(e && fd >= 0, "fixture, temp file");
	if (!e || fd < 0)
		return;
	EXPECT(trace_dat_new(&t, path) == 0, "new");
	EXPECT(trace_dat_add_event(t, e, &id) == 0 && id == 1000, "the first event is id 1000");
	EXPECT(trace_dat_add_record(t, id, &h, rec, 64) == 0, "a record");
	EXPECT(trace_dat_add_record(t, id, &h, rec, sizeof(rec)) == 0, "one no page holds");
	h.ts_ns = 1000;
	EXPECT(trace_dat_add_record(t, id, &h, rec, 64) == 0, "one earlier than the one before");
	EXPECT(trace_dat_finish(t, &s) == 0, "finish");
	EXPECT(s.records == 2 && s.too_large == 1 && s.reordered == 1 && s.cpus == 2,
	       "%llu records, %llu too large, %llu reordered, %u CPUs", (unsigned long long)s.records,
	       (unsigned long long)s.too_large, (unsigned long long)s.reordered, s.cpus);
	trace_dat_free(t);
	EXPECT(pread(fd, head, sizeof(head), 0) == sizeof(head) && !memcmp(head, "\027\010\104tracing6", 11),
	       "the magic and version 6");
	close(fd);
	unlink(path);
}

/* A synthetic event (issue 31) goes to trace.dat with its format, in a
 * system "synthetic" of its own, as the kernel's would. */
static void test_synthetic_event(void)
{
	struct tp_synth_error err;
	struct tp_event *e = NULL;
	struct trace_dat *t = NULL;
	struct trace_dat_stats s;
	struct trace_rec_hdr h = { .ts_ns = 2000, .cpu = 0, .tid = 7, .comm = "x" };
	uint8_t rec[32] = { 0 };
	char path[] = "/tmp/test_trace_dat.XXXXXX", *text = NULL;
	unsigned id;
	int fd = mkstemp(path);
	size_t len;

	EXPECT(tp_synthetic_parse("wakeup_latency u64 lat; pid_t pid", TP_SYNTH_ID_FIRST, &e, &err) == 0 &&
	       fd >= 0, "definition, temp file");
	if (!e || fd < 0)
		return;
	EXPECT(trace_dat_new(&t, path) == 0, "new");
	EXPECT(trace_dat_add_event(t, e, &id) == 0 && id == 1000, "the export's id");
	EXPECT(trace_dat_add_record(t, id, &h, rec, sizeof(rec)) == 0, "a record");
	EXPECT(trace_dat_finish(t, &s) == 0 && s.records == 1, "finish");
	trace_dat_free(t);
	len = (size_t)lseek(fd, 0, SEEK_END);
	text = malloc(len ? len : 1);
	EXPECT(text && pread(fd, text, len, 0) == (ssize_t)len, "read back");
	EXPECT(text && memmem(text, len, "name: wakeup_latency\nID: 1000\n", 30) &&
	       memmem(text, len, "print fmt: \"lat=%llu pid=%d\"", 28), "its format, renumbered");
	EXPECT(text && memmem(text, len, "synthetic", 9), "its system");
	free(text);
	close(fd);
	unlink(path);
	tp_event_free(e);
}

int main(void)
{
	RUN(test_page_layout);
	RUN(test_left_out);
	RUN(test_synthetic_event);
	return TEST_EXIT();
}
