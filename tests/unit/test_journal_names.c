// SPDX-License-Identifier: GPL-2.0
/* Journal field names for event fields: valid (A-Z, 0-9, _), at most 64
 * characters with _RAW, clear of the fields tracerd sets itself, and
 * distinct within an event even where upper-casing or cutting collides. */
#include <ctype.h>
#include <stdlib.h>
#include "kernel-events/events.h"
#include "sink/journal_fields.h"
#include "sink/sink.h"
#include "test.h"
#include "util.h"

static char *name_of(const char *field)
{
	static char buf[128];

	journal_field_name(field, buf, sizeof(buf));
	return buf;
}

static void plain_and_reserved(void)
{
	EXPECT_STREQ(name_of("prev_state"), "TRACE_PREV_STATE");
	EXPECT_STREQ(name_of("newstate"), "TRACE_NEWSTATE");
	EXPECT_STREQ(name_of("sa.handler-x"), "TRACE_SA_HANDLER_X");
	/* The record header's fields and tracerd's own keep their names. */
	EXPECT_STREQ(name_of("pid"), "TRACE_FIELD_PID");
	EXPECT_STREQ(name_of("comm"), "TRACE_FIELD_COMM");
	EXPECT_STREQ(name_of("cpu"), "TRACE_FIELD_CPU");
	EXPECT_STREQ(name_of("stats"), "TRACE_FIELD_STATS");
	EXPECT_STREQ(name_of("stats_lost"), "TRACE_FIELD_STATS_LOST");
	EXPECT_STREQ(name_of("timestamp_ns"), "TRACE_FIELD_TIMESTAMP_NS");
}

/* Every field tracerd writes itself, from the one list: a field named
 * like it (any case) moves aside to TRACE_FIELD_<NAME>. */
static void header_fields_reserved(void)
{
#define CHECK(id, name) do {						\
		char lower[64];						\
		size_t k = 0;						\
									\
		for (const char *p = #id; *p; p++)			\
			lower[k++] = tolower((unsigned char)*p);	\
		lower[k] = 0;						\
		EXPECT_STREQ(name, "TRACE_" #id);			\
		EXPECT_STREQ(name_of(lower), "TRACE_FIELD_" #id);	\
		EXPECT_STREQ(name_of(#id), "TRACE_FIELD_" #id);		\
	} while (0);
	TRACE_HEADER_FIELDS(CHECK)
	TRACE_CGROUP_FIELDS(CHECK)
	TRACE_MARKER_FIELDS(CHECK)
	TRACE_STACK_FIELDS(CHECK)
#undef CHECK
	EXPECT_STREQ(name_of(TRACE_RESERVED_PREFIX "x"), "TRACE_FIELD_" TRACE_RESERVED_PREFIX "X");
}

static bool valid(const char *n)
{
	if (strlen(n) > 64 || !isupper((unsigned char)n[0]))
		return false;
	for (const char *p = n; *p; p++)
		if (!isupper((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

static const char clash_format[] =
	"name: clash\nID: 9998\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:long prev_state;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:long prev_state_raw;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\tfield:int pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int field_pid;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int a_field_name_that_is_far_too_long_for_the_journal_to_take_1;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\tfield:int a_field_name_that_is_far_too_long_for_the_journal_to_take_2;\toffset:36;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_state=%ld\", REC->prev_state\n";

static void distinct_within_an_event(void)
{
	struct tp_event *e = NULL;
	char **names = NULL;

	EXPECT(tp_format_parse(clash_format, &e, NULL) == 0, "parse");
	if (!e)
		return;
	EXPECT(journal_event_field_names(e, &names) == 0, "names");
	for (size_t i = 0; names && i < e->n_fields; i++) {
		char raw[128];

		if (e->fields[i].is_common) {
			EXPECT(!names[i], "common field %s has a name", e->fields[i].name);
			continue;
		}
		EXPECT(names[i], "field %s has no name", e->fields[i].name);
		if (!names[i])
			continue;
		snprintf(raw, sizeof(raw), "%s_RAW", names[i]);
		EXPECT(valid(names[i]) && valid(raw), "'%s' is not a valid journal name", raw);
		for (size_t k = 0; k < i; k++) {
			char rawk[128];

			if (!names[k])
				continue;
			snprintf(rawk, sizeof(rawk), "%s_RAW", names[k]);
			EXPECT(strcmp(names[i], names[k]) && strcmp(names[i], rawk) && strcmp(raw, names[k]),
			       "%s (%s) clashes with %s (%s)", names[i], e->fields[i].name, names[k],
			       e->fields[k].name);
		}
	}
	if (names) {
		EXPECT_STREQ(names[4], "TRACE_PREV_STATE");
		EXPECT_STREQ(names[6], "TRACE_FIELD_PID");
	}
	strv_free(names, e->n_fields);
	tp_event_free(e);
}

int main(void)
{
	RUN(plain_and_reserved);
	RUN(header_fields_reserved);
	RUN(distinct_within_an_event);
	return TEST_EXIT();
}
