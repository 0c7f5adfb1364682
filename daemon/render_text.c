// SPDX-License-Identifier: GPL-2.0
/* Numbers, strings, hex dumps and arrays as the kernel's vsprintf and
 * trace_seq helpers print them. */
#include "render_priv.h"
#include "util.h"

static void pad(struct strbuf *out, int n, char c)
{
	for (; n > 0; n--)
		sb_putc(out, c);
}

void render_str(const struct rseg *s, const char *p, size_t n, struct strbuf *out)
{
	int w;

	n = strnlen(p, n);
	if (s->prec >= 0 && (size_t)s->prec < n)
		n = s->prec;
	w = s->width > (int)n ? s->width - (int)n : 0;
	if (!(s->flags & RF_MINUS))
		pad(out, w, ' ');
	sb_put(out, p, n);
	if (s->flags & RF_MINUS)
		pad(out, w, ' ');
}

/* The kernel prints "0x0" for %#x of zero, where libc prints "0". */
static void hash_zero(const struct rseg *s, struct strbuf *out)
{
	const char *pfx = s->conv == 'X' ? "0X" : "0x";
	int w = s->width > 3 ? s->width - 3 : 0;

	if (s->flags & RF_ZERO && !(s->flags & RF_MINUS)) {
		sb_puts(out, pfx);
		pad(out, w, '0');
		sb_putc(out, '0');
		return;
	}
	if (!(s->flags & RF_MINUS))
		pad(out, w, ' ');
	sb_printf(out, "%s0", pfx);
	if (s->flags & RF_MINUS)
		pad(out, w, ' ');
}

void render_number(const struct rseg *s, uint64_t v, struct strbuf *out)
{
	bool is_signed = s->conv == 'd' || s->conv == 'i';
	char fmt[16], *f = fmt;

	if (s->int_size < 8) {
		v &= (1ULL << (s->int_size * 8)) - 1;
		if (is_signed && (v >> (s->int_size * 8 - 1)) & 1)
			v |= ~0ULL << (s->int_size * 8);
	}
	if (s->flags & RF_HASH && !v && (s->conv == 'x' || s->conv == 'X')) {
		hash_zero(s, out);
		return;
	}
	*f++ = '%';
	for (unsigned i = 0; i < 5; i++)
		if (s->flags & (1u << i))
			*f++ = "-+ #0"[i];
	memcpy(f, "*.*ll", 5);
	f[5] = s->conv == 'i' ? 'd' : s->conv;
	f[6] = 0;
	if (is_signed)
		sb_printf(out, fmt, s->width < 0 ? 0 : s->width, s->prec, (long long)v);
	else
		sb_printf(out, fmt, s->width < 0 ? 0 : s->width, s->prec, (unsigned long long)v);
}

void render_hex(const uint8_t *p, size_t n, bool concatenate, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++)
		sb_printf(out, "%s%2.2x", concatenate || !i ? "" : " ", p[i]);
}

void render_int_array(const uint8_t *p, size_t count, unsigned el_size, struct strbuf *out)
{
	sb_putc(out, '{');
	for (size_t i = 0; i < count; i++) {
		const char *pfx = i ? "," : "";
		uint64_t v = 0;

		if (el_size != 1 && el_size != 2 && el_size != 4 && el_size != 8) {
			sb_printf(out, "BAD SIZE:%u 0x%x", el_size, p[i * el_size]);
			continue;
		}
		memcpy(&v, p + i * el_size, el_size);
		sb_printf(out, "%s0x%llx", pfx, (unsigned long long)v);
	}
	sb_putc(out, '}');
}
