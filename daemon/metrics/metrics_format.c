// SPDX-License-Identifier: GPL-2.0
/* The exposition formats' pieces: the Prometheus text format 0.0.4 and
 * OpenMetrics 1.0.0, which differ here only in a counter family's name, the
 * "# EOF" and a histogram's _count; and which of them a scraper asks for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "metrics.h"
#include "metrics_priv.h"
#include "util.h"

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0: no
 * overlong form, surrogate or code point above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
		     (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t cp = len == 1 ? s[0] : s[0] & (0x7f >> len);

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Both formats want UTF-8: a byte that is not (a comm may hold any) is
 * U+FFFD. */
void metrics_label(struct strbuf *out, const char *name, const char *v)
{
	sb_puts(out, name);
	sb_putc(out, '=');
	metrics_value(out, v);
}

void metrics_value(struct strbuf *out, const char *v)
{
	size_t n = strlen(v), k;

	sb_putc(out, '"');
	for (; *v; v += k, n -= k) {
		k = utf8_len((const unsigned char *)v, n);
		if (!k) {
			sb_puts(out, "\xef\xbf\xbd");
			k = 1;
		} else if (*v == '\\' || *v == '"') {
			sb_putc(out, '\\');
			sb_putc(out, *v);
		} else if (*v == '\n') {
			sb_puts(out, "\\n");
		} else {
			sb_put(out, v, k);
		}
	}
	sb_putc(out, '"');
}

void metrics_head(struct strbuf *out, bool om, const char *name, const char *type,
		  const char *help)
{
	size_t n = strlen(name);

	if (om && !strcmp(type, "counter") && n > 6 && !strcmp(name + n - 6, "_total"))
		n -= 6;
	sb_printf(out, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n, name, type);
}

void metrics_event_labels(struct strbuf *out, const char *sel, const struct tp_event *e)
{
	char ev[256];

	snprintf(ev, sizeof(ev), "%s:%s", e->system, e->name);
	metrics_label(out, "selection", sel);
	sb_putc(out, ',');
	metrics_label(out, "event", ev);
}

/* The q= of one media range's parameters (";q=0.5"), 1 without. */
static double range_q(const char *params, size_t n)
{
	const char *q = memmem(params, n, "q=", 2);

	return q ? strtod(q + 2, NULL) : 1.0;
}

static double max_q(double a, double b)
{
	return a > b ? a : b;
}

bool metrics_wants_openmetrics(const char *accept)
{
	double om = 0, text = 0;

	/* Prometheus asks for OpenMetrics at q=1, then text/plain at q=0.5
	 * and any type at q=0.1: the higher q wins. */
	for (const char *s = accept; *s;) {
		size_t n, type;

		s += strspn(s, " \t");
		n = strcspn(s, ",");
		type = strcspn(s, ";, \t");
		if (type == 28 && !strncasecmp(s, "application/openmetrics-text", type))
			om = max_q(om, range_q(s, n));
		else if ((type == 10 && !strncasecmp(s, "text/plain", type)) ||
			 (type == 6 && !strncasecmp(s, "text/*", type)) ||
			 (type == 3 && !strncmp(s, "*/*", type)))
			text = max_q(text, range_q(s, n));
		s += n + (s[n] == ',');
	}
	return om > 0 && om >= text;
}
