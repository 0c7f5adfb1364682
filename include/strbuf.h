/* SPDX-License-Identifier: GPL-2.0 */
/* A growable text buffer for rendering; it never fails loudly: on ENOMEM it
 * stops growing and remembers that it was cut. */
#ifndef TRACERD_STRBUF_H
#define TRACERD_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct strbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_put_slow(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
void sb_put_u64(struct strbuf *sb, uint64_t v);	/* decimal */
void sb_put_i64(struct strbuf *sb, int64_t v);
void sb_put_hex(struct strbuf *sb, uint64_t v);	/* lower case, no 0x */
void sb_putc_slow(struct strbuf *sb, char c);

/* Inline while there is room: renderers put characters one by one. */
static inline void sb_putc(struct strbuf *sb, char c)
{
	if (sb->len + 2 <= sb->cap) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = 0;
	} else {
		sb_putc_slow(sb, c);
	}
}

/* Up to 16 bytes as two overlapping fixed-size moves, which compile to
 * plain loads and stores: most pieces of a rendered line are this short,
 * and calls to memcpy for them were a sixth of the daemon's time. */
static inline void sb_copy(char *d, const char *s, size_t n)
{
	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/* Inline while there is room: most pieces are a few bytes. */
static inline void sb_put(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 <= sb->cap) {
		sb_copy(sb->buf + sb->len, s, n);
		sb->len += n;
		sb->buf[sb->len] = 0;
	} else {
		sb_put_slow(sb, s, n);
	}
}

static inline const char *sb_str(const struct strbuf *sb) { return sb->buf ? sb->buf : ""; }

#endif
