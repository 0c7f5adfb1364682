// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "diag.h"

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
