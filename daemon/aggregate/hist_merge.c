// SPDX-License-Identifier: GPL-2.0
/* Entries of a dump whose keys became equal made one: stacks that differed
 * only in frames the dump takes off (hist_stack.c), a key counted in both
 * maps (hist_map.c: a string whose loc word is long, its NUL early). */
#include "hist_map.h"
#include "util.h"

/* qsort has no context argument: the key size of the dump being merged. */
static __thread size_t merging;

static int cmp_keys(const void *pa, const void *pb)
{
	const struct hist_entry *a = pa, *b = pb;

	return memcmp(a->key, b->key, merging);
}

void hist_dump_merge(struct hist_dump *d)
{
	size_t out = 0;

	if (!d->n)
		return;
	merging = d->key_size;
	qsort_safe(d->v, d->n, sizeof(*d->v), cmp_keys);
	for (size_t i = 1; i < d->n; i++) {
		struct hist_entry *o = &d->v[out];

		if (memcmp(o->key, d->v[i].key, d->key_size)) {
			d->v[++out] = d->v[i];
			continue;
		}
		o->hitcount += d->v[i].hitcount;
		for (size_t j = 0; j < TRACERD_AGG_VALS; j++)
			o->sums[j] += d->v[i].sums[j];
	}
	d->n = out + 1;
}
