// SPDX-License-Identifier: GPL-2.0
/* What a histogram counted since its slot began, for counters that only go
 * up (GET /metrics) while AggregateIntervalSec= dumps clear the maps. The
 * keys become series up to a cap (the first keys seen, most hits first
 * among those seen together); the counts of every other key are one, as
 * "other". A key once a series stays one, so that no count moves from a
 * series into "other" or back: each of them only goes up. What is kept is
 * bounded by the cap, not by the keys seen. */
#include <stdlib.h>
#include <string.h>
#include "hist_map.h"
#include "util.h"

static int cmp_hits_desc(const void *a, const void *b)
{
	const struct hist_count *x = a, *y = b;

	return x->hitcount > y->hitcount ? -1 : x->hitcount < y->hitcount;
}

/* Makes the keys of new (n entries, most hits first) series while fewer
 * than cap are, with their counts if counted (else 0: the maps still hold
 * them); the others' counts go to other if counted. */
static int admit(struct hist_total *t, const struct hist_count *new, size_t n, size_t cap,
		 bool counted)
{
	size_t i;

	for (i = 0; i < n && t->kept.n < cap; i++) {
		int r = counted ? hist_counts_add(&t->kept, new[i].key, new[i].hitcount, new[i].sums) :
				  hist_counts_add(&t->kept, new[i].key, 0, NULL);

		if (r < 0)
			return r;
	}
	for (; i < n; i++) {
		t->has_other = true;
		if (counted)
			hist_count_add(&t->other, &new[i]);
	}
	hist_counts_sort(&t->kept);
	return 0;
}

/* The entries of v (n) that are not series yet, most hits first; the counts
 * of those that are are added to them if counted. */
static int split(struct hist_total *t, const struct hist_count *v, size_t n, bool counted,
		 struct hist_count **ret_new, size_t *n_new)
{
	struct hist_count *new = malloc((n ? n : 1) * sizeof(*new));

	if (!new)
		return -ENOMEM;
	*n_new = 0;
	for (size_t i = 0; i < n; i++) {
		ssize_t at = hist_counts_find(&t->kept, v[i].key);

		if (at < 0)
			new[(*n_new)++] = v[i];
		else if (counted)
			hist_count_add(&t->kept.v[at], &v[i]);
	}
	qsort_safe(new, *n_new, sizeof(*new), cmp_hits_desc);
	*ret_new = new;
	return 0;
}

int hist_total_add(struct hist_total *t, const struct hist_dump *d, size_t cap)
{
	_cleanup_free_ struct hist_count *v = malloc((d->n ? d->n : 1) * sizeof(*v));
	_cleanup_free_ struct hist_count *new = NULL;
	size_t n;
	int r;

	if (!v)
		return -ENOMEM;
	if (!t->kept.key_size)
		t->kept.key_size = d->key_size;
	for (size_t i = 0; i < d->n; i++) {
		v[i] = (struct hist_count){ .key = d->v[i].key, .hitcount = d->v[i].hitcount };
		memcpy(v[i].sums, d->v[i].sums, sizeof(v[i].sums));
	}
	r = split(t, v, d->n, true, &new, &n);
	return r < 0 ? r : admit(t, new, n, cap, true);
}

int hist_total_read(struct hist_total *t, const struct hist_counts *cur, size_t cap,
		    struct hist_count **ret, size_t *n, struct hist_count *other)
{
	_cleanup_free_ struct hist_count *new = NULL;
	struct hist_count *v;
	size_t n_new;
	int r;

	if (!t->kept.key_size)
		t->kept.key_size = cur->key_size;
	r = split(t, cur->v, cur->n, false, &new, &n_new);
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
		ssize_t at = hist_counts_find(&t->kept, cur->v[i].key);

		hist_count_add(at < 0 ? other : &v[at], &cur->v[i]);
	}
	*ret = v;
	*n = t->kept.n;
	return 0;
}

void hist_total_free(struct hist_total *t)
{
	if (!t)
		return;
	hist_counts_free(&t->kept);
	free(t);
}
