// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "strbuf.h"

static bool sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1, cap;
	char *n;

	if (need <= sb->cap)
		return true;
	if (sb->oom)
		return false;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need)
		cap *= 2;
	n = realloc(sb->buf, cap);
	if (!n) {
		sb->oom = true;
		return false;
	}
	sb->buf = n;
	sb->cap = cap;
	return true;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	memset(sb, 0, sizeof(*sb));
}

void sb_put_slow(struct strbuf *sb, const char *s, size_t n)
{
	if (!sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void sb_putc_slow(struct strbuf *sb, char c)
{
	sb_put_slow(sb, &c, 1);
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_put(sb, s, strlen(s));
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	/* Print into the room there is first: one pass in the common case. */
	if (!sb_reserve(sb, 64))
		return;
	va_copy(ap2, ap);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	if ((size_t)n >= sb->cap - sb->len) {
		if (!sb_reserve(sb, n)) {
			sb->buf[sb->len] = 0;
			return;
		}
		vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	}
	sb->len += n;
}

/* Decimal and hexadecimal numbers without printf's format parsing: the
 * renderers print several per event. */
void sb_put_u64(struct strbuf *sb, uint64_t v)
{
	char tmp[20], *p = tmp + sizeof(tmp);

	do
		*--p = '0' + v % 10;
	while (v /= 10);
	sb_put(sb, p, tmp + sizeof(tmp) - p);
}

void sb_put_i64(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		sb_putc(sb, '-');
		sb_put_u64(sb, -(uint64_t)v);
	} else {
		sb_put_u64(sb, v);
	}
}

void sb_put_hex(struct strbuf *sb, uint64_t v)
{
	char tmp[16], *p = tmp + sizeof(tmp);

	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	sb_put(sb, p, tmp + sizeof(tmp) - p);
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}
