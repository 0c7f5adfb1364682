// SPDX-License-Identifier: GPL-2.0
/* The format parser against every format file captured from this kernel
 * (tests/fixtures/formats-6.18.txt), and against hand-made shapes the
 * kernel does not use today (__rel_loc). */
#include <stdlib.h>
#include "kernel-events/events.h"
#include "fixtures.h"
#include "test.h"
#include "util.h"

static struct tp_event *parse(const char *name)
{
	struct tp_event *e = NULL;

	for (size_t i = 0; i < n_fixtures; i++)
		if (!strcmp(fixtures[i].name, name)) {
			EXPECT(tp_format_parse(fixtures[i].text, &e, NULL) == 0, "%s does not parse", name);
			return e;
		}
	EXPECT(0, "no fixture %s", name);
	return NULL;
}

static void every_captured_format_parses(void)
{
	size_t dyn_fields = 0, arrays = 0;

	EXPECT(n_fixtures == 2323, "expected 2323 fixtures, got %zu", n_fixtures);
	for (size_t i = 0; i < n_fixtures; i++) {
		struct tp_event *e = NULL;
		unsigned end = 8;
		int line = 0, r = tp_format_parse(fixtures[i].text, &e, &line);

		EXPECT(r == 0, "%s: error %d at line %d", fixtures[i].name, r, line);
		if (r)
			continue;
		EXPECT(e->n_fields >= 4 && !strcmp(e->fields[0].name, "common_type"),
		       "%s: common fields missing", fixtures[i].name);
		for (size_t k = 4; k < e->n_fields; k++) {
			const struct tp_field *f = &e->fields[k];

			/* Fields are laid out in order and do not overlap. */
			EXPECT(f->offset >= end || f->kind == TP_FIELD_FLEX,
			       "%s.%s overlaps the field before", fixtures[i].name, f->name);
			end = f->offset + f->size;
			EXPECT(!f->is_common, "%s.%s marked common", fixtures[i].name, f->name);
			dyn_fields += f->kind == TP_FIELD_DATA_LOC;
			arrays += f->kind == TP_FIELD_ARRAY;
			if (f->kind == TP_FIELD_ARRAY)
				EXPECT(f->elem_size * f->array_len == f->size, "%s.%s array size",
				       fixtures[i].name, f->name);
		}
		EXPECT(e->fixed_size >= end || e->fields[e->n_fields - 1].kind == TP_FIELD_FLEX,
		       "%s: fixed size %u < %u", fixtures[i].name, e->fixed_size, end);
		tp_event_free(e);
	}
	/* Counted with grep on the same files: 320 char[] and 16 other __data_loc
	 * arrays; 283 fixed arrays. */
	EXPECT(dyn_fields == 336, "got %zu __data_loc fields", dyn_fields);
	EXPECT(arrays == 283, "got %zu fixed arrays", arrays);
}

static void scalar_fields_of_sched_switch(void)
{
	struct tp_event *e = parse("sched:sched_switch");
	const struct tp_field *f;

	if (!e)
		return;
	EXPECT_STREQ(e->name, "sched_switch");
	EXPECT(e->id > 0, "id %d", e->id);
	f = tp_event_field(e, "prev_comm");
	EXPECT(f && f->kind == TP_FIELD_ARRAY && f->offset == 8 && f->size == 16 &&
	       f->array_len == 16 && f->is_string, "prev_comm");
	f = tp_event_field(e, "prev_state");
	EXPECT(f && f->kind == TP_FIELD_SCALAR && f->offset == 32 && f->size == 8 && f->is_signed,
	       "prev_state");
	EXPECT_STREQ(f ? f->type : NULL, "long");
	f = tp_event_field(e, "next_pid");
	EXPECT_STREQ(f ? f->type : NULL, "pid_t");
	EXPECT(e->fixed_size == 64, "fixed size %u", e->fixed_size);
	EXPECT(!strncmp(e->print_fmt, "\"prev_comm=%s", 13), "print fmt %s", e->print_fmt);
	tp_event_free(e);
}

static void data_loc_string(void)
{
	struct tp_event *e = parse("sched:sched_process_exec");
	const struct tp_field *f = e ? tp_event_field(e, "filename") : NULL;

	EXPECT(f && f->kind == TP_FIELD_DATA_LOC && f->is_string && f->elem_size == 1 &&
	       f->offset == 8 && f->size == 4, "filename");
	EXPECT_STREQ(f ? f->type : NULL, "__data_loc char[]");
	tp_event_free(e);
}

/* Every __data_loc element type this kernel uses. */
static void data_loc_arrays(void)
{
	static const struct { const char *event, *field; unsigned elem; bool str; } cases[] = {
		{ "ipi:ipi_send_cpumask", "cpumask", 8, false },	/* __data_loc cpumask_t */
		{ "dma:dma_map_sg", "phys_addrs", 8, false },		/* u64[] */
		{ "dma:dma_map_sg", "dma_addrs", 8, false },
		{ "dma:dma_map_sg", "lengths", 4, false },		/* unsigned int[] */
		{ "sched:sched_prepare_exec", "interp", 1, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tp_event *e = parse(cases[i].event);
		const struct tp_field *f = e ? tp_event_field(e, cases[i].field) : NULL;

		EXPECT(f && f->kind == TP_FIELD_DATA_LOC && f->elem_size == cases[i].elem &&
		       f->is_string == cases[i].str, "%s.%s", cases[i].event, cases[i].field);
		tp_event_free(e);
	}
}

static void syscall_fields(void)
{
	struct tp_event *e = parse("syscalls:sys_enter_openat");
	const struct tp_field *f = e ? tp_event_field(e, "filename") : NULL;

	EXPECT(f && f->kind == TP_FIELD_SCALAR && f->size == 8 && f->offset == 24, "filename");
	EXPECT_STREQ(f ? f->type : NULL, "const char *");
	tp_event_free(e);
}

static const char rel_loc_format[] =
	"name: rel_test\nID: 9999\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__rel_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc u32[] vals;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long stack[];\toffset:16;\tsize:0;\tsigned:0;\n\n"
	"print fmt: \"name=%s\", __get_rel_str(name)\n";

static void rel_loc_and_flex(void)
{
	struct tp_event *e = NULL;
	const struct tp_field *f;

	EXPECT(tp_format_parse(rel_loc_format, &e, NULL) == 0, "parse");
	if (!e)
		return;
	f = tp_event_field(e, "name");
	EXPECT(f && f->kind == TP_FIELD_REL_LOC && f->is_string, "name");
	f = tp_event_field(e, "vals");
	EXPECT(f && f->kind == TP_FIELD_REL_LOC && f->elem_size == 4 && !f->is_string, "vals");
	f = tp_event_field(e, "stack");
	EXPECT(f && f->kind == TP_FIELD_FLEX && f->elem_size == 8, "stack");
	EXPECT(e->fixed_size == 16, "fixed %u", e->fixed_size);
	tp_event_free(e);
}

static void malformed_formats_fail(void)
{
	static const char *const bad[] = {
		"",
		"name: x\nID: 1\nformat:\n",				/* no fields, no print fmt */
		"name: x\nID: 1\nformat:\n\tfield:int;\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:zz;\nprint fmt: \"\"\n",
		"name: x\nID: 1\nformat:\n\tfield:char a[;\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tp_event *e = NULL;

		EXPECT(tp_format_parse(bad[i], &e, NULL) < 0 && !e, "bad[%zu] parsed", i);
	}
}

static void globs(void)
{
	EXPECT(tp_glob_match("sched:sched_process_*", "sched:sched_process_exec"), "*");
	EXPECT(!tp_glob_match("sched:sched_process_*", "sched:sched_switch"), "* no");
	EXPECT(tp_glob_match("ext4:ext4_fc_track_*", "ext4:ext4_fc_track_create"), "ext4");
	EXPECT(tp_glob_match("sock:*", "sock:inet_sock_set_state"), "sock");
	EXPECT(tp_glob_match("*:*", "a:b"), "*:*");
	EXPECT(tp_glob_match("sched:sched_?akeup", "sched:sched_wakeup"), "?");
	EXPECT(tp_glob_match("irq:softirq_[er]*", "irq:softirq_raise"), "[]");
	EXPECT(!tp_glob_match("irq:softirq_[!er]*", "irq:softirq_raise"), "[!]");
	EXPECT(tp_glob_match("a*b*c", "aXXbYYc") && !tp_glob_match("a*b*c", "aXXbYY"), "**");
}

int main(void)
{
	fixtures_load();
	RUN(every_captured_format_parses);
	RUN(scalar_fields_of_sched_switch);
	RUN(data_loc_string);
	RUN(data_loc_arrays);
	RUN(syscall_fields);
	RUN(rel_loc_and_flex);
	RUN(malformed_formats_fail);
	RUN(globs);
	return TEST_EXIT();
}
