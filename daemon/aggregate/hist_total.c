// SPDX-License-Identifier: GPL-2.0
/* What a histogram counted since its slot began, for counters that only go
 * up (GET /metrics) while AggregateIntervalSec= dumps clear the maps. The
 * keys become series up to a cap (the first keys seen, most hits first
 * among those seen together); the counts of every other key are one, as
 * "other". A key once a series stays one, so that no count moves from a
 * series into "other" or back: each of them only goes up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hist_map_priv.h"
#include "util.h"

static int cmp_key_bytes(const void *a, const void *b, void *key_size)
{
	const struct hist_entry *x = a, *y = b;

	return memcmp(x->key, y->key, *(size_t *)key_size);
}

static int cmp_hits_desc(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;

	return x->hitcount > y->hitcount ? -1 : x->hitcount < y->hitcount;
}

/* The index of key among the series, or -1. */
static ssize_t find(const struct hist_total *t, const uint8_t *key)
{
	size_t lo = 0, hi = t->kept.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(t->kept.v[mid].key, key, t->kept.key_size);

		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void add_counts(struct hist_entry *to, const struct hist_entry *e)
{
	to->hitcount += e->hitcount;
	for (size_t j = 0; j < TRACERD_AGG_VALS; j++)
		to->sums[j] += e->sums[j];
}

/* Makes the keys of new (n entries, most hits first) series while fewer
 * than cap are, with their counts if counted (else 0: the maps still hold
 * them); the others' counts go to other if counted. The series stay sorted. */
static int admit(struct hist_total *t, const struct hist_entry *new, size_t n, size_t cap,
		 bool counted)
{
	struct hist_dump *k = &t->kept;
	size_t i;

	for (i = 0; i < n && k->n < cap; i++) {
		const struct agg_value zero = { 0 };
		uintptr_t base = (uintptr_t)k->keys;	/* freed if moved: a number only */
		int r = hist_dump_add(k, k->key_size, new[i].key, &zero, 1);

		if (r < 0)
			return r;
		/* The keys moved; each entry's is where it was in them (the
		 * entries are sorted, the keys stay in the order added). */
		for (size_t j = 0; base != (uintptr_t)k->keys && j + 1 < k->n; j++)
			k->v[j].key = k->keys + ((uintptr_t)k->v[j].key - base);
		k->v[k->n - 1].key = k->keys + (k->n - 1) * k->key_size;
		if (counted)
			add_counts(&k->v[k->n - 1], &new[i]);
	}
	for (; i < n; i++) {
		t->has_other = true;
		if (counted)
			add_counts(&t->other, &new[i]);
	}
	if (k->n)
		qsort_r(k->v, k->n, sizeof(*k->v), cmp_key_bytes, &k->key_size);
	return 0;
}

/* Entries of d that are not series yet, most hits first; d's counts of the
 * series are added to them if counted. */
static int split(struct hist_total *t, const struct hist_dump *d, bool counted,
		 struct hist_entry **ret_new, size_t *n_new)
{
	struct hist_entry *new = malloc((d->n ? d->n : 1) * sizeof(*new));

	if (!new)
		return -ENOMEM;
	*n_new = 0;
	for (size_t i = 0; i < d->n; i++) {
		ssize_t at = find(t, d->v[i].key);

		if (at < 0)
			new[(*n_new)++] = d->v[i];
		else if (counted)
			add_counts(&t->kept.v[at], &d->v[i]);
	}
	qsort_safe(new, *n_new, sizeof(*new), cmp_hits_desc);
	*ret_new = new;
	return 0;
}

int hist_total_add(struct hist_total *t, const struct hist_dump *d, size_t cap)
{
	_cleanup_free_ struct hist_entry *new = NULL;
	size_t n;
	int r;

	if (!t->kept.key_size)
		t->kept.key_size = d->key_size;
	r = split(t, d, true, &new, &n);
	return r < 0 ? r : admit(t, new, n, cap, true);
}

int hist_total_read(struct hist_total *t, const struct hist_dump *cur, size_t cap,
		    struct hist_entry **ret, size_t *n, struct hist_entry *other)
{
	_cleanup_free_ struct hist_entry *new = NULL;
	struct hist_entry *v;
	size_t n_new;
	int r;

	if (!t->kept.key_size)
		t->kept.key_size = cur->key_size;
	r = split(t, cur, false, &new, &n_new);
	if (r >= 0)
		r = admit(t, new, n_new, cap, false);
	if (r < 0)
		return r;
	/* The series, with what the maps hold of each on top. */
	v = malloc((t->kept.n ? t->kept.n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (t->kept.n)
		memcpy(v, t->kept.v, t->kept.n * sizeof(*v));
	*other = t->other;
	for (size_t i = 0; i < cur->n; i++) {
		ssize_t at = find(t, cur->v[i].key);

		add_counts(at < 0 ? other : &v[at], &cur->v[i]);
	}
	*ret = v;
	*n = t->kept.n;
	return 0;
}

void hist_total_free(struct hist_total *t)
{
	if (!t)
		return;
	hist_dump_free(&t->kept);
	free(t);
}
