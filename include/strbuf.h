/* SPDX-License-Identifier: GPL-2.0 */
/* A growable text buffer for rendering; it never fails loudly: on ENOMEM it
 * stops growing and remembers that it was cut. */
#ifndef TRACERD_STRBUF_H
#define TRACERD_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_putc(struct strbuf *sb, char c);
void sb_put(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
static inline const char *sb_str(const struct strbuf *sb) { return sb->buf ? sb->buf : ""; }

#endif
