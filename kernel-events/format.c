// SPDX-License-Identifier: GPL-2.0
/* Parsing an event's tracefs `format` file: name, id, fields, print fmt;
 * and the field table it gives: lookups, checking a record against it. */
#include <ctype.h>
#include <stdint.h>
#include "events.h"
#include "tracerd_record.h"
#include "util.h"

/* What tp_format_parse built; the rest of an event is tp_event_free's (event.c). */
void tp_format_free(struct tp_event *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_fields; i++) {
		free(e->fields[i].type);
		free(e->fields[i].name);
	}
	free(e->fields);
	free(e->name);
	free(e->print_fmt);
	free(e->format_text);
	free(e);
}

/* The size of a C type as formats and print fmts write them (x86_64):
 * "unsigned long", "__u16", "int64_t", "char *"... */
unsigned tp_type_size(const char *t)
{
	/* cpumask_t: a bitmask of unsigned longs. */
	if (strchr(t, '*') || strstr(t, "long") || strstr(t, "64") || strstr(t, "size_t") ||
	    strstr(t, "cpumask_t"))
		return 8;
	if (strstr(t, "short") || strstr(t, "16"))
		return 2;
	if (strstr(t, "char") || strstr(t, "8") || strstr(t, "bool"))
		return 1;
	return 4;
}

/* "unsigned char prev_comm[16]" -> type, name, array length (or -1, 0 for []). */
static int split_decl(const char *decl, struct tp_field *f)
{
	const char *end = decl + strlen(decl), *name_end, *name;
	long alen = -1;

	while (end > decl && isspace((unsigned char)end[-1]))
		end--;
	name_end = end;
	if (end > decl && end[-1] == ']') {
		const char *open = memchr(decl, '[', end - decl);

		for (const char *q = end - 1; q > decl; q--)
			if (*q == '[') {
				open = q;
				break;
			}
		if (!open)
			return -EINVAL;
		alen = open + 1 == end - 1 ? 0 : strtol(open + 1, NULL, 0);
		name_end = open;
	}
	name = name_end;
	while (name > decl && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	if (name == name_end)
		return -EINVAL;
	f->name = strndup(name, name_end - name);
	while (name > decl && isspace((unsigned char)name[-1]))
		name--;
	f->type = strndup(decl, name - decl);
	if (!f->name || !f->type)
		return -ENOMEM;
	if (!f->type[0])	/* "field:int;" names no type */
		return -EINVAL;
	f->array_len = alen > 0 ? alen : 0;
	if (alen == 0)
		f->kind = TP_FIELD_FLEX;
	else if (alen > 0)
		f->kind = TP_FIELD_ARRAY;
	return 0;
}

static int parse_field(const char *line, struct tp_field *f)
{
	const char *p = strstr(line, "field:"), *semi;
	_cleanup_free_ char *decl = NULL;
	unsigned off, size, sgn = 0;
	int r;

	memset(f, 0, sizeof(*f));
	if (!p || !(semi = strchr(p, ';')))
		return -EINVAL;
	p += strlen("field:");
	decl = strndup(p, semi - p);
	if (!decl)
		return -ENOMEM;
	if (sscanf(semi, "; offset:%u; size:%u; signed:%u;", &off, &size, &sgn) < 2 &&
	    sscanf(semi, ";\toffset:%u;\tsize:%u;\tsigned:%u;", &off, &size, &sgn) < 2)
		return -EINVAL;
	/* Records are at most 8 KiB (PERF_MAX_TRACE_SIZE); __data_loc offsets
	 * are 16 bits. Anything larger is not a format, and would let offset +
	 * size wrap in 32-bit arithmetic downstream. */
	if (off > 0xffff || size > 0xffff)
		return -EINVAL;
	r = split_decl(decl, f);
	if (r < 0)
		return r;
	f->offset = off;
	f->size = size;
	f->is_signed = sgn;
	f->is_common = !strncmp(f->name, "common_", 7);
	if (!strncmp(f->type, "__data_loc ", 11) || !strncmp(f->type, "__rel_loc ", 10)) {
		/* "__data_loc char[]": the name came after the brackets. */
		f->kind = f->type[2] == 'd' ? TP_FIELD_DATA_LOC : TP_FIELD_REL_LOC;
		f->elem_size = tp_type_size(f->type + (f->type[2] == 'd' ? 11 : 10));
	} else if (f->kind == TP_FIELD_ARRAY) {
		f->elem_size = f->size / f->array_len;
	} else if (f->kind == TP_FIELD_FLEX) {
		f->elem_size = tp_type_size(f->type);
	} else {
		f->elem_size = f->size;
	}
	/* The kernel's filter treats any char array as a string: do the same. */
	f->is_string = f->kind != TP_FIELD_SCALAR && strstr(f->type, "char");
	f->is_pointer = strchr(f->type, '*');
	return 0;
}

static int parse_line(struct tp_event *e, char *line, size_t *cap)
{
	/* The print fmt comes last, and may span lines: what follows is its text. */
	if (e->print_fmt)
		return 0;
	/* A second name is not a format the kernel writes. */
	if (!strncmp(line, "name: ", 6))
		return e->name ? -EINVAL : (e->name = strdup(line + 6)) ? 0 : -ENOMEM;
	if (!strncmp(line, "ID: ", 4)) {
		e->id = atoi(line + 4);
		return 0;
	}
	if (!strncmp(line, "print fmt: ", 11))
		return (e->print_fmt = strdup(line + 11)) ? 0 : -ENOMEM;
	if (strstr(line, "field:")) {
		struct tp_field *f;
		int r;

		if (GROW(e->fields, *cap, e->n_fields) < 0)
			return -ENOMEM;
		f = &e->fields[e->n_fields];
		r = parse_field(line, f);
		if (r < 0) {
			free(f->name);
			free(f->type);
			return r;
		}
		e->n_fields++;
		if (f->kind != TP_FIELD_FLEX && f->offset + f->size > e->fixed_size)
			e->fixed_size = f->offset + f->size;
		if (f->kind == TP_FIELD_DATA_LOC || f->kind == TP_FIELD_REL_LOC)
			e->n_dyn_fields++;
		return 0;
	}
	return 0;	/* "format:", blank lines */
}

int tp_format_parse(const char *text, struct tp_event **ret, int *err_line)
{
	struct tp_event *e;
	_cleanup_free_ char *copy = strdup(text);
	char *save = NULL;
	size_t cap = 0;
	int line_no = 0, r = 0;

	e = calloc(1, sizeof(*e));
	if (!e || !copy || !(e->format_text = strdup(text))) {
		tp_format_free(e);
		return -ENOMEM;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line_no++;
		r = parse_line(e, line, &cap);
		if (r < 0)
			break;
	}
	if (!r && (!e->name || !e->print_fmt || !e->n_fields))
		r = -EINVAL;
	if (r < 0) {
		if (err_line)
			*err_line = line_no;
		tp_format_free(e);
		return r;
	}
	*ret = e;
	return 0;
}

const struct tp_field *tp_event_field(const struct tp_event *e, const char *name)
{
	for (size_t i = 0; i < e->n_fields; i++)
		if (!strcmp(e->fields[i].name, name))
			return &e->fields[i];
	return NULL;
}

enum tp_record_damage tp_record_check(const struct tp_event *e, const void *rec, size_t len)
{
	if (len < e->fixed_size)
		return TP_REC_SHORT;
	for (size_t i = 0; i < e->n_fields && e->n_dyn_fields; i++) {
		const struct tp_field *f = &e->fields[i];
		uint32_t loc;

		if (f->kind != TP_FIELD_DATA_LOC && f->kind != TP_FIELD_REL_LOC)
			continue;
		if ((uint64_t)f->offset + 4 > len)
			return TP_REC_BAD_DYN;
		memcpy(&loc, (const uint8_t *)rec + f->offset, 4);
		if (!tracerd_span_fits(tracerd_loc_off(loc, f->offset, f->kind == TP_FIELD_REL_LOC),
				       tracerd_loc_len(loc), len))
			return TP_REC_BAD_DYN;
	}
	return TP_REC_OK;
}
