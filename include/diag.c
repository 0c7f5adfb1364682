// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "diag.h"
#include "util.h"

int diag_set(struct diag *d, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return -EINVAL;
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	d->line = line;
	d->col = col;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void diag_format(const struct diag *d, char *buf, size_t size)
{
	if (d->line && d->col)
		snprintf(buf, size, "%s:%d:%d: %s", d->file, d->line, d->col, d->msg);
	else if (d->line)
		snprintf(buf, size, "%s:%d: %s", d->file, d->line, d->msg);
	else if (d->file[0])
		snprintf(buf, size, "%s: %s", d->file, d->msg);
	else
		snprintf(buf, size, "%s", d->msg);
}

void diag_print(const struct diag *d, FILE *out)
{
	char buf[2048];

	diag_format(d, buf, sizeof(buf));
	fprintf(out, "%s\n", buf);
	if (d->source[0] && d->col > 0) {
		fprintf(out, "    %s\n    %*s^\n", d->source, d->col - 1, "");
	}
}

static bool same_char(char x, char y, bool fold_case)
{
	return fold_case ? tolower((unsigned char)x) == tolower((unsigned char)y) : x == y;
}

size_t diag_edit_distance(const char *a, const char *b, bool fold_case)
{
	size_t la = strlen(a), lb = strlen(b), prev[128], cur[128];

	if (lb >= ARRAY_SIZE(prev))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + !same_char(a[i - 1], b[j - 1], fold_case);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(*prev));
	}
	return prev[lb];
}
