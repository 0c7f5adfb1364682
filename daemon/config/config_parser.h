/* SPDX-License-Identifier: GPL-2.0 */
/* Inside daemon/config/ only: the reader's state, which the value types
 * (config_parse.c) need for their diagnostics. */
#ifndef TRACERD_CONFIG_PARSER_H
#define TRACERD_CONFIG_PARSER_H

#include "config.h"
#include "util.h"

struct config_parser {
	struct config *c;
	struct diag *d;		/* NULL while defaults are applied */
	const char *file;
	int line;
	const char *source;	/* the current logical line */
	const char *section;	/* as in the table; NULL before the first header */
	/* A logical line joins physical lines ending in '\\': where each one
	 * starts in it, so that a column maps back to the physical line. */
	size_t seg[64];
	int n_seg;
};

/* config_parse.c: [Synthetic]'s list emptied. */
void config_synth_reset(struct config *c);

/* config_diag.c */
/* Sets the diagnostic at a 1-based column of the logical line; -EINVAL. */
int config_error(struct config_parser *p, int col, const char *fmt, ...) _printf_(3, 4);
/* Physical line, column and text for a 1-based column of the logical line. */
void config_locate(const struct config_parser *p, int col, int *line, int *pcol, char *src,
		   size_t size);
/* Where a value written at column col of the current line is, kept. */
int config_pos_set(const struct config_parser *p, struct conf_pos *pos, int col);
void config_pos_free(struct conf_pos *pos);
/* Appends word i of n to a list "a, b or c" in buf. */
void config_list_append(char *buf, size_t size, size_t i, size_t n, const char *word);

#endif
