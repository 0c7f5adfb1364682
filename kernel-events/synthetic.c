// SPDX-License-Identifier: GPL-2.0
/* Synthetic events (issue 31): a definition in the kernel's synthetic_events
 * syntax, "wakeup_latency u64 lat; pid_t pid; int prio", becomes an event
 * like any other. The layout and the print fmt are the kernel's
 * (kernel/trace/trace_events_synth.c): the common fields, then each field in
 * a u64 slot of its own, a char[N] string in STR_VAR_LEN_MAX bytes; a field
 * signed unless its type starts with 'u' or is gfp_t; printed by
 * synth_field_fmt() and separated by spaces, as print_synth_event() writes
 * the `trace` line (the format file's print fmt separates by ", ").
 * The definition becomes the text of a format file, which tp_format_parse()
 * reads: the record layout stays written once. This kernel has no
 * CONFIG_SYNTH_EVENTS to compare with; the kernel's source is the reference. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "events.h"
#include "strbuf.h"
#include "util.h"

#define SYNTH_FIELDS_MAX	64	/* SYNTH_FIELDS_MAX */
#define SYNTH_STR_LEN		256	/* STR_VAR_LEN_MAX */

struct synth_type {
	const char *name;
	unsigned size;
	const char *fmt;
};

/* synth_field_size() and synth_field_fmt(), the types a definition may use. */
static const struct synth_type synth_types[] = {
	{ "s64", 8, "%lld" }, { "u64", 8, "%llu" }, { "s32", 4, "%d" }, { "u32", 4, "%u" },
	{ "s16", 2, "%d" }, { "u16", 2, "%u" }, { "s8", 1, "%d" }, { "u8", 1, "%u" },
	{ "char", 1, "%d" }, { "unsigned char", 1, "%u" }, { "short", 2, "%d" },
	{ "unsigned short", 2, "%u" }, { "int", 4, "%d" }, { "unsigned int", 4, "%u" },
	{ "long", 8, "%ld" }, { "unsigned long", 8, "%lu" }, { "bool", 1, "%d" },
	{ "pid_t", 4, "%d" }, { "gfp_t", 4, "%x" },
};

static const struct synth_type *synth_type_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(synth_types); i++)
		if (strlen(synth_types[i].name) == len && !strncmp(synth_types[i].name, name, len))
			return &synth_types[i];
	return NULL;
}

static bool is_ident(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The names so far, the common fields' first: a name is one field's. */
struct synth_names {
	const char *name[4 + SYNTH_FIELDS_MAX];
	size_t len[4 + SYNTH_FIELDS_MAX], n;
};

static bool synth_name_taken(struct synth_names *names, const char *name, size_t len)
{
	for (size_t i = 0; i < names->n; i++)
		if (names->len[i] == len && !strncmp(names->name[i], name, len))
			return true;
	names->name[names->n] = name;
	names->len[names->n++] = len;
	return false;
}

/* One field, "TYPE NAME" or "char NAME[N]", from p up to ';' or the end.
 * Appends its format line and print fmt parts; *slot is the next free byte. */
static int synth_field(const char *def, const char **pp, unsigned *slot, struct synth_names *names,
		       struct strbuf *fields, struct strbuf *fmt, struct strbuf *args,
		       struct tp_synth_error *err)
{
	const char *p = skip_space(*pp), *end = p + strcspn(p, ";"), *name, *q;
	const struct synth_type *t = NULL;
	unsigned len = 0;

	/* The name is the last word; the type is everything before it. */
	q = end;
	while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	name = q;
	while (name > p && (isalnum((unsigned char)name[-1]) || strchr("_[]", name[-1])))
		name--;
	err->off = (int)(p - def);
	if (name == p || q == name) {
		err->expected = "a field: TYPE NAME (u64 lat)";
		return -EINVAL;
	}
	const char *type_end = name;
	while (type_end > p && (type_end[-1] == ' ' || type_end[-1] == '\t'))
		type_end--;
	const char *bracket = memchr(name, '[', (size_t)(q - name));
	size_t name_len = bracket ? (size_t)(bracket - name) : (size_t)(q - name);

	if (bracket) {
		char *e;

		if (type_end - p != 4 || strncmp(p, "char", 4)) {
			err->expected = "an array of char only: char NAME[N]";
			return -EINVAL;
		}
		len = (unsigned)strtoul(bracket + 1, &e, 10);
		if (e == bracket + 1 || *e != ']' || e + 1 != q || !len || len > SYNTH_STR_LEN) {
			err->off = (int)(bracket - def);
			err->expected = "a string length: char NAME[N], N from 1 to 256 "
					"(char NAME[], a dynamic string, is not taken yet)";
			return -EINVAL;
		}
	} else if (!(t = synth_type_find(p, (size_t)(type_end - p)))) {
		err->expected = "a type of the kernel's synthetic events: s64 u64 s32 u32 s16 u16 s8 u8 "
				"char, unsigned char, short, unsigned short, int, unsigned int, long, "
				"unsigned long, bool, pid_t, gfp_t, char[N]";
		return -EINVAL;
	}
	if (!is_ident(name, name_len)) {
		err->off = (int)(name - def);
		err->expected = "a field name: letters, digits and _";
		return -EINVAL;
	}
	if (synth_name_taken(names, name, name_len)) {
		err->off = (int)(name - def);
		err->expected = "a field name not taken yet (common_type, common_flags, "
				"common_preempt_count, common_pid and the fields before)";
		return -EINVAL;
	}
	if (t) {
		sb_printf(fields, "\tfield:%.*s %.*s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			  (int)(type_end - p), p, (int)name_len, name, *slot, t->size,
			  !(p[0] == 'u' || !strcmp(t->name, "gfp_t")));
		sb_printf(fmt, "%s%.*s=%s", fmt->len > 1 ? " " : "", (int)name_len, name, t->fmt);
		*slot += 8;
	} else {
		sb_printf(fields, "\tfield:char %.*s[%u];\toffset:%u;\tsize:%u;\tsigned:1;\n",
			  (int)name_len, name, len, *slot, len);
		sb_printf(fmt, "%s%.*s=%%s", fmt->len > 1 ? " " : "", (int)name_len, name);
		*slot += SYNTH_STR_LEN;
	}
	sb_printf(args, ", REC->%.*s", (int)name_len, name);
	*pp = *end ? end + 1 : end;
	return 0;
}

int tp_synthetic_format(const char *def, int id, char **text, struct tp_synth_error *err)
{
	_cleanup_(sb_free) struct strbuf fields = { 0 }, fmt = { 0 }, args = { 0 }, out = { 0 };
	const char *p = skip_space(def), *name_end = p;
	struct synth_names names = {
		.name = { "common_type", "common_flags", "common_preempt_count", "common_pid" },
		.len = { 11, 12, 20, 10 }, .n = 4,
	};
	unsigned slot = 8, n = 0;
	int r;

	*err = (struct tp_synth_error){ 0 };
	while (*name_end && *name_end != ' ' && *name_end != '\t')
		name_end++;
	if (!is_ident(p, (size_t)(name_end - p))) {
		err->off = (int)(p - def);
		err->expected = "a synthetic event's name, then its fields: NAME TYPE FIELD; ...";
		return -EINVAL;
	}
	sb_putc(&fmt, '"');
	for (const char *q = skip_space(name_end); *skip_space(q);) {
		if (++n > SYNTH_FIELDS_MAX) {
			err->off = (int)(q - def);
			err->expected = "at most 64 fields";
			return -EINVAL;
		}
		r = synth_field(def, &q, &slot, &names, &fields, &fmt, &args, err);
		if (r < 0)
			return r;
	}
	if (!n) {
		err->off = (int)(name_end - def);
		err->expected = "at least one field: NAME TYPE FIELD; ...";
		return -EINVAL;
	}
	if (fields.oom || fmt.oom || args.oom)
		return -ENOMEM;
	sb_printf(&out, "name: %.*s\nID: %d\nformat:\n"
		  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n%s\n"
		  "print fmt: %s\"%s\n",
		  (int)(name_end - p), p, id, fields.buf, fmt.buf, args.buf);
	*text = out.oom ? NULL : strdup(out.buf);
	return *text ? 0 : -ENOMEM;
}

int tp_synthetic_parse(const char *def, int id, struct tp_event **ret, struct tp_synth_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r = tp_synthetic_format(def, id, &text, err);

	if (r < 0)
		return r;
	r = tp_format_parse(text, ret, NULL);
	if (r < 0)
		return r;
	if (!((*ret)->system = strdup("synthetic"))) {
		tp_format_free(*ret);
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

bool tp_event_is_synthetic(const struct tp_event *e)
{
	return e->system && !strcmp(e->system, "synthetic");
}
