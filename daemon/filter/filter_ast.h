/* SPDX-License-Identifier: GPL-2.0 */
/* The parsed form of a filter expression, shared by the parser
 * (filter_parse.c) and the compiler (filter_compile.c). Positions are byte
 * offsets into the expression, turned into config columns for diagnostics. */
#ifndef TRACERD_FILTER_AST_H
#define TRACERD_FILTER_AST_H

#include <stddef.h>
#include "filter_diag.h"

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

/* NULL *ret for an empty expression. */
int filter_parse(const struct filter_text *src, struct fnode **ret);
void fnode_free(struct fnode *n);
static inline void fnode_freep(struct fnode **n) { fnode_free(*n); }
const char *fpred_op_name(enum fpred_op op);

#endif
