// SPDX-License-Identifier: GPL-2.0
/* Field names to their sources (field_source.h). The event's own fields come
 * first: an event with a field named cpu or comm means its own. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "kernel-events/field_source.h"

static bool name_is(const char *n, const char *a, const char *b, const char *c)
{
	return !strcmp(n, a) || !strcmp(n, b) || !strcmp(n, c);
}

/* The names the kernel's filter and hist triggers know beside the
 * record's fields; common_pid is the current task's id, as the class
 * program rebuilds it. */
static int resolve_common(const char *name, struct field_source *s)
{
	if (!strcmp(name, "common_pid")) {
		*s = (struct field_source){ .src = SRC_PID, .size = 4, .is_signed = true, .ustr = -1 };
		snprintf(s->type, sizeof(s->type), "int");
	} else if (name_is(name, "cpu", "CPU", "common_cpu")) {
		*s = (struct field_source){ .src = SRC_CPU, .size = 4, .is_signed = true, .ustr = -1 };
		snprintf(s->type, sizeof(s->type), "int");
	} else if (!strcmp(name, "cgroup") || !strcmp(name, "unit")) {
		*s = (struct field_source){ .src = name[0] == 'c' ? SRC_CGROUP : SRC_UNIT, .size = 8,
					    .ustr = -1 };
		snprintf(s->type, sizeof(s->type), "u64");
	} else if (name_is(name, "comm", "COMM", "common_comm")) {
		*s = (struct field_source){ .src = SRC_COMM, .is_string = true,
					    .str_size = TRACERD_COMM_LEN, .ustr = -1 };
		snprintf(s->type, sizeof(s->type), "char[%d]", TRACERD_COMM_LEN);
	} else if (name_is(name, "common_stacktrace", "stacktrace", "STACKTRACE")) {
		/* The kernel's hist key (stacktrace and STACKTRACE are its older
		 * names): neither a number nor a string, a key of Aggregate= only. */
		*s = (struct field_source){ .src = SRC_STACKTRACE, .ustr = -1 };
		snprintf(s->type, sizeof(s->type), "unsigned long[%d]", TRACERD_HIST_STACK_DEPTH);
	} else {
		return -ENOENT;
	}
	s->name = name;
	return 0;
}

static bool is_user_string(const struct tp_event *e, size_t i)
{
	const struct tp_field *f = &e->fields[i];

	if (!e->system || strcmp(e->system, "syscalls") || !e->name ||
	    strncmp(e->name, "sys_enter_", 10))
		return false;
	if (f->is_common || f->kind != TP_FIELD_SCALAR || f->size != 8 ||
	    strcmp(f->type, "const char *"))
		return false;
	return !(i + 1 < e->n_fields && !strcmp(e->fields[i + 1].type, "size_t"));
}

size_t field_source_user_strings(const struct tp_event *e,
				 const struct tp_field *ret[TRACERD_MAX_USTR])
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_fields && n < TRACERD_MAX_USTR; i++)
		if (is_user_string(e, i))
			ret[n++] = &e->fields[i];
	return n;
}

void event_desc_user_strings(const struct tp_event *e, struct event_desc *desc)
{
	const struct tp_field *u[TRACERD_MAX_USTR];
	size_t n = field_source_user_strings(e, u);

	memset(desc->ustr_off, 0, sizeof(desc->ustr_off));
	for (size_t i = 0; i < n; i++)
		desc->ustr_off[i] = u[i]->offset;
}

static int user_string_index(const struct tp_event *e, const struct tp_field *f)
{
	const struct tp_field *u[TRACERD_MAX_USTR];
	size_t n = field_source_user_strings(e, u);

	for (size_t i = 0; i < n; i++)
		if (u[i] == f)
			return i;
	return -1;
}

void field_source_as_user_string(const struct tp_event *e, struct field_source *s)
{
	s->src = SRC_USER_STR;
	s->off = tracerd_ustr_words(e->fixed_size) + 4 * s->ustr;
	s->size = 0;
	s->is_signed = false;
	s->is_string = true;
	s->str_size = 0;
}

static int resolve_record(const struct tp_event *e, const struct tp_field *f,
			  struct field_source *s)
{
	*s = (struct field_source){ .name = f->name, .field = f, .off = f->offset,
				    .size = f->size, .is_signed = f->is_signed,
				    .ustr = user_string_index(e, f) };
	if (f->kind == TP_FIELD_ARRAY)
		snprintf(s->type, sizeof(s->type), "%s[%u]", f->type, f->array_len);
	else
		snprintf(s->type, sizeof(s->type), "%s", f->type);
	if (f->kind == TP_FIELD_SCALAR && (f->size == 1 || f->size == 2 || f->size == 4 ||
					  f->size == 8)) {
		s->src = SRC_RECORD;
		return 0;
	}
	if (!f->is_string || f->kind == TP_FIELD_FLEX)
		return -EMEDIUMTYPE;
	s->is_string = true;
	s->src = f->kind == TP_FIELD_DATA_LOC ? SRC_DATA_LOC :
		 f->kind == TP_FIELD_REL_LOC ? SRC_REL_LOC : SRC_STR;
	s->str_size = f->kind == TP_FIELD_ARRAY ? f->size : 0;
	return 0;
}

int field_source_resolve(const struct tp_event *e, const char *name, struct field_source *ret)
{
	const struct tp_field *f = tp_event_field(e, name);

	if (f && f->is_common && strcmp(name, "common_type")) {
		/* common_pid: rebuilt from the task; flags, preempt count: lost */
		if (!resolve_common(name, ret))
			return 0;
		resolve_record(e, f, ret);
		return -EPERM;
	}
	if (f)
		return resolve_record(e, f, ret);
	*ret = (struct field_source){ .name = name, .ustr = -1 };
	return resolve_common(name, ret);
}

static void list_fields(const struct tp_event *e, const char *common, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < e->n_fields && n < size; i++)
		if (!e->fields[i].is_common)
			n += snprintf(buf + n, size - n, "%s, ", e->fields[i].name);
	if (n < size)
		snprintf(buf + n, size - n, "%s", common);
}

void field_source_explain(const struct tp_event *e, const char *name, int r, const char *common,
			  char *buf, size_t size)
{
	char fields[700];

	if (r == -EPERM) {
		snprintf(buf, size, "%s is not available: the kernel overwrites the common fields "
			 "before a BPF program runs (common_pid and common_type are rebuilt)", name);
		return;
	}
	list_fields(e, common, fields, sizeof(fields));
	snprintf(buf, size, "unknown field '%s' in %s%s%s; its fields are: %s", name,
		 e->system ? e->system : "", e->system ? ":" : "", e->name, fields);
}
