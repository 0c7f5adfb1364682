/* SPDX-License-Identifier: GPL-2.0 */
/* A diagnostic in an expression of the config (Filter=, Aggregate=): the
 * byte it is about, turned into the config's file:line:column. */
#ifndef TRACERD_FILTER_DIAG_H
#define TRACERD_FILTER_DIAG_H

#include "config/config.h"
#include "diag.h"

/* Where the expression came from, and where its errors go. */
struct filter_text {
	const char *expr;
	const struct conf_pos *pos;	/* may be NULL: columns count from 1 */
	struct diag *d;
};

/* Fills src->d for the byte at off; returns -EINVAL. */
int filter_error(const struct filter_text *src, int off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
