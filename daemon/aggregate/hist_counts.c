// SPDX-License-Identifier: GPL-2.0
/* A histogram's counts by key, compact (no onmax() value, which a dump's
 * entry carries): what GET /metrics reads from the maps (hist_peek.c) and
 * keeps across interval dumps (hist_total.c), for as many keys as the
 * histogram has series. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hist_map.h"
#include "util.h"

int hist_counts_add(struct hist_counts *c, const uint8_t *key, uint64_t hits,
		    const uint64_t sums[TRACERD_AGG_VALS])
{
	uintptr_t base = (uintptr_t)c->keys;	/* freed if moved: a number only */
	uint8_t *k;

	if (GROW(c->v, c->cap, c->n) < 0)
		return -ENOMEM;
	k = realloc(c->keys, c->cap * c->key_size);
	if (!k)
		return -ENOMEM;
	c->keys = k;
	/* The keys moved; each entry's is where it was in them (entries may
	 * have been sorted since, the keys stay in the order added). */
	for (size_t i = 0; base != (uintptr_t)k && i < c->n; i++)
		c->v[i].key = k + ((uintptr_t)c->v[i].key - base);
	memcpy(k + c->n * c->key_size, key, c->key_size);
	c->v[c->n] = (struct hist_count){ .key = k + c->n * c->key_size, .hitcount = hits };
	if (sums)
		memcpy(c->v[c->n].sums, sums, sizeof(c->v[c->n].sums));
	c->n++;
	return 0;
}

void hist_count_add(struct hist_count *to, const struct hist_count *e)
{
	to->hitcount += e->hitcount;
	for (size_t j = 0; j < TRACERD_AGG_VALS; j++)
		to->sums[j] += e->sums[j];
}

static int cmp_key(const void *a, const void *b, void *key_size)
{
	return memcmp(((const struct hist_count *)a)->key, ((const struct hist_count *)b)->key,
		      *(size_t *)key_size);
}

void hist_counts_sort(struct hist_counts *c)
{
	if (c->n > 1)
		qsort_r(c->v, c->n, sizeof(*c->v), cmp_key, &c->key_size);
}

void hist_counts_merge(struct hist_counts *c)
{
	size_t out = 0;

	if (!c->n)
		return;
	hist_counts_sort(c);
	for (size_t i = 1; i < c->n; i++) {
		if (memcmp(c->v[out].key, c->v[i].key, c->key_size))
			c->v[++out] = c->v[i];
		else
			hist_count_add(&c->v[out], &c->v[i]);
	}
	c->n = out + 1;
}

ssize_t hist_counts_find(const struct hist_counts *c, const uint8_t *key)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = memcmp(c->v[mid].key, key, c->key_size);

		if (!r)
			return mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void hist_counts_free(struct hist_counts *c)
{
	free(c->v);
	free(c->keys);
	*c = (struct hist_counts){ 0 };
}
