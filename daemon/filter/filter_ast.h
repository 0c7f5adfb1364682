/* SPDX-License-Identifier: GPL-2.0 */
/* The parsed form of a filter expression, shared by the parser
 * (filter_parse.c) and the compiler (filter_compile.c). Positions are byte
 * offsets into the expression, turned into config columns for diagnostics. */
#ifndef TRACERD_FILTER_AST_H
#define TRACERD_FILTER_AST_H

#include <stddef.h>
#include "config/config.h"
#include "diag.h"

enum fnode_kind { FN_AND, FN_OR, FN_NOT, FN_PRED };

enum fpred_op {
	FO_EQ, FO_NE, FO_LT, FO_LE, FO_GT, FO_GE,
	FO_BAND,	/* &: any bit set */
	FO_BALL,	/* &=: all bits set */
	FO_GLOB,	/* ~ */
	FO_IN,		/* in (a, b, ...) */
};

/* A value as written: a quoted string, or a bare word that the compiler
 * reads by the field's type (number, MAJOR:MINOR, symbol, unquoted string). */
struct fvalue {
	char *text;		/* without the quotes */
	int off;
	int quoted;
};

struct fnode {
	enum fnode_kind kind;
	int off;
	struct fnode *l, *r;	/* AND, OR; NOT uses l */
	char *field;		/* FN_PRED */
	enum fpred_op op;
	int op_off;
	struct fvalue *vals;
	size_t n_vals;
};

/* Where the expression came from, and where its errors go. */
struct filter_text {
	const char *expr;
	const struct conf_pos *pos;	/* may be NULL: columns count from 1 */
	struct diag *d;
};

/* Fills src->d for the byte at off; returns -EINVAL. */
int filter_error(const struct filter_text *src, int off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* NULL *ret for an empty expression. */
int filter_parse(const struct filter_text *src, struct fnode **ret);
void fnode_free(struct fnode *n);
static inline void fnode_freep(struct fnode **n) { fnode_free(*n); }
const char *fpred_op_name(enum fpred_op op);

#endif
