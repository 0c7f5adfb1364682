// SPDX-License-Identifier: GPL-2.0
/* The config parser: what it accepts, and every error message it can give,
 * each with its file:line:column. A second text plays a drop-in. */
#include <limits.h>
#include <syslog.h>
#include <unistd.h>
#include "config/config.h"
#include "test.h"
#include "util.h"

#define SEL "[Selection]\nName=s\nEvents=sched:sched_switch\n"

static const struct bad {
	const char *text, *dropin, *want;
} bad[] = {
	{ "Foo=bar\n", NULL,
	  "t.conf:1:1: assignment outside a section, expected [Daemon] or [Selection] first" },
	{ "[Bogus]\n", NULL, "t.conf:1:2: unknown section [Bogus], expected [Daemon], [Store], [Recorder], [Synthetic], [Metrics] or [Selection]" },
	{ "  [Daemon\n", NULL, "t.conf:1:10: expected ']' to end the section header" },
	{ "[Daemon] x\n", NULL, "t.conf:1:11: expected ']' to end the section header" },
	{ "[Daemon]\njust words\n", NULL, "t.conf:2:1: expected Key=Value or [Section]" },
	{ "[Daemon]\n\tFoo=1\n", NULL,
	  "t.conf:2:2: unknown key 'Foo' in [Daemon]; expected RingBufferSize, WakeupBytes, Output, FlushIntervalMSec, StatsIntervalSec, VariableMaxAgeSec or RawPointers" },
	{ "[Daemon]\nRingBufferSzie=8M\n", NULL,
	  "t.conf:2:1: unknown key 'RingBufferSzie' in [Daemon]; did you mean 'RingBufferSize'?" },
	{ "[Daemon]\nringbuffersize=8M\n", NULL,
	  "t.conf:2:1: unknown key 'ringbuffersize' in [Daemon]; did you mean 'RingBufferSize'?" },
	{ "[Selection]\nEvent=sched:sched_switch\n", NULL,
	  "t.conf:2:1: unknown key 'Event' in [Selection]; did you mean 'Events'?" },
	{ "[Selection]\nName=a\nEvents=x:y\nAggregate=hist:keys=cpu\n  StackTrace=kernel\n", NULL,
	  "t.conf:5:14: StackTrace= adds stacks to records, and a selection with Aggregate= writes none; "
	  "expected StackTrace=no here (a histogram takes keys=common_stacktrace)" },
	{ "[Selection]\nName=a\nEvents=x:y\nStackTrace=all\n", NULL,
	  "t.conf:4:12: expected 'no', 'kernel', 'user' or 'both', got 'all'" },
	{ "[Selection]\nColour=blue\n", NULL,
	  "t.conf:2:1: unknown key 'Colour' in [Selection]; expected Name, Events, Filter, Unit, Priority, RateLimit, RateLimitBurst, Output, Trigger, Aggregate, AggregateIntervalSec, SyscallStrings or StackTrace" },
	{ "[Selection]\nName=a\nEvents=x:y\nTrigger=snapshot\n", NULL,
	  "t.conf:4:9: Trigger=snapshot takes a snapshot of the recorder's window, and no selection "
	  "records into it: expected a selection with Output=recorder" },
	{ "[Selection]\nName=a\nEvents=x:y\nOutput=recorder\nAggregate=hist:keys=cpu\nTrigger=snapshot\n", NULL,
	  "t.conf:6:9: Trigger=snapshot fires on records, and a selection with Aggregate= writes none; "
	  "expected Trigger=none here" },
	{ "[Selection]\nName=a\nEvents=x:y\nTrigger=yes\n", NULL,
	  "t.conf:4:9: expected 'none' or 'snapshot', got 'yes'" },
	{ "[Recorder]\nSize=1K\n", NULL, "t.conf:2:6: expected a size such as 256K, got '1K'" },
	{ "[Recorder]\nMaxSnapshots=-1\n", NULL,
	  "t.conf:2:14: expected a whole number from 0 to 1000000, got '-1'" },
	{ "[Daemon]\nRingBufferSize=3K\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got '3K'" },
	{ "[Daemon]\nRingBufferSize = 2G\n", NULL,
	  "t.conf:2:18: expected a power of two from 4K to 1G, got '2G'" },
	{ "[Daemon]\nRingBufferSize=2K\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got '2K'" },
	{ "[Daemon]\nRingBufferSize=lots\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got 'lots'" },
	{ "[Daemon]\nRingBufferSize=-8M\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got '-8M'" },
	{ "[Daemon]\nRingBufferSize=99999999999999999999\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got '99999999999999999999'" },
	{ "[Daemon]\nRingBufferSize=\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got ''" },
	{ "[Daemon]\nRingBufferSize=8Q\n", NULL,
	  "t.conf:2:16: expected a power of two from 4K to 1G, got '8Q'" },
	{ "[Daemon]\nWakeupBytes=some\n", NULL, "t.conf:2:13: expected a size such as 256K, got 'some'" },
	{ "[Daemon]\nWakeupBytes=4G\n", NULL, "t.conf:2:13: expected a size such as 256K, got '4G'" },
	{ "[Daemon]\nOutput=syslog\n", NULL, "t.conf:2:8: expected 'journal', 'stdout' or 'store', got 'syslog'" },
	{ "[Daemon]\nFlushIntervalMSec=0\n", NULL,
	  "t.conf:2:19: expected a whole number from 1 to 10000, got '0'" },
	{ "[Daemon]\nFlushIntervalMSec=10001\n", NULL,
	  "t.conf:2:19: expected a whole number from 1 to 10000, got '10001'" },
	{ "[Daemon]\nFlushIntervalMSec=1.5\n", NULL,
	  "t.conf:2:19: expected a whole number from 1 to 10000, got '1.5'" },
	{ "[Daemon]\nStatsIntervalSec=-1\n", NULL,
	  "t.conf:2:18: expected a whole number from 0 to 86400, got '-1'" },
	{ "[Daemon]\nRawPointers=maybe\n", NULL, "t.conf:2:13: expected a boolean (yes or no), got 'maybe'" },
	{ "[Selection]\nName=bad name!\n", NULL,
	  "t.conf:2:9: expected a name of letters, digits, '-', '_' and '.'" },
	{ "[Selection]\nName=\n", NULL, "t.conf:2:6: expected a name" },
	{ "[Selection]\nName=s\nEvents=sched\n", NULL,
	  "t.conf:3:8: expected subsystem:event (globs allowed), got 'sched'" },
	{ "[Selection]\nName=s\nEvents=sched:sched_switch :x\n", NULL,
	  "t.conf:3:27: expected subsystem:event (globs allowed), got ':x'" },
	{ "[Selection]\nName=s\nEvents=a:b:c\n", NULL,
	  "t.conf:3:8: expected subsystem:event (globs allowed), got 'a:b:c'" },
	{ "[Selection]\nName=s\nEvents=sched: \n", NULL,
	  "t.conf:3:8: expected subsystem:event (globs allowed), got 'sched:'" },
	{ "[Selection]\nName=s\nEvents=sched:a \\\n  irq\n", NULL,
	  "t.conf:4:3: expected subsystem:event (globs allowed), got 'irq'" },
	{ SEL "Priority=loud\n", NULL,
	  "t.conf:4:10: expected a syslog priority (emerg..debug or 0..7), got 'loud'" },
	{ SEL "Priority=8\n", NULL,
	  "t.conf:4:10: expected a syslog priority (emerg..debug or 0..7), got '8'" },
	{ SEL "RateLimit=fast\n", NULL,
	  "t.conf:4:11: expected a whole number from 0 to 100000000, got 'fast'" },
	{ SEL "RateLimitBurst=100000001\n", NULL,
	  "t.conf:4:16: expected a whole number from 0 to 100000000, got '100000001'" },
	{ "[Selection]\nEvents=sched:sched_switch\n", NULL, "t.conf:1:2: [Selection] needs a Name=" },
	{ "[Daemon]\n\n[Selection]\nName=s\n", NULL,
	  "t.conf:3:2: [Selection] 's' needs Events= with at least one subsystem:event" },
	{ SEL "Events=\n", NULL,
	  "t.conf:1:2: [Selection] 's' needs Events= with at least one subsystem:event" },
	{ SEL "\n" SEL, NULL,
	  "t.conf:5:2: selection 's' is already defined at t.conf:1; names must be unique" },
	{ SEL, SEL, "t.conf.d/10.conf:1:2: selection 's' is already defined at t.conf:1; names must be unique" },
	{ SEL, "[Daemon]\nOutput=file\n", "t.conf.d/10.conf:2:8: expected 'journal', 'stdout' or 'store', got 'file'" },
	{ "[Daemon]\n", NULL, "t.conf: no [Selection] configured: nothing to trace" },
	{ "# only a comment\n", NULL, "t.conf: no [Selection] configured: nothing to trace" },
	/* [Synthetic]: where the definition goes wrong, and what was expected there */
	{ "[Synthetic]\nEvent=x u64 a; foo b\n" SEL, NULL,
	  "t.conf:2:16: expected a type of the kernel's synthetic events: s64 u64 s32 u32 s16 u16 s8 u8 "
	  "char, unsigned char, short, unsigned short, int, unsigned int, long, unsigned long, bool, "
	  "pid_t, gfp_t, char[N]" },
	{ "[Synthetic]\nEvent = lat u64 a; \\\n   char s[300]\n" SEL, NULL,
	  "t.conf:3:10: expected a string length: char NAME[N], N from 1 to 256 (char NAME[], a dynamic "
	  "string, is not taken yet)" },
	{ "[Synthetic]\nEvent=9lives u64 a\n", NULL,
	  "t.conf:2:7: expected a synthetic event's name, then its fields: NAME TYPE FIELD; ..." },
	{ "[Synthetic]\nEvent=lonely\n", NULL,
	  "t.conf:2:13: expected at least one field: NAME TYPE FIELD; ..." },
	{ "[Synthetic]\nEvent=a u64 x\nEvent= a u32 y\n" SEL, NULL,
	  "t.conf:3:8: synthetic event 'a' is already defined at t.conf:2; names must be unique" },
	{ "[Synthetic]\nEvent=a u64 x\n" SEL, "[Synthetic]\nEvent=b u64 x\nEvent=a s64 y\n",
	  "t.conf.d/10.conf:3:7: synthetic event 'a' is already defined at t.conf:2; names must be unique" },
	{ "[Synthetic]\nColour=blue\n", NULL,
	  "t.conf:2:1: unknown key 'Colour' in [Synthetic]; expected Event" },
	{ "[Synthetic]\nEvents=a u64 x\n", NULL,
	  "t.conf:2:1: unknown key 'Events' in [Synthetic]; did you mean 'Event'?" },
	{ "[Daemon]\nRingBufferSize=8M\nWakeupBytes=8M\n" SEL, NULL,
	  "t.conf:3:13: WakeupBytes= must be below RingBufferSize= (8388608 bytes)" },
	{ "[Daemon]\nRingBufferSize=64K\n" SEL, "[Daemon]\nWakeupBytes=1M\n",
	  "t.conf.d/10.conf:2:13: WakeupBytes= must be below RingBufferSize= (65536 bytes)" },
};

static void every_error_message(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct diag d = { 0 };
		struct config c;
		char got[2048];
		int r;

		config_init(&c);
		r = config_parse_text(&c, "t.conf", bad[i].text, &d);
		if (r >= 0 && bad[i].dropin)
			r = config_parse_text(&c, "t.conf.d/10.conf", bad[i].dropin, &d);
		if (r >= 0) {
			/* config_finish names files[0] for errors without a line */
			c.files = calloc(1, sizeof(*c.files));
			c.files[0] = strdup("t.conf");
			c.n_files = c.cap_files = 1;
			r = config_finish(&c, &d);
		}
		diag_format(&d, got, sizeof(got));
		EXPECT(r == -EINVAL, "case %zu: r=%d", i, r);
		EXPECT(!strcmp(got, bad[i].want), "case %zu:\n#     got  '%s'\n#     want '%s'", i, got,
		       bad[i].want);
		config_free(&c);
	}
	printf("#   %zu error cases\n", ARRAY_SIZE(bad));
	EXPECT(ARRAY_SIZE(bad) >= 40, "only %zu cases", ARRAY_SIZE(bad));
}

static void the_caret_line_is_the_source_line(void)
{
	struct diag d = { 0 };
	struct config c;

	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", "[Daemon]\n  Output = pigeon  # why\n", &d) == -EINVAL, "parses");
	EXPECT_STREQ(d.source, "  Output = pigeon  # why");
	EXPECT(d.col == 12, "col %d", d.col);
	config_free(&c);
}

static void values_are_parsed(void)
{
	struct diag d = { 0 };
	struct config c;
	const char *text =
		"[Daemon]\nRingBufferSize=64KiB\nWakeupBytes=1K\nOutput=stdout\nFlushIntervalMSec=5\n"
		"StatsIntervalSec=0\nRawPointers=on\n"
		"[Selection]\nName=a.b\nEvents=sched:sched_switch \\\n  irq:* # two\n"
		"Filter=prev_pid == 1 # c\nPriority=warning\nRateLimit=10\n";

	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", text, &d) == 0, "%s", d.msg);
	c.files = calloc(1, sizeof(*c.files));
	c.files[0] = strdup("t.conf");
	c.n_files = c.cap_files = 1;
	EXPECT(config_finish(&c, &d) == 0, "%s", d.msg);
	EXPECT(c.ring_buffer_size == 65536, "%llu", (unsigned long long)c.ring_buffer_size);
	EXPECT(c.wakeup_bytes == 1024, "%llu", (unsigned long long)c.wakeup_bytes);
	EXPECT(c.output == OUTPUT_STDOUT && c.flush_interval_ms == 5 && !c.stats_interval_sec &&
	       c.raw_pointers, "daemon keys");
	EXPECT(c.n_sels == 1 && c.sels[0].n_events == 2, "events");
	if (c.n_sels == 1 && c.sels[0].n_events == 2) {
		EXPECT_STREQ(c.sels[0].events[1], "irq:*");
		EXPECT(c.sels[0].event_lines[1] == 11 && c.sels[0].event_cols[1] == 3,
		       "irq:* at %d:%d", c.sels[0].event_lines[1], c.sels[0].event_cols[1]);
		EXPECT_STREQ(c.sels[0].filter, "prev_pid == 1");
		EXPECT(c.sels[0].filter_pos.line == 12 && c.sels[0].filter_pos.col == 8, "filter pos");
		EXPECT(c.sels[0].priority == LOG_WARNING, "priority");
		EXPECT(c.sels[0].rate_limit == 10 && c.sels[0].rate_burst == 10, "burst defaults to the rate");
	}
	config_free(&c);
}

/* [Recorder]: MaxSnapshots=0 is no limit, not "none kept"; a drop-in's
 * value wins as for any key. */
static void recorder_keys_are_parsed(void)
{
	struct diag d = { 0 };
	struct config c;

	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", "[Recorder]\nSize=1M\nKeepAfterSec=0\n"
				 "MinIntervalSec=0\nMaxSnapshots=0\n", &d) == 0, "%s", d.msg);
	EXPECT(c.recorder.size == 1 << 20 && !c.recorder.keep_after_sec &&
	       !c.recorder.min_interval_sec && !c.recorder.max_snapshots, "MaxSnapshots=0: %u",
	       c.recorder.max_snapshots);
	EXPECT(config_parse_text(&c, "t.d/a.conf", "[Recorder]\nMaxSnapshots=1000000\n", &d) == 0,
	       "%s", d.msg);
	EXPECT(c.recorder.max_snapshots == 1000000, "%u", c.recorder.max_snapshots);
	config_free(&c);
}

/* [Synthetic] Event=: each line one definition, kept as written with where
 * it was written; an empty one resets the list; a drop-in adds to it. */
static void synthetic_events_are_listed(void)
{
	struct diag d = { 0 };
	struct config c;

	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", "[Synthetic]\nEvent=gone u64 x\nEvent=\n"
				 "Event=wakeup_latency u64 lat; pid_t pid; int prio\n"
				 "  Event = gone char comm[16] # again, after the reset\n" SEL, &d) == 0,
	       "%s", d.msg);
	EXPECT(config_parse_text(&c, "t.conf.d/10.conf", "[Synthetic]\nEvent=third u8 b\n", &d) == 0,
	       "%s", d.msg);
	EXPECT(c.n_synth == 3, "%zu definitions", c.n_synth);
	if (c.n_synth == 3) {
		EXPECT_STREQ(c.synth[0].def, "wakeup_latency u64 lat; pid_t pid; int prio");
		EXPECT_STREQ(c.synth[0].pos.file, "t.conf");
		EXPECT(c.synth[0].pos.line == 4 && c.synth[0].pos.col == 7, "at %d:%d",
		       c.synth[0].pos.line, c.synth[0].pos.col);
		EXPECT_STREQ(c.synth[1].def, "gone char comm[16]");
		EXPECT(c.synth[1].pos.line == 5 && c.synth[1].pos.col == 11, "at %d:%d",
		       c.synth[1].pos.line, c.synth[1].pos.col);
		EXPECT_STREQ(c.synth[1].pos.source, "  Event = gone char comm[16] # again, after the reset");
		EXPECT_STREQ(c.synth[2].pos.file, "t.conf.d/10.conf");
		EXPECT(c.n_sels == 1, "the selection after it");
	}
	config_free(&c);
}

/* systemd's parsers skip a UTF-8 byte-order mark; an editor may write one. */
static void a_byte_order_mark_is_skipped(void)
{
	struct diag d = { 0 };
	struct config c;

	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", "\xef\xbb\xbf[Daemon]\nOutput=stdout\n", &d) == 0, "%s", d.msg);
	EXPECT(c.output == OUTPUT_STDOUT, "the first section is read");
	config_free(&c);
	/* Only at the start: elsewhere it is a byte of an unknown key. */
	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", "[Daemon]\n\xef\xbb\xbfOutput=stdout\n", &d) == -EINVAL,
	       "a BOM inside is not skipped");
	config_free(&c);
}

/* The key table (config_table.c): every row works as it says. */

static int parse_one(const char *section, const char *key, const char *v, struct diag *d)
{
	char text[512];
	struct config c;
	int r;

	snprintf(text, sizeof(text), "[%s]\n%s=%s\n", section, key, v);
	config_init(&c);
	r = config_parse_text(&c, "t.conf", text, d);
	config_free(&c);
	return r;
}

/* A valid value: the default, or for a required key (no default) one here. */
static const char *valid_value(const struct config_item *it)
{
	if (it->def)
		return it->def;
	if (!strcmp(it->key, "Name"))
		return "s";
	if (!strcmp(it->key, "Events"))
		return "sched:sched_switch";
	if (!strcmp(it->key, "Unit"))
		return "nginx.service php-fpm*.service getty@tty1 system.slice";
	return NULL;
}

/* Values outside the item's limits or names; none for Filter=, which is
 * only checked against an event's fields when compiled (test_filter.c). */
static size_t bad_values(const struct config_item *it, char bad[2][64])
{
	const struct config_type *t = it->type;
	size_t n = 0;

	if (t == &config_type_uint || t == &config_type_size || t == &config_type_pow2) {
		/* for a power of two, one that is a power of two but too big */
		snprintf(bad[n++], 64, "%llu", t == &config_type_pow2 ? (unsigned long long)it->max * 2 :
			 (unsigned long long)it->max + 1);
		if (it->min)
			snprintf(bad[n++], 64, "%llu", t == &config_type_pow2 ? (unsigned long long)it->min / 2 :
				 (unsigned long long)it->min - 1);
	} else if (t == &config_type_bool) {
		snprintf(bad[n++], 64, "maybe");
	} else if (t == &config_type_enum || t == &config_type_priority) {
		snprintf(bad[n++], 64, "no-such-value");
	} else if (t == &config_type_name) {
		snprintf(bad[n++], 64, "bad name!");
	} else if (t == &config_type_events) {
		snprintf(bad[n++], 64, "sched");
	} else if (t == &config_type_path) {
		snprintf(bad[n++], 64, "var/lib/tracerd");
	} else if (t == &config_type_listen) {
		snprintf(bad[n++], 64, "localhost:9464");	/* numeric only */
		snprintf(bad[n++], 64, "127.0.0.1:65536");
	} else if (t == &config_type_units) {
		snprintf(bad[n++], 64, "getty@.service");	/* a template runs nowhere */
		snprintf(bad[n++], 64, "a/b.service");
	}
	return n;
}

static void every_key_takes_a_valid_value_and_refuses_a_bad_one(void)
{
	size_t n, n_bad = 0;
	const struct config_item *t = config_table(&n);

	for (size_t i = 0; i < n; i++) {
		const char *v = valid_value(&t[i]);
		char bad[2][64], want[512], what[256];
		size_t k = bad_values(&t[i], bad);
		struct diag d = { 0 };

		EXPECT(v, "no valid value for %s= to try", t[i].key);
		EXPECT(!v || parse_one(t[i].section, t[i].key, v, &d) == 0, "%s=%s: %s", t[i].key, v, d.msg);
		/* [Synthetic]'s errors say what the definition lacks: every_error_message */
		EXPECT(k || t[i].type == &config_type_filter || t[i].type == &config_type_hist ||
		       t[i].type == &config_type_synthetic, "no bad value for %s= to try", t[i].key);
		config_item_expects(&t[i], what, sizeof(what));
		snprintf(want, sizeof(want), "expected %s", what);
		for (size_t j = 0; j < k; j++, n_bad++) {
			memset(&d, 0, sizeof(d));
			EXPECT(parse_one(t[i].section, t[i].key, bad[j], &d) == -EINVAL, "%s=%s", t[i].key, bad[j]);
			EXPECT(d.line == 2 && !strncmp(d.msg, want, strlen(want)),
			       "%s=%s: %d: '%s', want '%s...'", t[i].key, bad[j], d.line, d.msg, want);
		}
	}
	printf("#   %zu keys, %zu bad values\n", n, n_bad);
}

static size_t field_size(const struct config_type *t)
{
	if (t == &config_type_uint)
		return sizeof(unsigned);
	if (t == &config_type_size || t == &config_type_pow2)
		return sizeof(uint64_t);
	if (t == &config_type_bool)
		return sizeof(bool);
	if (t == &config_type_enum || t == &config_type_priority)
		return sizeof(int);
	return 0;	/* strings: compared as such */
}

/* A fresh config (and a fresh [Selection]) holds each key's table default:
 * the default parsed on its own into that field gives the same bytes. */
static void the_defaults_are_the_tables(void)
{
	size_t n;
	const struct config_item *t = config_table(&n);
	struct diag d = { 0 };
	struct config c;

	config_init(&c);
	EXPECT(config_parse_text(&c, "t.conf", "[Selection]\n", &d) == 0, "%s", d.msg);
	for (size_t i = 0; i < n && c.n_sels == 1; i++) {
		bool daemon = strcmp(t[i].section, "Selection") != 0;	/* [Store] too */
		struct config zc = { 0 };
		struct selection zs = { 0 };
		void *base = daemon ? (void *)&zc : (void *)&zs;
		char *want = (char *)base + t[i].offset;
		const char *got = (const char *)(daemon ? (void *)&c : (void *)&c.sels[0]) + t[i].offset;
		size_t size = field_size(t[i].type);

		if (!t[i].def || parse_one(t[i].section, t[i].key, t[i].def, &d) < 0)
			continue;	/* required, or reported above */
		/* no parser state: a valid value needs none (checked just above) */
		EXPECT(t[i].type->parse(NULL, &t[i], t[i].def, 1, want, base) == 0, "%s", t[i].key);
		if (size) {
			EXPECT(!memcmp(want, got, size), "%s: config_init is not the table's '%s'",
			       t[i].key, t[i].def);
		} else {
			const char *a = *(char **)want, *b = *(char *const *)got;

			EXPECT(!strcmp(a ? a : "", b ? b : ""), "%s: '%s', want '%s'", t[i].key, b, a);
			free(*(char **)want);
		}
	}
	/* and what they are, as tracerd.conf(5) states them (its Default: lines) */
	EXPECT(c.ring_buffer_size == 8 << 20 && !c.wakeup_bytes && c.output == OUTPUT_JOURNAL &&
	       c.flush_interval_ms == 100 && c.stats_interval_sec == 60 && !c.raw_pointers, "daemon");
	EXPECT(c.n_sels == 1 && c.sels[0].priority == LOG_INFO && !c.sels[0].rate_limit &&
	       !c.sels[0].rate_burst && !c.sels[0].filter, "selection");
	EXPECT(c.recorder.size == 64 << 20 && c.recorder.keep_after_sec == 5 &&
	       c.recorder.min_interval_sec == 60 && c.recorder.max_snapshots == 10, "recorder");
	config_free(&c);
}

/* The "expected ..." list of an unknown key is the table's keys in order. */
static void the_expected_keys_are_the_tables(void)
{
	static const struct { const char *section, *pinned; } sections[] = {
		{ "Daemon", "RingBufferSize, WakeupBytes, Output, FlushIntervalMSec, StatsIntervalSec, VariableMaxAgeSec or RawPointers" },
		{ "Store", "Directory, MaxUse, MaxFileSize, MaxFileSec, SyncIntervalSec or Compression" },
		{ "Synthetic", "Event" },
		{ "Recorder", "Size, KeepAfterSec, MinIntervalSec or MaxSnapshots" },
		{ "Selection", "Name, Events, Filter, Unit, Priority, RateLimit, RateLimitBurst, Output, Trigger, Aggregate, AggregateIntervalSec, SyscallStrings or StackTrace" },
	};
	size_t n;
	const struct config_item *t = config_table(&n);

	for (size_t s = 0; s < ARRAY_SIZE(sections); s++) {
		char list[512] = "", want[1024], text[64];
		size_t n_keys = 0, k = 0;
		struct diag d = { 0 };
		struct config c;

		for (size_t i = 0; i < n; i++)
			n_keys += !strcmp(t[i].section, sections[s].section);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(t[i].section, sections[s].section))
				continue;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 k == 0 ? "" : k + 1 == n_keys ? " or " : ", ", t[i].key);
			k++;
		}
		EXPECT_STREQ(list, sections[s].pinned);
		snprintf(text, sizeof(text), "[%s]\nXyzzyPlugh=1\n", sections[s].section);
		snprintf(want, sizeof(want), "unknown key 'XyzzyPlugh' in [%s]; expected %s",
			 sections[s].section, list);
		config_init(&c);
		EXPECT(config_parse_text(&c, "t.conf", text, &d) == -EINVAL, "%s", text);
		EXPECT_STREQ(d.msg, want);
		config_free(&c);
	}
}

/* What tracerd.conf(5) will be made from: complete, and consistent. */
static void the_table_is_complete(void)
{
	size_t n;
	const struct config_item *t = config_table(&n);

	for (size_t i = 0; i < n; i++) {
		EXPECT(!strcmp(t[i].section, "Daemon") || !strcmp(t[i].section, "Store") ||
		       !strcmp(t[i].section, "Synthetic") || !strcmp(t[i].section, "Metrics") ||
		       !strcmp(t[i].section, "Recorder") ||
		       !strcmp(t[i].section, "Selection"), "%s",
		       t[i].key);
		EXPECT(t[i].type && t[i].type->name && t[i].description && *t[i].description, "%s", t[i].key);
		EXPECT(config_find(t[i].section, t[i].key) == &t[i], "%s is in the table twice", t[i].key);
		EXPECT(t[i].type != &config_type_uint || t[i].max <= UINT_MAX, "%s", t[i].key);
		EXPECT((t[i].type != &config_type_enum && t[i].type != &config_type_priority) || t[i].names,
		       "%s", t[i].key);
		EXPECT(t[i].min <= t[i].max, "%s", t[i].key);
	}
	EXPECT(n == 33, "%zu keys", n);
}

/* The command line's selection: options named after the keys, parsed as
 * a file's lines, diagnosed by option; it replaces the file's selections
 * and keeps its [Daemon]. */
static void a_selection_from_the_command_line(void)
{
	const struct config_arg args[] = {
		{ config_find("Selection", "Events"), "sched:sched_switch sched:sched_wakeup" },
		{ config_find("Selection", "Events"), "irq:*" },
		{ config_find("Selection", "RateLimit"), "10" },
		{ config_find("Selection", "Priority"), "debug" },
	}, bad_arg[] = {
		{ config_find("Selection", "Events"), "sched:sched_switch" },
		{ config_find("Selection", "RateLimitBurst"), "lots" },
	};
	char path[] = "/tmp/tracerd-test-conf-XXXXXX", opt[64];
	int fd = mkstemp(path);
	static const char text[] = "[Daemon]\nStatsIntervalSec=7\n" SEL;
	struct diag d = { 0 };
	struct config c;

	config_item_option(config_find("Selection", "AggregateIntervalSec"), opt, sizeof(opt));
	EXPECT_STREQ(opt, "--aggregate-interval-sec");
	EXPECT(fd >= 0 && write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1, "tmp file");
	EXPECT(config_load_args(path, args, ARRAY_SIZE(args), &c, &d) == 0, "%s", d.msg);
	if (!d.msg[0]) {
		EXPECT(c.n_sels == 1 && !strcmp(c.sels[0].name, CONFIG_ARGS_NAME), "one selection, cmdline");
		EXPECT(c.sels[0].n_events == 3 && !strcmp(c.sels[0].events[2], "irq:*"), "3 globs");
		EXPECT(c.sels[0].rate_limit == 10 && c.sels[0].rate_burst == 10, "RateLimit=");
		EXPECT(c.sels[0].priority == LOG_DEBUG, "Priority=");
		EXPECT(c.stats_interval_sec == 7, "the file's [Daemon] stays");
		config_free(&c);
	}
	EXPECT(config_load_args(NULL, bad_arg, ARRAY_SIZE(bad_arg), &c, &d) < 0, "a bad value");
	EXPECT_STREQ(d.file, "--rate-limit-burst");
	EXPECT(d.line == 1 && d.col == 1 && !strcmp(d.source, "lots"), "%d:%d '%s'", d.line, d.col,
	       d.source);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* --synthetic: added to the file's [Synthetic], whether or not a selection
 * is given too (the file's selections stay without one); diagnosed as
 * "--synthetic:1:COL"; alone (config_load_synthetic) for --describe. */
static void synthetic_events_from_the_command_line(void)
{
	const struct config_item *ev = config_find("Synthetic", "Event");
	const struct config_arg args[] = {
		{ ev, "wakeup_latency u64 lat; pid_t pid" },
	}, bad_arg[] = {
		{ ev, "x u64 a; foo b" },
	}, dup_arg[] = {
		{ ev, "from_file u32 y" },
	}, with_sel[] = {
		{ config_find("Selection", "Events"), "synthetic:*" },
		{ ev, "late s32 z" },
	};
	char path[] = "/tmp/tracerd-test-conf-XXXXXX", opt[64];
	int fd = mkstemp(path);
	static const char text[] = "[Synthetic]\nEvent=from_file u64 x\n" SEL;
	struct diag d = { 0 };
	struct config c;

	config_item_option(ev, opt, sizeof(opt));
	EXPECT_STREQ(opt, "--synthetic");
	EXPECT(fd >= 0 && write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1, "tmp file");
	EXPECT(config_load_args(path, args, ARRAY_SIZE(args), &c, &d) == 0, "%s", d.msg);
	if (!d.msg[0]) {
		EXPECT(c.n_synth == 2 && !strcmp(c.synth[1].def, args[0].value), "the file's, then args'");
		EXPECT(c.n_sels == 1 && !strcmp(c.sels[0].name, "s"), "the file's selection stays");
		EXPECT(c.n_synth == 2 && !strcmp(c.synth[1].pos.file, "--synthetic") &&
		       c.synth[1].pos.line == 1 && c.synth[1].pos.col == 1, "--synthetic's position");
		config_free(&c);
	}
	EXPECT(config_load_args(path, with_sel, ARRAY_SIZE(with_sel), &c, &d) == 0, "%s", d.msg);
	if (!d.msg[0]) {
		EXPECT(c.n_synth == 2 && c.n_sels == 1 && !strcmp(c.sels[0].name, CONFIG_ARGS_NAME),
		       "the command line's selection, both synthetic events");
		config_free(&c);
	}
	EXPECT(config_load_args(path, bad_arg, ARRAY_SIZE(bad_arg), &c, &d) < 0, "a bad definition");
	EXPECT_STREQ(d.file, "--synthetic");
	EXPECT(d.line == 1 && d.col == 10 && !strcmp(d.source, "x u64 a; foo b"), "%d:%d '%s'",
	       d.line, d.col, d.source);
	memset(&d, 0, sizeof(d));
	EXPECT(config_load_args(path, dup_arg, ARRAY_SIZE(dup_arg), &c, &d) < 0, "a name twice");
	EXPECT(!strcmp(d.file, "--synthetic") &&
	       strstr(d.msg, "'from_file' is already defined at /tmp/tracerd-test-conf-"), "%s: %s",
	       d.file, d.msg);
	EXPECT(config_load_synthetic(args, ARRAY_SIZE(args), &c, &d) == 0 && c.n_synth == 1 &&
	       !c.n_sels, "--synthetic alone: %s", d.msg);
	config_free(&c);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

int main(void)
{
	RUN(every_error_message);
	RUN(the_caret_line_is_the_source_line);
	RUN(values_are_parsed);
	RUN(recorder_keys_are_parsed);
	RUN(synthetic_events_are_listed);
	RUN(a_byte_order_mark_is_skipped);
	RUN(every_key_takes_a_valid_value_and_refuses_a_bad_one);
	RUN(the_defaults_are_the_tables);
	RUN(the_expected_keys_are_the_tables);
	RUN(the_table_is_complete);
	RUN(a_selection_from_the_command_line);
	RUN(synthetic_events_from_the_command_line);
	return TEST_EXIT();
}
