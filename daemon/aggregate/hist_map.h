/* SPDX-License-Identifier: GPL-2.0 */
/* The histograms in the BPF maps (bpf/aggregate.bpf.h), from the daemon's
 * side: a slot's descriptor and budgets set up, its generation flipped, and
 * the old generation's entries read out and cleared. */
#ifndef TRACERD_HIST_MAP_H
#define TRACERD_HIST_MAP_H

#include "hist.h"

struct hist_maps {
	int descs, budgets;			/* map fds (the loader's) */
	int keys[AGG_MAPS];			/* agg_small, agg_medium, agg_large */
	int stacks;				/* stack ids' frames (agg_stacks) */
	int track;				/* onmax()/onchange() (hist_track); -1: none */
	int ncpu;				/* values per entry: 1, they are shared */
	int sync_outer, sync_inner;		/* ours, for hist_wait_programs; -1: none */
};

/* What one generation of one slot held. */
struct hist_dump {
	struct hist_entry *v;	/* keys point into keys */
	size_t n, cap;
	uint8_t *keys;
	uint8_t *extra;		/* keys of a second generation merged in */
	size_t key_size;
	uint64_t dropped;
	uint64_t stack_cut;	/* events counted under a key with a cut stack */
};

int hist_maps_init(struct hist_maps *m, int descs, int budgets, const int keys[AGG_MAPS],
		   int stacks);
void hist_maps_close(struct hist_maps *m);
/* Writes desc (generation 0) for slot, with empty budgets. */
int hist_slot_setup(const struct hist_maps *m, uint32_t slot, struct agg_desc *desc);
/* Events of slot go to the other generation from now on; *old is the one
 * to collect once events that saw it have finished. */
int hist_flip(const struct hist_maps *m, uint32_t slot, struct agg_desc *desc, uint32_t *old);
/* Returns once every BPF program that was running has finished: after a
 * flip, no event is still counting in the old generation. */
int hist_wait_programs(const struct hist_maps *m);
/* A key of desc's compact layout (agg_desc.short_size: its strings short),
 * in the small map, as the full key the large map would have had: each
 * part at its key_off, a string's bytes and zeros after. */
void hist_key_from_compact(const struct agg_desc *desc, const uint8_t *compact,
			   uint8_t full[TRACERD_AGG_LARGE]);
/* Reads out and deletes generation gen of slot, and clears its budget. A
 * stack_ids slot's entries keyed by stack id come out keyed by the frames,
 * as those the program counted under its frames. */
int hist_collect(const struct hist_maps *m, const struct hist *h, uint32_t slot, uint32_t gen,
		 struct hist_dump *d);
void hist_dump_free(struct hist_dump *d);
/* Entries of equal keys made one (counts and sums added); sorted by key. */
void hist_dump_merge(struct hist_dump *d);
/* hist_counts.c: a histogram's counts by key, compact (without what
 * onmax() keeps): what GET /metrics reads and keeps. */
struct hist_count {
	const uint8_t *key;
	uint64_t hitcount;
	uint64_t sums[TRACERD_AGG_VALS];
};

struct hist_counts {
	struct hist_count *v;	/* keys point into keys */
	uint8_t *keys;
	size_t n, cap, key_size;
};

/* Appends key (key_size bytes, copied) with its counts (sums NULL: 0). */
int hist_counts_add(struct hist_counts *c, const uint8_t *key, uint64_t hits,
		    const uint64_t sums[TRACERD_AGG_VALS]);
void hist_count_add(struct hist_count *to, const struct hist_count *e);
/* By key bytes; merge also makes entries of equal keys one. */
void hist_counts_sort(struct hist_counts *c);
void hist_counts_merge(struct hist_counts *c);
/* The index of key in c, sorted; -1: none. */
ssize_t hist_counts_find(const struct hist_counts *c, const uint8_t *key);
void hist_counts_free(struct hist_counts *c);

/* hist_peek.c: every entry of the aggregation maps at one moment, read in
 * batches and not cleared: what the histograms counted since their last
 * dump (GET /metrics). */
struct hist_peek {
	struct hist_peek_map {
		uint8_t *keys;		/* whole map keys, agg_key_hdr first */
		struct agg_value *vals;
		uint32_t *order;	/* the entries' indexes by slot */
		size_t n, key_full;
	} maps[AGG_MAPS];
};

int hist_peek_read(const struct hist_maps *m, struct hist_peek *p);
void hist_peek_free(struct hist_peek *p);
/* The counts of slot in p, both generations made one, by the keys
 * hist_collect() dumps; but a stack_ids slot's stay keyed by stack id
 * (read its totals only). */
int hist_peek_slot(const struct hist_maps *m, const struct hist_peek *p, const struct hist *h,
		   uint32_t slot, struct hist_counts *c);
/* hist_total.c: what a histogram counted since its slot began, for counters
 * that only go up (GET /metrics) although interval dumps clear the maps.
 * Keys become series up to a cap, the first seen (most hits first among
 * those seen together); a series stays one. The counts of the other keys
 * are one, "other". */
struct hist_total {
	struct hist_counts kept;	/* the series' counts the maps were cleared of, by key */
	struct hist_count other;	/* the other keys' counts (its key: NULL) */
	bool has_other;			/* a key was ever left out */
};

/* Adds a dump's counts, cleared from the maps (d->dropped, counted under no
 * key, is not in any). */
int hist_total_add(struct hist_total *t, const struct hist_dump *d, size_t cap);
/* The counts since the slot began: t's plus cur's, what the maps hold now
 * (hist_peek_slot()). *ret: a count per series (keys point into t: valid
 * until t changes), to free; *other: the other keys' counts. */
int hist_total_read(struct hist_total *t, const struct hist_counts *cur, size_t cap,
		    struct hist_count **ret, size_t *n, struct hist_count *other);
void hist_total_free(struct hist_total *t);
/* hist_stack.c: the common_stacktrace keys of d as the kernel's hist file
 * shows them (the tracing machinery's leading frames off, TRACERD_HIST_STACK_DEPTH
 * frames, HIST_STACK_CUT after a deeper stack), and entries that became
 * equal merged; d->stack_cut counts the events of the cut ones. */
void hist_stack_canon(const struct hist *h, struct hist_dump *d);

#endif
