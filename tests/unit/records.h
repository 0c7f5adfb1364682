/* SPDX-License-Identifier: GPL-2.0 */
/* A record of an event as the class program leaves it in its scratch buffer
 * (as large as the BPF side's), built field by field from the event's format:
 * common_type set, everything else zero until set. */
#ifndef TRACERD_TEST_RECORDS_H
#define TRACERD_TEST_RECORDS_H

#include <linux/types.h>
#include <string.h>
#include "kernel-events/events.h"
#include "tracerd_record.h"
#include "test.h"
#include "util.h"

struct rec {
	const struct tp_event *e;
	__u32 len;	/* the fixed part, then what rec_loc() appended */
	__u8 data[2 * TRACERD_MAX_RECORD] __attribute__((aligned(8)));
};

_unused_ static void rec_init(struct rec *r, const struct tp_event *e)
{
	__u16 id = e->id;

	memset(r, 0, sizeof(*r));
	r->e = e;
	r->len = e->fixed_size;
	memcpy(r->data, &id, 2);
}

/* The field's bytes (at most 8) from v, little endian. */
_unused_ static void rec_num(struct rec *r, const char *field, __s64 v)
{
	const struct tp_field *f = tp_event_field(r->e, field);

	EXPECT(f, "no field %s", field);
	if (f)
		memcpy(r->data + f->offset, &v, f->size < 8 ? f->size : 8);
}

/* The first n bytes of the field from p. */
_unused_ static void rec_bytes(struct rec *r, const char *field, const void *p, size_t n)
{
	const struct tp_field *f = tp_event_field(r->e, field);

	EXPECT(f && f->size >= n, "no field %s of %zu bytes", field, n);
	if (f && f->size >= n)
		memcpy(r->data + f->offset, p, n);
}

/* Appends n bytes from p as the __data_loc field's payload. */
_unused_ static void rec_loc(struct rec *r, const char *field, const void *p, size_t n)
{
	memcpy(r->data + r->len, p, n);
	rec_num(r, field, (__s64)((__u32)n << 16 | r->len));
	r->len += n;
}

/* A string field: a char array (cut to its size; what lies after the NUL
 * is junk, which must not count), or a __data_loc string appended. */
_unused_ static void rec_str(struct rec *r, const char *field, const char *s)
{
	const struct tp_field *f = tp_event_field(r->e, field);
	size_t n = strlen(s) + 1;

	EXPECT(f && f->is_string, "no string %s", field);
	if (!f)
		return;
	if (f->kind != TP_FIELD_ARRAY) {
		rec_loc(r, field, s, n);
		return;
	}
	memset(r->data + f->offset, 'x', f->size);
	memcpy(r->data + f->offset, s, n < f->size ? n : f->size);
}

#endif
