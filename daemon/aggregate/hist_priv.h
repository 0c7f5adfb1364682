/* SPDX-License-Identifier: GPL-2.0 */
/* Inside daemon/aggregate: the parser's state, shared by hist_parse.c (keys,
 * values, sort, size) and hist_vars.c (variables and actions). */
#ifndef TRACERD_HIST_PRIV_H
#define TRACERD_HIST_PRIV_H

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"

struct hparser {
	const struct filter_text *src;
	const char *s;
	int i;
	int end;	/* the trigger's end: a trailing "if FILTER" is Filter='s */
};

static inline bool hist_is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A field name; *off is where it starts. */
static inline int hist_parse_name(struct hparser *p, char **ret, int *off, const char *what)
{
	int start = p->i;

	while (hist_is_word(p->s[p->i]))
		p->i++;
	if (p->i == start)
		return filter_error(p->src, start, "expected %s", what);
	*off = start;
	*ret = strndup(p->s + start, p->i - start);
	return *ret ? 0 : -ENOMEM;
}

/* name=EXPR[,name=EXPR...]: p is after the first name's '='. */
int hist_parse_vars(struct hparser *p, struct hist_spec *spec, char *name, int name_off);
/* onmatch(sys.event).ACTION: p is after "onmatch". */
int hist_parse_onmatch(struct hparser *p, struct hist_spec *spec, int start);
/* onmax(...) or onchange(...): p is after the word. */
int hist_parse_ontrack(struct hparser *p, struct hist_spec *spec, int start, int kind);
void hist_vars_done(struct hist_spec *spec);

#endif
