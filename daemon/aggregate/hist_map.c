// SPDX-License-Identifier: GPL-2.0
/* Reading a slot's histogram out of the BPF maps, per interval: the slot's
 * generation is flipped first (hist_flip), so that events go to the other
 * one while this one is read and deleted (hist_collect);
 * then the generation's entry budget and Dropped start again from 0. The
 * daemon's work is per entry and interval, not per event. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>
#include "hist_map_priv.h"
#include "util.h"

int hist_maps_init(struct hist_maps *m, int descs, int budgets, const int keys[AGG_MAPS],
		   int stacks)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);

	/* The values are shared by the CPUs (atomic adds): one per entry. */
	*m = (struct hist_maps){ .descs = descs, .budgets = budgets, .stacks = stacks, .ncpu = 1,
				 .sync_outer = -1, .sync_inner = -1, .track = -1 };
	memcpy(m->keys, keys, sizeof(m->keys));
	m->sync_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tracerd_sync_in", 4, 4, 1, NULL);
	if (m->sync_inner < 0)
		return -errno;
	o.inner_map_fd = m->sync_inner;
	m->sync_outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "tracerd_sync", 4, 4, 1, &o);
	if (m->sync_outer < 0) {
		int r = -errno;

		hist_maps_close(m);
		return r;
	}
	return 0;
}

void hist_maps_close(struct hist_maps *m)
{
	if (m->sync_outer >= 0)
		close(m->sync_outer);
	if (m->sync_inner >= 0)
		close(m->sync_inner);
	m->sync_outer = m->sync_inner = -1;
}

/* The kernel makes a write to a map of maps return only after every running
 * non-sleepable BPF program has finished (an expedited RCU grace period, so
 * that userspace knows the programs use the new inner map). Writing the same
 * inner map again changes nothing and is that wait, whatever the number of
 * CPUs or a preempted program; a sleep only makes one likely. */
int hist_wait_programs(const struct hist_maps *m)
{
	uint32_t k = 0;

	return bpf_map_update_elem(m->sync_outer, &k, &m->sync_inner, BPF_ANY) < 0 ? -errno : 0;
}

int hist_slot_setup(const struct hist_maps *m, uint32_t slot, struct agg_desc *desc)
{
	struct agg_budget zero = { 0 };

	desc->gen = 0;
	for (uint32_t g = 0; g < 2; g++) {
		uint32_t idx = slot * 2 + g;

		if (bpf_map_update_elem(m->budgets, &idx, &zero, BPF_ANY) < 0)
			return -errno;
	}
	return bpf_map_update_elem(m->descs, &slot, desc, BPF_ANY) < 0 ? -errno : 0;
}

int hist_flip(const struct hist_maps *m, uint32_t slot, struct agg_desc *desc, uint32_t *old)
{
	*old = desc->gen & 1;
	desc->gen = *old ^ 1;
	if (bpf_map_update_elem(m->descs, &slot, desc, BPF_ANY) < 0) {
		desc->gen = *old;
		return -errno;
	}
	return 0;
}

void hist_dump_free(struct hist_dump *d)
{
	free(d->v);
	free(d->keys);
	free(d->extra);
	*d = (struct hist_dump){ 0 };
}

/* Appends one entry: its key bytes and its values summed over CPUs. */
static int dump_add(struct hist_dump *d, size_t key_size, const uint8_t *key,
		    const struct agg_value *per_cpu, int ncpu)
{
	struct hist_entry *e;
	uint8_t *k;

	if (GROW(d->v, d->cap, d->n) < 0)
		return -ENOMEM;
	k = realloc(d->keys, d->cap * key_size);
	if (!k)
		return -ENOMEM;
	d->keys = k;
	memcpy(d->keys + d->n * key_size, key, key_size);
	e = &d->v[d->n++];
	*e = (struct hist_entry){ 0 };
	for (int c = 0; c < ncpu; c++) {
		e->hitcount += per_cpu[c].hitcount;
		for (size_t i = 0; i < TRACERD_AGG_VALS; i++)
			e->sums[i] += per_cpu[c].sums[i];
	}
	return 0;
}

/* The keys of (slot, gen), copied out: deleting while walking with
 * get_next_key would restart the walk. */
static int find_keys(int fd, size_t full, uint32_t slot, uint32_t gen, uint8_t **ret, size_t *n)
{
	_cleanup_free_ uint8_t *cur = calloc(1, full), *next = calloc(1, full);
	uint8_t *keys = NULL, *k;
	size_t cap = 0;
	void *prev = NULL;

	*n = 0;
	if (!cur || !next)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		const struct agg_key_hdr *hdr = (const void *)next;

		if (hdr->slot == slot && hdr->gen == gen) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 64;
				k = realloc(keys, cap * full);
				if (!k) {
					free(keys);
					return -ENOMEM;
				}
				keys = k;
			}
			memcpy(keys + (*n)++ * full, next, full);
		}
		memcpy(cur, next, full);
		prev = cur;
	}
	*ret = keys;
	return 0;
}

void hist_key_from_compact(const struct agg_desc *desc, const uint8_t *compact,
			   uint8_t full[TRACERD_AGG_LARGE])
{
	memset(full, 0, TRACERD_AGG_LARGE);
	for (uint32_t i = 0; i < desc->n_keys && i < TRACERD_AGG_KEYS; i++) {
		const struct agg_key_src *k = &desc->keys[i];

		memcpy(full + k->key_off, compact + k->short_off, tracerd_agg_short_width(k));
	}
}

const uint8_t *hist_full_key(const struct hist_maps *m, const struct agg_desc *desc,
			     enum key_form f, const uint8_t *key, uint8_t buf[TRACERD_AGG_LARGE])
{
	uint64_t id;
	uint32_t id32;

	if (f == KEY_FULL)
		return key;
	if (f == KEY_COMPACT) {
		hist_key_from_compact(desc, key, buf);
		return buf;
	}
	memset(buf, 0, TRACERD_AGG_LARGE);
	memcpy(&id, key, sizeof(id));
	id32 = id;
	return bpf_map_lookup_elem(m->stacks, &id32, buf) < 0 ? NULL : buf;
}

/* Reads out and deletes the entries of (slot, gen) in map fd, keys of
 * key_size bytes after the header and of form f, into d; an entry whose
 * key cannot be made counts as Dropped. */
static int collect_map(const struct hist_maps *m, const struct agg_desc *desc, int fd,
		       size_t key_size, enum key_form f, uint32_t slot, uint32_t gen,
		       struct agg_value *vals, struct hist_dump *d)
{
	size_t full = sizeof(struct agg_key_hdr) + key_size, n = 0;
	_cleanup_free_ uint8_t *keys = NULL;
	uint8_t buf[TRACERD_AGG_LARGE];
	int r = find_keys(fd, full, slot, gen, &keys, &n);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *key = keys + i * full + sizeof(struct agg_key_hdr);

		/* Read and delete at once: an event still counting in it
		 * (one that saw the old generation) is not lost between. */
		if (bpf_map_lookup_and_delete_elem(fd, keys + i * full, vals) < 0)
			continue;
		key = hist_full_key(m, desc, f, key, buf);
		if (!key) {
			for (int c = 0; c < m->ncpu; c++)
				d->dropped += vals[c].hitcount;
			continue;
		}
		r = dump_add(d, d->key_size, key, vals, m->ncpu);
		if (r < 0)
			return r;
	}
	return 0;
}

/* onmax()/onchange(): each entry's tracked value and saved fields, by the
 * same key, read out and deleted with it (a trigger's key is the small
 * map's, in its full layout). */
static void collect_track(const struct hist_maps *m, uint32_t slot, uint32_t gen,
			  struct hist_dump *d)
{
	struct {
		struct agg_key_hdr hdr;
		uint8_t data[TRACERD_AGG_SMALL];
	} k = { .hdr = { .slot = slot, .gen = gen } };

	if (m->track < 0)
		return;
	for (size_t i = 0; i < d->n; i++) {
		memcpy(k.data, d->v[i].key, TRACERD_AGG_SMALL);
		d->v[i].tracked = bpf_map_lookup_and_delete_elem(m->track, &k, &d->v[i].track) == 0;
	}
}

enum key_form hist_small_form(const struct agg_desc *desc)
{
	return desc->stack_ids ? KEY_STACK_ID : desc->short_size ? KEY_COMPACT : KEY_FULL;
}

int hist_collect(const struct hist_maps *m, const struct hist *h, uint32_t slot, uint32_t gen,
		 struct hist_dump *d)
{
	size_t key_size = tracerd_agg_map_bytes(h->desc.map);
	int fd = m->keys[h->desc.map % AGG_MAPS], r = 0;
	_cleanup_free_ struct agg_value *vals = calloc(m->ncpu, sizeof(*vals));
	struct agg_budget b = { 0 }, zero = { 0 };
	uint32_t idx = slot * 2 + gen;

	*d = (struct hist_dump){ .key_size = key_size };
	if (!vals)
		return -ENOMEM;
	if (hist_small_form(&h->desc) != KEY_FULL)
		r = collect_map(m, &h->desc, m->keys[AGG_MAP_SMALL], TRACERD_AGG_SMALL,
				hist_small_form(&h->desc), slot, gen, vals, d);
	if (r >= 0)
		r = collect_map(m, &h->desc, fd, key_size, KEY_FULL, slot, gen, vals, d);
	if (r < 0) {
		hist_dump_free(d);
		return r;
	}
	/* The entry pointers, now that the key array no longer moves. */
	for (size_t i = 0; i < d->n; i++)
		d->v[i].key = d->keys + i * key_size;
	if (h->trig.track)
		collect_track(m, slot, gen, d);
	hist_stack_canon(h, d);
	/* A string whose loc word says more than TRACERD_AGG_STR_SHORT bytes
	 * but whose NUL comes before went to the large map under a key that a
	 * short one may also have in the small map. */
	if (h->desc.short_size)
		hist_dump_merge(d);
	if (bpf_map_lookup_elem(m->budgets, &idx, &b) < 0)
		return -errno;
	d->dropped += b.dropped;
	if (bpf_map_update_elem(m->budgets, &idx, &zero, BPF_ANY) < 0)
		return -errno;
	return 0;
}
