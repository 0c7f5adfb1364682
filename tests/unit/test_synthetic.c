// SPDX-License-Identifier: GPL-2.0
/* Synthetic event definitions (issue 31): the format the kernel's
 * trace_events_synth.c would give them, their records rendered as its
 * print_synth_event() prints the `trace` line, and bad definitions pointed
 * at. This kernel has no CONFIG_SYNTH_EVENTS: the expected texts are the
 * kernel source's rules, written out by hand. */
#include <errno.h>
#include <stdlib.h>
#include "kernel-events/events.h"
#include "render/render.h"
#include "test.h"
#include "util.h"

static const char wakeup_format[] =
	"name: wakeup_latency\nID: 40001\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:u64 lat;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:24;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"lat=%llu pid=%d prio=%d\", REC->lat, REC->pid, REC->prio\n";

static char *render(const struct tp_event *e, const uint8_t *rec, size_t len)
{
	const struct render_opts o = { .raw_pointers = true };
	struct strbuf sb = { 0 };
	char *s;

	render_event(e, &o, rec, len, &sb);
	s = strdup(sb_str(&sb));
	sb_free(&sb);
	return s;
}

/* The example: its format, its fields, and the kernel's line. */
static void wakeup_latency(void)
{
	const char *def = "wakeup_latency u64 lat; pid_t pid; int prio";
	struct tp_synth_error err;
	struct tp_event *e = NULL;
	uint8_t rec[32] = { 0 };
	uint64_t lat = 12;
	int32_t pid = 4711, prio = 120;
	char *text = NULL, *line;

	EXPECT(tp_synthetic_format(def, 40001, &text, &err) == 0, "format: %s", err.expected);
	EXPECT(text && !strcmp(text, wakeup_format), "the format:\n%s", text);
	free(text);
	if (tp_synthetic_parse(def, 40001, &e, &err) < 0) {
		EXPECT(0, "parse: %s", err.expected);
		return;
	}
	EXPECT(!strcmp(e->system, "synthetic") && !strcmp(e->name, "wakeup_latency") && e->id == 40001,
	       "%s:%s %d", e->system, e->name, e->id);
	EXPECT(e->n_fields == 7 && e->fixed_size == 28, "%zu fields, %u bytes", e->n_fields, e->fixed_size);
	memcpy(rec + 8, &lat, 8);
	memcpy(rec + 16, &pid, 4);
	memcpy(rec + 24, &prio, 4);
	EXPECT(render_prepare(e) == 0, "render_prepare");
	line = render(e, rec, sizeof(rec));
	EXPECT(line && !strcmp(line, "lat=12 pid=4711 prio=120"), "'%s'", line);
	free(line);
	render_release(e);
	tp_event_free(e);
}

/* Every type of synth_field_size(), signed as synth_field_signed() says, a
 * u64 slot each; a char[N] string in 256 bytes. */
static void types_and_slots(void)
{
	const char *def = " every  s64 a; u64 b; s32 c; u32 d; s16 e; u16 f; s8 g; u8 h; char i; "
			  "unsigned char j; short k; unsigned short l; int m; unsigned int n; long o; "
			  "unsigned long p; bool q; pid_t r; gfp_t s; char name[16]; u64 after;";
	static const struct { const char *name; unsigned size; bool is_signed; } want[] = {
		{ "a", 8, 1 }, { "b", 8, 0 }, { "c", 4, 1 }, { "d", 4, 0 }, { "e", 2, 1 }, { "f", 2, 0 },
		{ "g", 1, 1 }, { "h", 1, 0 }, { "i", 1, 1 }, { "j", 1, 0 }, { "k", 2, 1 }, { "l", 2, 0 },
		{ "m", 4, 1 }, { "n", 4, 0 }, { "o", 8, 1 }, { "p", 8, 0 }, { "q", 1, 1 }, { "r", 4, 1 },
		{ "s", 4, 0 }, { "name", 16, 1 }, { "after", 8, 0 },
	};
	struct tp_synth_error err;
	struct tp_event *e = NULL;

	if (tp_synthetic_parse(def, 40002, &e, &err) < 0) {
		EXPECT(0, "parse at %d: %s", err.off, err.expected);
		return;
	}
	EXPECT(e->n_fields == 4 + ARRAY_SIZE(want), "%zu fields", e->n_fields);
	for (size_t i = 0; i < ARRAY_SIZE(want) && 4 + i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[4 + i];
		unsigned off = i < 20 ? 8 + 8 * i : 8 + 8 * 19 + 256;

		EXPECT(!strcmp(f->name, want[i].name) && f->size == want[i].size &&
		       f->is_signed == want[i].is_signed && f->offset == off,
		       "%s: size %u signed %d offset %u", f->name, f->size, f->is_signed, f->offset);
	}
	EXPECT(e->fields[23].is_string && e->fields[23].kind == TP_FIELD_ARRAY, "name is a char array");
	EXPECT(strstr(e->print_fmt, "\"a=%lld b=%llu ") && strstr(e->print_fmt, " s=%x name=%s after=%llu\""),
	       "%s", e->print_fmt);
	tp_event_free(e);
}

/* A bad definition: where, and what was expected there. A name is one
 * field's: Filter= and the print fmt name fields by it. */
static void bad_definitions(void)
{
	static const struct { const char *def; int off; const char *expected; } cases[] = {
		{ "lat u65 x", 4, "a type of the kernel's synthetic events" },
		{ "lat u64 x; char s[]", 17, "a string length" },
		{ "lat u64 x; char s[300]", 17, "a string length" },
		{ "lat u64 x; int s[4]", 11, "an array of char only" },
		{ "1lat u64 x", 0, "a synthetic event's name" },
		{ "lat", 3, "at least one field" },
		{ "lat u64", 4, "a field: TYPE NAME" },
		{ "lat u64 x;; int y", 10, "a field: TYPE NAME" },
		{ "lat u64 x-y", 4, "a type of the kernel's synthetic events" },
		{ "lat u64 x; int y; s8 x", 21, "a field name not taken yet" },
		{ "lat int common_pid", 8, "a field name not taken yet" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tp_synth_error err;
		char *text = NULL;
		int r = tp_synthetic_format(cases[i].def, 1, &text, &err);

		EXPECT(r == -EINVAL && err.off == cases[i].off && err.expected &&
		       !strncmp(err.expected, cases[i].expected, strlen(cases[i].expected)),
		       "'%s': %d at %d: %s", cases[i].def, r, err.off, err.expected);
		free(text);
	}
}

int main(void)
{
	RUN(wakeup_latency);
	RUN(types_and_slots);
	RUN(bad_definitions);
	return TEST_EXIT();
}
