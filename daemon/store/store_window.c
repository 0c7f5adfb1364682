// SPDX-License-Identifier: GPL-2.0
/* The recorder's window (Output=recorder): on the file thread, each sealed
 * block is compressed as the store compresses it and kept in memory as the
 * BLOCK chunk a file would hold, instead of being written; past the
 * window's size the oldest blocks are dropped, whole, and their records
 * counted (overwritten), so that the window's span is exact. A snapshot
 * (store_snapshot.c) takes references to blocks, which outlive their
 * place in the window until it has written them. */
#include "store/store_priv.h"
#include "util.h"

struct store_wblock *store_wblock_ref(struct store_wblock *b)
{
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

void store_wblock_unref(struct store_wblock *b)
{
	if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(b->payload);
	free(b->events);
	free(b->kaddrs);
	free(b);
}

/* What a block takes of the window's size. */
static uint64_t wblock_bytes(const struct store_wblock *b)
{
	return sizeof(*b) + b->h.disk_len + b->n_events * sizeof(*b->events) +
	       b->n_kaddrs * sizeof(*b->kaddrs);
}

/* b as w->out holds it compressed (store_file_pack()). Its header is
 * sealed when a snapshot writes it. */
static struct store_wblock *wblock_new(struct store_writer *w, const struct store_block *b)
{
	struct store_wblock *wb = calloc(1, sizeof(*wb));

	if (!wb)
		return NULL;
	wb->refs = 1;
	wb->gen = b->gen;
	wb->lost = b->lost;
	wb->h = (struct store_chunk_hdr){
		.type = STORE_CHUNK_BLOCK, .codec = w->o.codec, .raw_len = w->payload.len,
		.disk_len = w->out.len, .n_records = b->n, .ts_first = b->ts_min, .ts_last = b->ts_max,
	};
	wb->payload = malloc(w->out.len ? w->out.len : 1);
	wb->events = calloc(b->n_counts ? b->n_counts : 1, sizeof(*wb->events));
	wb->kaddrs = malloc(b->kaddrs.len ? b->kaddrs.len : 1);
	if (!wb->payload || !wb->events || !wb->kaddrs || b->kaddrs.oom) {
		store_wblock_unref(wb);
		return NULL;
	}
	if (w->out.len)
		memcpy(wb->payload, w->out.p, w->out.len);
	for (size_t i = 0; i < b->n_counts; i++)
		wb->events[wb->n_events++] = b->counts[i].id;
	if (b->kaddrs.len)
		memcpy(wb->kaddrs, b->kaddrs.p, b->kaddrs.len);
	wb->n_kaddrs = b->kaddrs.len / sizeof(uint64_t);
	return wb;
}

/* Whether generation a is b or after it (they wrap). */
static bool gen_reached(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

int store_snap_take(struct store_snap *s, struct store_wblock *b)
{
	if (GROW(s->b, s->cap, s->n) < 0)
		return -ENOMEM;
	s->b[s->n++] = store_wblock_ref(b);
	return 0;
}

/* Drops the oldest blocks while the window holds more than size; never
 * the newest. Under the lock. */
static void evict(struct store_window *win, uint64_t size)
{
	size_t k = 0;

	while (k + 1 < win->n && win->bytes > size) {
		struct store_wblock *b = win->b[k++];

		win->bytes -= wblock_bytes(b);
		win->overwritten += b->h.n_records;
		win->overwritten_lost += b->lost;
		store_wblock_unref(b);
	}
	memmove(win->b, win->b + k, (win->n - k) * sizeof(*win->b));
	win->n -= k;
}

/* Under the lock: wb (NULL: the block could not be kept) into the window,
 * and into the snapshot that is taking blocks. */
static int keep(struct store_writer *w, const struct store_block *b, struct store_wblock *wb)
{
	struct store_window *win = &w->win;
	struct store_snap *s = win->snap;
	int r = 0;

	if (wb) {
		wb->first_record = win->records;
		if (GROW(win->b, win->cap, win->n) < 0)
			r = -ENOMEM;
		else {
			win->b[win->n++] = store_wblock_ref(wb);
			win->bytes += wblock_bytes(wb);
			evict(win, w->o.window);
		}
		if (s && !s->complete && (!s->ending || gen_reached(s->last_gen, b->gen)) &&
		    store_snap_take(s, wb) < 0)
			s->info.err = -ENOMEM;
	}
	win->records += b->n;
	win->done_gen = b->gen;
	if (s && s->ending && gen_reached(b->gen, s->last_gen))
		s->complete = true;
	return r;
}

int store_window_add(struct store_writer *w, struct store_block *b)
{
	struct store_wblock *wb = NULL;
	int r = store_file_pack(w, b);

	if (r >= 0 && !(wb = wblock_new(w, b)))
		r = -ENOMEM;
	pthread_mutex_lock(&w->lock);
	if (keep(w, b, wb) < 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0) {
		w->stats.lost += b->n;
		w->stats.last_error = r;
	} else {
		w->stats.written += b->n;
		w->stats.blocks++;
		w->stats.last_error = 0;
	}
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	store_wblock_unref(wb);
	store_file_done(w, b, r);
	return r;
}

void store_window_get_stats(struct store_writer *w, struct store_window_stats *s)
{
	pthread_mutex_lock(&w->lock);
	*s = (struct store_window_stats){
		.bytes = w->win.bytes, .blocks = w->win.n, .records = w->win.records,
		.overwritten = w->win.overwritten, .overwritten_lost = w->win.overwritten_lost,
	};
	pthread_mutex_unlock(&w->lock);
}

void store_window_free(struct store_window *win)
{
	for (size_t i = 0; i < win->n; i++)
		store_wblock_unref(win->b[i]);
	free(win->b);
	*win = (struct store_window){ 0 };
}
