// SPDX-License-Identifier: GPL-2.0
/* The histograms' counts as they stand, read without clearing anything
 * (GET /metrics): each aggregation map read whole once, in batches (a few
 * bpf() calls rather than two per entry; every bpf() map call is a moment
 * in which the kernel skips tracepoint programs on its CPU), its entries
 * ordered by slot, and a slot's entries of both generations made one dump. */
#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>
#include "hist_map_priv.h"
#include "util.h"

/* Entries a batch call may return at least: a hash bucket's entries come
 * whole or the call fails (ENOSPC), and a bucket holds a few. */
#define PEEK_MIN 256

/* Room for at least PEEK_MIN entries more (doubling). */
static int grow_room(struct hist_peek_map *pm, size_t *cap)
{
	uint8_t *k;
	struct agg_value *v;
	size_t c = *cap;

	if (c - pm->n >= PEEK_MIN)
		return 0;
	c = c ? c * 2 : PEEK_MIN;
	k = realloc(pm->keys, c * pm->key_full);
	if (!k)
		return -ENOMEM;
	pm->keys = k;
	v = realloc(pm->vals, c * sizeof(*v));
	if (!v)
		return -ENOMEM;
	pm->vals = v;
	*cap = c;
	return 0;
}

/* The batch cursor: for a hash map, a bucket index; libbpf asks for room
 * for a key. */
union peek_cursor {
	uint8_t bytes[sizeof(struct agg_key_hdr) + TRACERD_AGG_LARGE];
	uint64_t align;
};

static int read_map(int fd, struct hist_peek_map *pm)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	union peek_cursor cur[2];
	void *in = NULL;
	size_t cap = 0;
	int r;

	for (int i = 0;; i ^= 1) {
		uint32_t count;

		r = grow_room(pm, &cap);
		if (r < 0)
			return r;
		count = cap - pm->n;
		r = bpf_map_lookup_batch(fd, in, &cur[i], pm->keys + pm->n * pm->key_full,
					 pm->vals + pm->n, &count, &o);
		pm->n += count;		/* also with ENOENT: the last batch */
		if (r < 0)
			return errno == ENOENT ? 0 : -errno;
		in = &cur[i];
	}
}

static int cmp_slot(const void *a, const void *b, void *keys_full)
{
	const struct hist_peek_map *pm = keys_full;
	const struct agg_key_hdr *x = (const void *)(pm->keys + *(const uint32_t *)a * pm->key_full);
	const struct agg_key_hdr *y = (const void *)(pm->keys + *(const uint32_t *)b * pm->key_full);

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

int hist_peek_read(const struct hist_maps *m, struct hist_peek *p)
{
	*p = (struct hist_peek){ 0 };
	for (int i = 0; i < AGG_MAPS; i++) {
		struct hist_peek_map *pm = &p->maps[i];
		int r;

		pm->key_full = sizeof(struct agg_key_hdr) + tracerd_agg_map_bytes(i);
		r = read_map(m->keys[i], pm);
		if (r >= 0 && pm->n) {
			pm->order = malloc(pm->n * sizeof(*pm->order));
			r = pm->order ? 0 : -ENOMEM;
		}
		if (r < 0) {
			hist_peek_free(p);
			return r;
		}
		for (size_t k = 0; k < pm->n; k++)
			pm->order[k] = k;
		if (pm->n)
			qsort_r(pm->order, pm->n, sizeof(*pm->order), cmp_slot, pm);
	}
	return 0;
}

void hist_peek_free(struct hist_peek *p)
{
	for (int i = 0; i < AGG_MAPS; i++) {
		free(p->maps[i].keys);
		free(p->maps[i].vals);
		free(p->maps[i].order);
	}
	*p = (struct hist_peek){ 0 };
}

/* The first of pm's entries (in slot order) whose slot is not below slot. */
static size_t first_of(const struct hist_peek_map *pm, uint32_t slot)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct agg_key_hdr *h = (const void *)(pm->keys + pm->order[mid] * pm->key_full);

		if (h->slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Appends the entries of slot in pm (both generations), their keys in form f. */
static int peek_map(const struct hist_maps *m, const struct hist *h, const struct hist_peek_map *pm,
		    enum key_form f, uint32_t slot, struct hist_counts *c)
{
	uint8_t buf[TRACERD_AGG_LARGE];

	for (size_t i = first_of(pm, slot); i < pm->n; i++) {
		const uint8_t *k = pm->keys + pm->order[i] * pm->key_full;
		const struct agg_key_hdr *hdr = (const void *)k;
		const uint8_t *key = k + sizeof(*hdr);
		int r;

		if (hdr->slot != slot)
			break;
		/* A stack id stays one: its frames are not read (metrics
		 * export a stack histogram's total only). */
		if (f == KEY_STACK_ID) {
			memset(buf, 0, sizeof(buf));
			memcpy(buf, key, TRACERD_AGG_SMALL);
			key = buf;
		} else {
			key = hist_full_key(m, &h->desc, f, key, buf);
		}
		r = hist_counts_add(c, key, pm->vals[pm->order[i]].hitcount,
				    (const uint64_t *)pm->vals[pm->order[i]].sums);
		if (r < 0)
			return r;
	}
	return 0;
}

int hist_peek_slot(const struct hist_maps *m, const struct hist_peek *p, const struct hist *h,
		   uint32_t slot, struct hist_counts *c)
{
	enum key_form small = hist_small_form(&h->desc);
	int r = 0;

	*c = (struct hist_counts){ .key_size = tracerd_agg_map_bytes(h->desc.map) };
	if (small != KEY_FULL)
		r = peek_map(m, h, &p->maps[AGG_MAP_SMALL], small, slot, c);
	if (r >= 0)
		r = peek_map(m, h, &p->maps[h->desc.map % AGG_MAPS], KEY_FULL, slot, c);
	if (r < 0) {
		hist_counts_free(c);
		return r;
	}
	hist_counts_merge(c);	/* a key in both generations, or in both maps */
	return 0;
}
