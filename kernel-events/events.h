/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's trace events as tracefs and BTF describe them: each event's
 * format (fields and print fmt), and the classes they are grouped into. */
#ifndef TRACERD_EVENTS_H
#define TRACERD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

struct tp_class;
struct tp_printfmt;

/* An enum name in a print fmt that tracefs left unresolved, and its value. */
struct tp_enum {
	char *name;
	long long value;
};
struct tp_symtab;

enum tp_field_kind {
	TP_FIELD_SCALAR,	/* integer or pointer of 1, 2, 4 or 8 bytes */
	TP_FIELD_ARRAY,		/* fixed array: type name[N] */
	TP_FIELD_DATA_LOC,	/* __data_loc: u32 (len << 16 | offset from record start) */
	TP_FIELD_REL_LOC,	/* __rel_loc: u32 (len << 16 | offset from the field's end) */
	TP_FIELD_FLEX,		/* type name[] at the end of the record */
};

struct tp_field {
	char *type;		/* as written, without the name and array suffix */
	char *name;
	unsigned offset;
	unsigned size;		/* bytes in the fixed part */
	bool is_signed;
	bool is_common;		/* common_type, common_flags, ... */
	enum tp_field_kind kind;
	unsigned array_len;	/* TP_FIELD_ARRAY: number of elements */
	unsigned elem_size;	/* element size for arrays and dynamic arrays */
	bool is_string;		/* char arrays and __data_loc char[] */
	bool is_pointer;	/* holds addresses: a pointer type, or (render_prepare
				 * adds) printed with %p; hashed unless RawPointers=yes */
};

struct tp_event {
	char *system;
	char *name;
	int id;
	struct tp_field *fields;	/* common fields first, in format order */
	size_t n_fields;
	char *print_fmt;		/* the text after "print fmt: " */
	char *format_text;		/* the whole format file */
	unsigned fixed_size;		/* end of the last fixed field */
	unsigned n_dyn_fields;		/* __data_loc and __rel_loc fields */
	struct tp_class *class;
	void *render;			/* compiled print fmt, owned by daemon/render */
	struct tp_printfmt *printfmt;	/* parsed print fmt, see printfmt.h */
	struct tp_symtab *symtabs;	/* flag and symbol tables, see symbols.h */
	size_t n_symtabs;
	bool symbols_loaded;
	/* The enum names the print fmt uses, with their values: looked up in
	 * BTF when the print fmt is parsed (printfmt.c) and kept, so that the
	 * store can write them down; or, with enums_given, taken from a store
	 * file, and then BTF (another kernel's, perhaps) is not consulted. */
	struct tp_enum *enums;
	size_t n_enums, cap_enums;
	bool enums_given;
};

/* Adds name = value to e->enums (a store reader fills a table with it). */
int tp_event_add_enum(struct tp_event *e, const char *name, size_t len, long long value);

struct tp_class {
	char *name;		/* DECLARE_EVENT_CLASS name, or the event's own */
	bool from_btf;		/* named by BTF rather than inferred by layout */
	struct tp_event **events;
	size_t n_events, cap_events;
};

/* tracefs.c */
/* On failure too *path names the tracefs the error is about. */
int tracefs_find(const char **path);
int tracefs_list_events(char ***names, size_t *n);	/* "sys:event", sorted */
int tracefs_read_file(const char *rel, char **text);

/* format.c */
int tp_format_parse(const char *text, struct tp_event **ret, int *err_line);
/* Frees e as tp_format_parse left it; an event given more (system, enums,
 * print fmt, symbols) is freed with tp_event_free. */
void tp_format_free(struct tp_event *e);
const struct tp_field *tp_event_field(const struct tp_event *e, const char *name);
unsigned tp_type_size(const char *type);

/* What is wrong with a record of e, if anything: shorter than the fixed
 * fields, or a __data_loc payload past its end. */
enum tp_record_damage {
	TP_REC_OK,
	TP_REC_SHORT,
	TP_REC_BAD_DYN,
};
enum tp_record_damage tp_record_check(const struct tp_event *e, const void *rec, size_t len);

/* synthetic.c: a synthetic event (issue 31) from its definition in the
 * kernel's synthetic_events syntax, "NAME TYPE FIELD; ...": the text of the
 * format file the kernel would give it, or that text parsed (system
 * "synthetic"; free it with tp_event_free). On -EINVAL, err says where in
 * def and what was expected there. */
struct tp_synth_error {
	int off;		/* byte offset in def */
	const char *expected;
};
int tp_synthetic_format(const char *def, int id, char **text, struct tp_synth_error *err);
int tp_synthetic_parse(const char *def, int id, struct tp_event **ret, struct tp_synth_error *err);
/* Whether e is a synthetic event: its system is "synthetic". */
bool tp_event_is_synthetic(const struct tp_event *e);
/* The ids tracerd gives synthetic events, one each in config order: the top
 * of common_type's u16 range. The kernel numbers its events from the bottom
 * (ida_alloc_range() from __TRACE_LAST_TYPE, reusing freed numbers; ~2300
 * here), so it would reach these only with some 63000 events registered. */
#define TP_SYNTH_ID_FIRST	0xff00
#define TP_SYNTH_MAX		256

/* event.c */
int tp_event_load(const char *system, const char *name, struct tp_event **ret);
void tp_event_free(struct tp_event *e);

/* classes.c: groups events into classes; uses BTF when available. */
struct tp_classes {
	struct tp_class **classes;
	size_t n, cap;
	void *btf;		/* struct btf *, or NULL */
};
int tp_classes_init(struct tp_classes *c);
int tp_classes_add(struct tp_classes *c, struct tp_event *e);
void tp_classes_free(struct tp_classes *c);
/* The byte offset of task_struct's comm (TRACERD_COMM_LEN bytes, 8-byte
 * aligned) in the running kernel's BTF; 0: unknown (no BTF, or TRACERD_BTF). */
int tp_classes_task_comm(const struct tp_classes *c);

/* glob.c */
bool tp_glob_match(const char *pattern, const char *s);
/* -1 if pattern is a well-formed glob, else the offset of the '[' that no
 * ']' closes (or that closes nothing: "[]"). */
int tp_glob_check(const char *pattern);

#endif
