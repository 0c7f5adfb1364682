// SPDX-License-Identifier: GPL-2.0
/* The plain form of a field: a number, a string or an array. It is what
 * events print when their print fmt cannot be rendered. */
#include <string.h>
#include "render_priv.h"

static void put_number(const struct tp_field *f, const uint8_t *p, unsigned size, bool raw,
		       struct strbuf *out)
{
	uint64_t v = tracerd_load(p, size, f->is_signed && !f->is_pointer);

	/* Not sb_printf: a few numbers per event, and printf's format parsing
	 * cost more than the conversion. */
	if (f->is_pointer) {
		sb_put(out, "0x", 2);
		sb_put_hex(out, raw ? v : render_hash_pointer(v));
	} else if (f->is_signed) {
		sb_put_i64(out, (int64_t)v);
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
			  render_hash_pointer(tracerd_load(p + i, es, false)) :
			  tracerd_load(p + i, es, false)));
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
		off = tracerd_loc_off(loc, f->offset, f->kind == TP_FIELD_REL_LOC);
		n = tracerd_loc_len(loc);
		if (f->offset + 4 > len || !tracerd_span_fits(off, n, len)) {
			sb_puts(out, "[bad __data_loc]");
			return;
		}
		put_array(f, rec + off, n, raw, out);
		return;
	}
}
