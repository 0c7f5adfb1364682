// SPDX-License-Identifier: GPL-2.0
/* Where a config diagnostic points, and its text: a column of the logical
 * line mapped back to its physical line, and the lists of what was expected.
 * Below the reader (config.c) and the value types (config_parse.c), which
 * both report through it, so that neither calls the other back. */
#include "config_parser.h"

void config_locate(const struct config_parser *p, int col, int *line, int *pcol, char *src, size_t size)
{
	int k = 0;
	size_t end;

	while (k + 1 < p->n_seg && col > 0 && p->seg[k + 1] <= (size_t)col - 1)
		k++;
	*line = p->line + k;
	*pcol = col > 0 ? col - (int)p->seg[k] : col;
	end = k + 1 < p->n_seg ? p->seg[k + 1] - 1 : strlen(p->source ? p->source : "");
	if (src)
		snprintf(src, size, "%.*s", (int)(end - p->seg[k]),
			 p->source ? p->source + p->seg[k] : "");
}

int config_error(struct config_parser *p, int col, const char *fmt, ...)
{
	va_list ap;
	int line, pcol;

	if (!p->d)
		return -EINVAL;
	config_locate(p, col, &line, &pcol, p->d->source, sizeof(p->d->source));
	diag_set(p->d, p->file, line, pcol, "%s", "");
	va_start(ap, fmt);
	vsnprintf(p->d->msg, sizeof(p->d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void config_list_append(char *buf, size_t size, size_t i, size_t n, const char *word)
{
	size_t len = strlen(buf);

	snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", word);
}

void config_pos_free(struct conf_pos *pos)
{
	free(pos->file);
	free(pos->source);
}

int config_pos_set(const struct config_parser *p, struct conf_pos *pos, int col)
{
	char src[512];

	config_pos_free(pos);
	config_locate(p, col, &pos->line, &pos->col, src, sizeof(src));
	pos->file = strdup(p->file);
	pos->source = strdup(src);
	return pos->file && pos->source ? 0 : -ENOMEM;
}
