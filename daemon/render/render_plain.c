// SPDX-License-Identifier: GPL-2.0
/* The plain form of a field: a number, a string or an array. It is what
 * events print when their print fmt cannot be rendered. */
#include <string.h>
#include "render_priv.h"

static uint64_t load_uint(const uint8_t *p, unsigned size)
{
	uint8_t v8; uint16_t v16; uint32_t v32; uint64_t v64 = 0;

	switch (size) {
	case 1: memcpy(&v8, p, 1); return v8;
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	default:
		/* Odd sizes (a format can say size:3) read only what is there. */
		memcpy(&v64, p, size < 8 ? size : 8);
		return v64;
	}
}

static int64_t sign_extend(uint64_t v, unsigned size)
{
	unsigned bits = size * 8;

	if (!bits)	/* a size:0 field */
		return 0;
	return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static void put_number(const struct tp_field *f, const uint8_t *p, unsigned size, bool raw,
		       struct strbuf *out)
{
	uint64_t v = load_uint(p, size);

	/* Not sb_printf: a few numbers per event, and printf's format parsing
	 * cost more than the conversion. */
	if (f->is_pointer) {
		sb_put(out, "0x", 2);
		sb_put_hex(out, raw ? v : render_hash_pointer(v));
	} else if (f->is_signed) {
		sb_put_i64(out, sign_extend(v, size));
	} else {
		sb_put_u64(out, v);
	}
}

static void put_array(const struct tp_field *f, const uint8_t *p, size_t bytes, bool raw,
		      struct strbuf *out)
{
	unsigned es = f->elem_size ? f->elem_size : 1;
	bool hash = f->is_pointer && !raw;	/* ftrace's caller[8]: "%ps" of each */

	if (f->is_string) {
		sb_put(out, (const char *)p, strnlen((const char *)p, bytes));
		return;
	}
	sb_putc(out, '{');
	for (size_t i = 0; i + es <= bytes; i += es)
		sb_printf(out, "%s0x%llx", i ? "," : "", (unsigned long long)(hash ?
			  render_hash_pointer(load_uint(p + i, es)) : load_uint(p + i, es)));
	sb_putc(out, '}');
}

void render_field_plain(const struct tp_field *f, const uint8_t *rec, size_t len,
			bool raw, struct strbuf *out)
{
	uint32_t loc, off, n;

	if ((uint64_t)f->offset + f->size > len) {
		sb_puts(out, "[field past the record]");
		return;
	}
	switch (f->kind) {
	case TP_FIELD_SCALAR:
		put_number(f, rec + f->offset, f->size, raw, out);
		return;
	case TP_FIELD_ARRAY:
		put_array(f, rec + f->offset, f->size, raw, out);
		return;
	case TP_FIELD_FLEX:
		put_array(f, rec + f->offset, len - f->offset, raw, out);
		return;
	case TP_FIELD_DATA_LOC:
	case TP_FIELD_REL_LOC:
		memcpy(&loc, rec + f->offset, 4);
		off = (loc & 0xffff) + (f->kind == TP_FIELD_REL_LOC ? f->offset + 4 : 0);
		n = loc >> 16;
		if (f->offset + 4 > len || off > len || n > len - off) {
			sb_puts(out, "[bad __data_loc]");
			return;
		}
		put_array(f, rec + off, n, raw, out);
		return;
	}
}
