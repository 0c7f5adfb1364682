/* SPDX-License-Identifier: GPL-2.0 */
/* Aggregate=: the kernel's hist trigger language (Documentation/trace/
 * histogram.rst), parsed (hist_parse.c), compiled per event into the
 * agg_desc the class program builds keys by (hist_compile.c), and the
 * dumped entries printed in the layout of the kernel's `hist` file
 * (hist_format.c). */
#ifndef TRACERD_HIST_H
#define TRACERD_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include "filter/filter_diag.h"
#include "kernel-events/events.h"
#include "strbuf.h"
#include "tracerd_record.h"

#define HIST_SORT_KEYS		2	/* as TRACING_MAP_SORT_KEYS_MAX */
#define HIST_SIZE_DEFAULT	2048	/* 1 << TRACING_MAP_BITS_DEFAULT */
#define HIST_SIZE_MIN_BITS	7
#define HIST_SIZE_MAX_BITS	17

enum hist_mod {
	HM_NONE, HM_HEX, HM_SYM, HM_SYM_OFFSET, HM_EXECNAME, HM_SYSCALL, HM_LOG2, HM_BUCKETS,
	HM_USECS,
};

/* A key or value as written: name, one modifier; off are byte offsets into
 * the expression, for file:line:column errors. */
struct hist_fref {
	char *name;
	int off;
	enum hist_mod mod;
	int mod_off;
	uint64_t buckets;
};

struct hist_sortref {
	char *name;
	int off;
	bool descending;
};

/* Inter-event parts (hist_vars.c): an operand of an expression or an
 * action's param as written. */
struct hist_opnd_spec {
	char *name;		/* a field, common_timestamp, a variable ($ dropped); NULL: a number */
	int off;
	bool is_var;		/* $name */
	bool usecs;		/* common_timestamp.usecs */
	uint64_t value;		/* a number */
};

struct hist_term_spec {
	struct hist_opnd_spec op;
	bool neg;
	uint64_t mul, div;	/* op * mul / div; div 0: none */
};

/* name=EXPR */
struct hist_var_spec {
	char *name;
	int off, end;		/* the definition's text: name to the end of EXPR */
	struct hist_term_spec terms[TRACERD_HIST_TERMS];
	size_t n_terms;
};

/* onmatch(sys.event).synth(params) or .trace(synth,params) */
struct hist_action_spec {
	char *sys, *event;
	int event_off;
	char *synth;
	int synth_off;
	struct hist_opnd_spec params[TRACERD_SYNTH_PARAMS];
	size_t n_params;
	int params_off;
	int start, end;		/* its text, for the trigger line */
};

/* onmax($var).save(fields) or onchange($var).save(fields); or .snapshot() */
struct hist_track_spec {
	int kind;		/* TRACK_MAX, TRACK_CHANGE */
	bool snapshot;		/* .snapshot(): a new maximum (a change) takes a recorder snapshot */
	char *var;
	int var_off;
	struct hist_opnd_spec saves[TRACERD_TRACK_SAVES];
	size_t n_saves;
	int start, end;
};

struct hist_spec {
	struct hist_fref keys[TRACERD_AGG_KEYS];
	size_t n_keys;
	struct hist_fref vals[TRACERD_AGG_VALS];	/* hitcount is always there */
	size_t n_vals;
	struct hist_sortref sort[HIST_SORT_KEYS];
	size_t n_sort;
	uint32_t size;		/* entries: size= rounded up to a power of two */
	struct hist_var_spec vars[TRACERD_HIST_VARS];
	size_t n_vars;
	struct hist_action_spec action;
	bool has_action;
	struct hist_track_spec track;
	bool has_track;
};

int hist_parse(const struct filter_text *src, struct hist_spec *spec);
/* Where the trailing "if FILTER" of a trigger begins (the filter's first
 * byte), or 0 when it has none; *end, where the trigger itself ends. */
size_t hist_split_if(const char *expr, size_t *end);
void hist_spec_done(struct hist_spec *spec);
const char *hist_mod_name(enum hist_mod m);

struct hist_key {
	const char *name;
	const struct tp_field *field;	/* NULL: common_pid, comm, cpu */
	enum hist_mod mod;
	uint64_t buckets;
	bool is_string, is_signed;
	bool is_stack;			/* common_stacktrace: hist_stack.c */
	unsigned key_off, width;	/* in the key bytes */
	const struct tp_symtab *tab;	/* flags/symbolic: printed as the line shows it */
	int src;			/* enum trace_src: SRC_UNIT, SRC_CGROUP print by name */
};

/* After the TRACERD_HIST_STACK_DEPTH frames of a dumped common_stacktrace key:
 * the stack went deeper, and was cut there. */
#define HIST_STACK_CUT 1

struct hist_val {
	const char *name;
	bool hex;
};

enum hist_sort_kind { HS_HITCOUNT, HS_KEY, HS_VAL };

struct hist_sort {
	enum hist_sort_kind kind;
	unsigned idx;
	bool descending;
};

/* One selection's histogram on one event. */
struct hist {
	struct hist_spec spec;
	const struct tp_event *e;
	struct hist_key keys[TRACERD_AGG_KEYS];
	size_t n_keys;
	struct hist_val vals[TRACERD_AGG_VALS];
	size_t n_vals;
	struct hist_sort sort[HIST_SORT_KEYS];
	size_t n_sort;
	struct agg_desc desc;	/* gen 0; the daemon flips it */
	uint32_t span;		/* fixed record bytes that keys and sums read */
	char *trigger;		/* "hist:keys=...:size=N", as the kernel prints its trigger */
	/* Inter-event: variables or an action (hist_trigger.c); the slots
	 * of refs and the action bound by hist_link.c. */
	bool is_trigger;
	struct hist_trigger trig;
	const struct hist_opnd_spec *refs[TRACERD_HIST_VARS];	/* trig.refs[i] as written */
	char *expr;		/* Aggregate= and where it is, for hist_link()'s errors */
	struct conf_pos pos;
};

/* Parses expr and compiles it for e. Errors name pos's file:line:column. */
int hist_compile(const char *expr, const struct tp_event *e, const struct conf_pos *pos,
		 struct hist **ret, struct diag *d);
void hist_free(struct hist *h);
/* hist_link.c: a histogram of the config being applied, and its slot. */
struct hist_link_item {
	struct hist *h;			/* NULL: the event has none */
	const struct tp_event *e;
	uint32_t slot;
};

/* The synthetic event of a name, and its index among them (synth_subs). */
struct hist_synth_finder {
	const struct tp_event *(*find)(void *userdata, const char *name, unsigned *index);
	void *userdata;
};

/* Binds every trigger's references to the slots and variables that set
 * them, and its action to its synthetic event; a reference or an action
 * that cannot be bound is a file:line:column error. */
int hist_link(struct hist_link_item *items, size_t n, const struct hist_synth_finder *f,
	      struct diag *d);

/* hist_trigger.c: h's variables and action compiled for its event; *span
 * grows to the record bytes they read. */
int hist_trigger_compile(const struct filter_text *src, struct hist *h, uint32_t *span);
/* Has h a common_stacktrace key (hist_stack.c)? */
bool hist_has_stack(const struct hist *h);
/* The prefix of the record that the class program must copy before it
 * filters and aggregates (event_desc.filter_span), given the filter's. */
uint32_t hist_record_span(const struct hist *h, const struct event_desc *d);

/* One entry as dumped from the map. */
struct hist_entry {
	const uint8_t *key;	/* desc.key_size bytes */
	uint64_t hitcount;
	uint64_t sums[TRACERD_AGG_VALS];
	bool tracked;		/* onmax()/onchange(): its value and saved fields */
	struct hist_track_val track;
};

struct hist_format_opts {
	bool raw_pointers;	/* .sym and .hex of addresses: raw, else hashed */
};

/* Keys by unit: the entries of the cgroups of one unit become one (the
 * first one's key bytes, hitcounts and sums added up). The entries' keys
 * are the dump's own, written in place; *n shrinks. */
void hist_merge_units(const struct hist *h, struct hist_entry *v, size_t *n);
/* Sorts by sort= (default: hitcount ascending), ties by the key bytes. */
void hist_sort_entries(const struct hist *h, struct hist_entry *v, size_t n);
/* The kernel's hist file: header, one line per entry, Totals. */
void hist_format(const struct hist *h, const struct hist_entry *v, size_t n, uint64_t dropped,
		 const struct hist_format_opts *o, struct strbuf *out);
/* Key i of an entry as a value alone, for the journal (no padding). */
void hist_format_key(const struct hist *h, size_t i, const uint8_t *key,
		     const struct hist_format_opts *o, struct strbuf *out);
/* Key i of an entry as the number the map holds: a .log2 key's power of
 * two, a .buckets=N key's bucket start. */
uint64_t hist_key_number(const struct hist *h, size_t i, const uint8_t *key);
/* The kernel's text of key i: "name: value" with its padding. */
void hist_format_key_kernel(const struct hist *h, size_t i, const uint8_t *key,
			    const struct hist_format_opts *o, struct strbuf *out);

/* hist_syscall.c: the syscall's name for .syscall ("sys_read"), numbers
 * from the UAPI header, names as tracefs's syscalls: events have them (NULL
 * when unknown). */
const char *hist_syscall_name(uint64_t nr);
/* For tests: use these names instead of tracefs's. */
void hist_syscall_names_set(const char *const *names, size_t n);

#endif
