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

/* Digits of v in base 8, 10 or 16, written backwards ending at end. */
static char *utoa_rev(char *end, uint64_t v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	if (base == 10) {
		do
			*--end = '0' + v % 10;
		while (v /= 10);
		return end;
	}
	do
		*--end = digits[v & (base - 1)];
	while (v >>= (base == 16 ? 4 : 3));
	return end;
}

/* printf's integer conversion, by hand: this runs for most fields of most
 * events, and vsnprintf's format parsing and stream setup cost more than
 * the conversion itself. The rules are C's (flags "-+ #0", width,
 * precision), checked against snprintf by test_render. */
void render_number(const struct rseg *s, uint64_t v, struct strbuf *out)
{
	bool is_signed = s->conv == 'd' || s->conv == 'i';
	unsigned base = s->conv == 'o' ? 8 : s->conv == 'x' || s->conv == 'X' ? 16 : 10;
	char buf[32], *end = buf + sizeof(buf), *d;
	const char *pfx = "";
	size_t nd, zeros = 0, len, plen;
	int width = s->width < 0 ? 0 : s->width;

	v = tracerd_widen(v, s->int_size, is_signed);
	if (s->flags & RF_HASH && !v && base == 16) {
		hash_zero(s, out);
		return;
	}
	/* The usual %d, %u, %x: no flags, width or precision. */
	if (!s->flags && s->width <= 0 && s->prec < 0) {
		bool neg = is_signed && (int64_t)v < 0;

		d = utoa_rev(end, neg ? -v : v, base, s->conv == 'X');
		if (neg)
			*--d = '-';
		sb_put(out, d, end - d);
		return;
	}
	if (is_signed && (int64_t)v < 0)
		pfx = "-", v = -v;
	else if (is_signed && s->flags & (RF_PLUS | RF_SPACE))
		pfx = s->flags & RF_PLUS ? "+" : " ";
	else if (s->flags & RF_HASH && base == 16)
		pfx = s->conv == 'X' ? "0X" : "0x";
	d = s->prec == 0 && !v ? end : utoa_rev(end, v, base, s->conv == 'X');
	nd = end - d;
	if (s->prec > 0 && (size_t)s->prec > nd)
		zeros = s->prec - nd;
	/* %#o: the first digit is a 0, adding one if need be. */
	if (s->flags & RF_HASH && base == 8 && !zeros && (!nd || *d != '0'))
		zeros = 1;
	plen = pfx[0] ? pfx[1] ? 2 : 1 : 0;
	len = plen + zeros + nd;
	if (s->flags & RF_ZERO && !(s->flags & RF_MINUS) && s->prec < 0 && (size_t)width > len) {
		zeros += width - len;
		len = width;
	}
	if (!(s->flags & RF_MINUS) && (size_t)width > len)
		pad(out, width - len, ' ');
	sb_put(out, pfx, plen);
	pad(out, zeros, '0');
	sb_put(out, d, nd);
	if (s->flags & RF_MINUS && (size_t)width > len)
		pad(out, width - len, ' ');
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

void render_c_escaped(const char *s, size_t n, struct strbuf *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		switch (c) {
		case '"': sb_put(out, "\\\"", 2); continue;
		case '\\': sb_put(out, "\\\\", 2); continue;
		case '\n': sb_put(out, "\\n", 2); continue;
		case '\t': sb_put(out, "\\t", 2); continue;
		case '\r': sb_put(out, "\\r", 2); continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			sb_putc(out, c);
			continue;
		}
		sb_put(out, "\\x", 2);
		sb_putc(out, hex[c >> 4]);
		sb_putc(out, hex[c & 15]);
	}
}
