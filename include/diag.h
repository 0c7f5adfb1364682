/* SPDX-License-Identifier: GPL-2.0 */
/* A diagnostic about user input: where (file:line:column) and what was
 * expected. Parsers fill one and return -EINVAL; the edge prints it once. */
#ifndef TRACERD_DIAG_H
#define TRACERD_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct diag {
	char file[256];
	int line, col;		/* 1-based; 0 when not known */
	char msg[1024];
	char source[512];	/* the offending line, for the caret */
};

int diag_set(struct diag *d, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void diag_print(const struct diag *d, FILE *out);
/* Levenshtein distance, for "did you mean"; SIZE_MAX if b is too long. */
size_t diag_edit_distance(const char *a, const char *b, bool fold_case);
/* "file:line:col: msg" on one line, for the journal. */
void diag_format(const struct diag *d, char *buf, size_t size);

#endif
