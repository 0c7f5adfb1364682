// SPDX-License-Identifier: GPL-2.0
/* Records into ring-buffer pages, event by event as the kernel's
 * rb_update_event() writes them: a payload of up to 112 bytes has its
 * length / 4 in type_len; a longer one type_len 0 and a length word
 * (payload + 4); a delta that does not fit 27 bits is a time-extend event
 * first. A page's first event is at the page's time stamp. Lost events are
 * the next page's: bits 31 and 30 of its commit, the count after its data,
 * as the kernel marks a page read after an overrun. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "export/trace_dat_priv.h"

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static size_t mark_room(const struct td_cpu *c)
{
	return c->lost_on_page ? 8 : 0;
}

int td_cpu_flush(struct td_cpu *c)
{
	uint64_t commit = c->used;
	ssize_t n;

	if (!c->used && !c->lost_on_page)
		return 0;
	if (c->lost_on_page) {
		commit |= TD_MISSED_EVENTS | TD_MISSED_STORED;
		put64(c->page + TD_PAGE_HDR + c->used, c->lost_on_page);
	}
	put64(c->page, c->page_ts);
	put64(c->page + 8, commit);
	memset(c->page + TD_PAGE_HDR + c->used + mark_room(c), 0,
	       TD_PAGE_SIZE - TD_PAGE_HDR - c->used - mark_room(c));
	n = pwrite(c->fd, c->page, TD_PAGE_SIZE, c->bytes);
	if (n != TD_PAGE_SIZE)
		return n < 0 ? -errno : -EIO;
	c->bytes += TD_PAGE_SIZE;
	c->used = 0;
	c->lost_on_page = 0;
	return 0;
}

int td_cpu_lost(struct td_cpu *c, uint64_t n)
{
	int r = td_cpu_flush(c);

	if (r < 0)
		return r;
	c->lost_pending += n;
	return 0;
}

static void start_page(struct td_cpu *c, uint64_t ts)
{
	c->page_ts = c->last_ts = ts;
	c->lost_on_page = c->lost_pending;
	c->lost_pending = 0;
}

int td_cpu_append(struct td_cpu *c, uint64_t ts, const uint8_t *rec, size_t len, uint16_t id)
{
	size_t pad = (len + 3) & ~(size_t)3;
	size_t ev = (pad <= TD_MAX_SMALL_DATA ? 4 : 8) + pad;
	uint64_t delta;
	uint8_t *p;
	int r;

	if (len < 8)
		return -EINVAL;		/* not even the common fields */
	if (TD_PAGE_HDR + ev + 8 > TD_PAGE_SIZE)
		return -E2BIG;
	if (ts < c->last_ts) {
		/* Another boot's clock, or a clock that stepped: kept in
		 * order at the previous time, and counted. */
		ts = c->last_ts;
		c->reordered++;
	}
	delta = c->used ? ts - c->last_ts : 0;
	if (c->used && TD_PAGE_HDR + c->used + ev + (delta >> TD_DELTA_BITS ? 8 : 0) + mark_room(c) >
			       TD_PAGE_SIZE) {
		r = td_cpu_flush(c);
		if (r < 0)
			return r;
	}
	if (!c->used) {
		start_page(c, ts);
		delta = 0;
	}
	p = c->page + TD_PAGE_HDR + c->used;
	if (delta >> TD_DELTA_BITS) {
		put32(p, TD_TYPE_TIME_EXTEND | (uint32_t)(delta & ((1u << TD_DELTA_BITS) - 1)) << 5);
		put32(p + 4, (uint32_t)(delta >> TD_DELTA_BITS));
		p += 8;
		c->used += 8;
		delta = 0;
	}
	if (pad <= TD_MAX_SMALL_DATA) {
		put32(p, (uint32_t)(pad / 4) | (uint32_t)delta << 5);
		p += 4;
	} else {
		put32(p, (uint32_t)delta << 5);
		put32(p + 4, (uint32_t)pad + 4);
		p += 8;
	}
	memcpy(p, rec, len);
	memset(p + len, 0, pad - len);
	memcpy(p, &id, sizeof(id));	/* common_type: the export's id of the event */
	c->used += ev;
	c->last_ts = ts;
	return 0;
}
