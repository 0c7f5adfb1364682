/* SPDX-License-Identifier: GPL-2.0 */
/* The compiled form of a print fmt: a list of segments (literal text, then
 * one printf conversion) whose arguments are expression trees over the
 * record's fields, with offsets, sizes and symbol tables resolved at attach
 * time. Rendering a record walks them; it parses no text. */
#ifndef TRACERD_RENDER_PRIV_H
#define TRACERD_RENDER_PRIV_H

#include "render.h"
#include "kernel-events/symbols.h"
#include "tracerd_record.h"

struct tep_print_arg;

enum rn_kind {
	RN_CONST,	/* a number, or a string literal (text) */
	RN_FIELD,	/* scalar field */
	RN_ARRAY,	/* fixed array field: a buffer */
	RN_DYN,		/* __data_loc field: a buffer (__get_str, __get_dynamic_array) */
	RN_DYN_LEN,	/* __get_dynamic_array_len */
	RN_UNARY,
	RN_BINARY,
	RN_COND,	/* a ? b : c */
	RN_INDEX,	/* a[b] */
	RN_CAST,
	RN_SYMTAB,	/* __print_flags, __print_symbolic: text */
	RN_HEX,		/* __print_hex: bytes b of buffer a */
	RN_HEX_STR,	/* __print_hex_str */
	RN_INT_ARRAY,	/* __print_array(a, count b, element size c) */
	RN_BITMASK,	/* __get_bitmask, __get_cpumask */
};

struct rnode {
	enum rn_kind kind;
	char op[3];
	unsigned off, size, elem_size;	/* fields; size is also a cast's width */
	bool is_signed, is_string, is_rel;
	bool numeric;		/* a number all the way down: eval_num() takes it */
	bool addr;		/* its value is an address (a pointer field, cast or not);
				 * RN_SYMTAB: its argument is, so unnamed values are hashed */
	const struct tp_field *field;	/* RN_FIELD, RN_ARRAY, RN_DYN: the field read */
	uint64_t num;
	char *text;
	size_t text_len;
	const struct tp_symtab *tab;
	struct rnode *a, *b, *c;
};

enum rv_kind { RV_NUM, RV_BUF, RV_BAD };

struct rval {
	enum rv_kind kind;
	bool is_signed;
	bool is_string;		/* RV_BUF: print up to the first NUL */
	uint64_t n;
	const uint8_t *p;
	size_t len;
	const char *why;	/* RV_BAD: the marker to print */
};

enum { RF_MINUS = 1, RF_PLUS = 2, RF_SPACE = 4, RF_HASH = 8, RF_ZERO = 16 };

struct rseg {
	char *lit;		/* literal text before the conversion */
	size_t lit_len;
	char conv;		/* 0: literal only; d i u x X o c s p */
	char ext[8];		/* after %p: "S", "I4", "ISpc"... */
	unsigned flags;		/* RF_* */
	int width, prec;	/* -1: none; taken from width_arg/prec_arg when set */
	unsigned int_size;	/* bytes the length modifier gives the value */
	enum { RS_TREE, RS_FIELD_NUMBER, RS_FIELD_POINTER } fast;	/* a plain field's shortcut */
	bool addr;		/* prints an address as a number ("%lx"): hashed too */
	struct rnode *arg, *width_arg, *prec_arg;
};

/* RM_SYSCALL: the kernel's own output for syscall events, render_syscall.c;
 * RM_FALLBACK: libtraceevent's printing or field=value pairs (render.c). */
enum rmode { RM_COMPILED, RM_FALLBACK, RM_SYSCALL };

/* Where the line shows a flag or symbolic field: the conversions from first
 * to last, with no literal text between them, that print its table (and
 * whatever the print fmt prints of the same field beside it, such as
 * sched_switch's "+" after prev_state). The journal's value of the field is
 * their text, so that it is what the line shows, ternaries and masks
 * applied: "R+" where the table alone would give "". */
struct rspan {
	const struct tp_field *field;
	size_t first, last;	/* indexes into segs */
};

/* Compiled once per event, then never changed while records are rendered
 * (the sink queue's writer thread renders fields meanwhile): what may
 * change on reload, the pointer policy, is each call's argument. */
struct rprog {
	enum rmode mode;
	struct rseg *segs;
	size_t n_segs;
	bool tep_ok;		/* RM_FALLBACK: libtraceevent can print it */
	bool tep_leaks;		/* and would print an address: not while they are hashed */
	bool has_char;		/* a %c, which can print a NUL */
	char *why;		/* RM_FALLBACK: the construct the compiler refused */
	struct rspan *spans;	/* one per flag or symbolic field the line shows */
	size_t n_spans;
	struct strbuf scratch;	/* rprog_render's; the main thread's only */
	struct rsys *sys;	/* RM_SYSCALL */
};

struct rctx {
	const uint8_t *rec;
	size_t len;
	const struct rprog *prog;
	bool raw;		/* RawPointers=: addresses printed, not hashed */
	struct strbuf *scratch;	/* what helpers print into: one per thread */
};

/* render_compile.c */
int rprog_compile(struct tp_event *e, struct rprog *p);
void rprog_free_segs(struct rprog *p);

/* render_syscall.c: 1 if e is a syscall event (then p->mode is RM_SYSCALL),
 * 0 if not, or -ENOMEM. */
int rsys_compile(const struct tp_event *e, struct rprog *p);
void rsys_release(struct rprog *p);
void rsys_render(const struct rprog *p, bool raw, const uint8_t *rec, size_t len,
		 struct strbuf *out);
void rsys_user_strings(const struct rprog *p, const uint8_t *rec, size_t len,
		       render_ustr_cb cb, void *ctx);
/* n bytes as a C string literal's inside: \" \\ \n \t \r, other bytes
 * outside printable ASCII as \xNN. */
void render_c_escaped(const char *s, size_t n, struct strbuf *out);

/* render_eval.c */
struct rval rn_eval(const struct rnode *n, const struct rctx *c);
void rprog_render(const struct rprog *p, bool raw, const uint8_t *rec, size_t len,
		  struct strbuf *out);
/* The conversions of span s without their literals, into out; scratch is
 * the caller's, so that another thread may render the line meanwhile. */
void rprog_render_span(const struct rprog *p, bool raw, const struct rspan *s, const uint8_t *rec,
		       size_t len, struct strbuf *scratch, struct strbuf *out);
const struct rspan *rprog_span(const struct rprog *p, const struct tp_field *f);

/* render_ptr.c: %p and its extensions */
void render_pointer(const struct rseg *s, const struct rval *v, bool raw, struct strbuf *out);
void render_plain_pointer(uint64_t v, bool raw, struct strbuf *out);	/* %p */
uint64_t render_hash_pointer(uint64_t v);	/* the hash %p prints; NULL, ERR_PTR as is */
void render_bitmap(const uint8_t *p, size_t bytes, unsigned nbits, bool list, struct strbuf *out);
/* t applied to v; with hash, a v that t does not name all of prints as "0x" and its hash. */
void render_symbols(const struct tp_symtab *t, uint64_t v, bool hash, struct strbuf *out);

/* render_addr.c: which fields hold addresses (tp_field.is_pointer) */
bool render_ext_prints_address(const char *ext);
void render_mark_pointer_fields(struct tp_event *e, const struct rnode *n);
void render_mark_pointer_fields_text(struct tp_event *e);

/* render_kallsyms.c: false (nothing printed) if no symbol holds addr */
bool kallsyms_lookup_print(uint64_t addr, bool with_offset, struct strbuf *out);

/* render_text.c: the kernel's trace_seq helpers */
void render_hex(const uint8_t *p, size_t n, bool concatenate, struct strbuf *out);
void render_int_array(const uint8_t *p, size_t count, unsigned el_size, struct strbuf *out);
void render_str(const struct rseg *s, const char *p, size_t n, struct strbuf *out);
void render_number(const struct rseg *s, uint64_t v, struct strbuf *out);

#endif
