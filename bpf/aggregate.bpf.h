/* SPDX-License-Identifier: GPL-2.0 */
/* Aggregation in the class program: a slot whose event_desc says `agg`
 * builds its histogram key from the record (agg_desc, include/
 * tracerd_record.h) and counts the event in a hash map, as the
 * kernel's hist trigger counts it in its tracing_map; the record never
 * reaches the ring buffer. The daemon reads and clears the map per interval:
 * events go to the slot's current generation, so that the daemon reads the
 * other one while it no longer changes. */
#ifndef TRACERD_AGGREGATE_BPF_H
#define TRACERD_AGGREGATE_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACERD_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct agg_desc);
} agg_descs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * TRACERD_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct agg_budget);
} agg_budgets SEC(".maps");

struct agg_key_small {
	struct agg_key_hdr hdr;
	__u8 data[TRACERD_AGG_SMALL];
};

struct agg_key_medium {
	struct agg_key_hdr hdr;
	__u8 data[TRACERD_AGG_MEDIUM];
};

struct agg_key_large {
	struct agg_key_hdr hdr;
	__u8 data[TRACERD_AGG_LARGE];
};

/* Three key sizes (enum agg_map), so that the usual small key (a comm, a
 * number or two) is not hashed as 256 bytes, nor one of 25 to 64.
 * Preallocated: an insert takes an element from a free list. Allocated on demand (BPF_F_NO_PREALLOC), a burst of new keys
 * outran the allocator's per-CPU cache (ENOMEM for 36 of the first few
 * hundred kmalloc events with two histograms). Shared values added to
 * atomically rather than per-CPU ones: per-CPU preallocation would cost
 * max_entries x values x possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_AGG_SMALL_ENTRIES);
	__type(key, struct agg_key_small);
	__type(value, struct agg_value);
} agg_small SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_AGG_MEDIUM_ENTRIES);
	__type(key, struct agg_key_medium);
	__type(value, struct agg_value);
} agg_medium SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_AGG_LARGE_ENTRIES);
	__type(key, struct agg_key_large);
	__type(value, struct agg_value);
} agg_large SEC(".maps");

/* The stacks of a stack_ids slot, by id (bpf_get_stackid(), which compares
 * the whole stack: an id is one stack). Hashing a 264-byte key cost ~170 ns
 * an event more than an id in the small map (bench/results/
 * 2026-12-04-aggregate-stack-ids.txt). Never cleared while tracerd runs,
 * so that an id in an entry not yet dumped keeps its stack; without
 * BPF_F_REUSE_STACKID, a stack whose bucket another holds, or any once the
 * map is full, gets an error instead, and is counted under its frames. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, TRACERD_AGG_STACK_IDS);
	__type(key, __u32);
	__uint(value_size, TRACERD_HIST_STACK_FRAMES * 8);
} agg_stacks SEC(".maps");

/* In the per-CPU scratch. The key buffer is twice the largest key so that
 * the verifier can bound key_off + width. */
struct agg_scratch {
	struct agg_key_hdr hdr;
	__u8 data[2 * TRACERD_AGG_LARGE];
	struct agg_value init;
};

#define AGG_REC_MASK (TRACERD_MAX_RECORD - 1)
#define AGG_KEY_MASK (TRACERD_AGG_LARGE - 1)

static __always_inline __u64 agg_load(const __u8 *rec, __u32 off, __u8 size, __u8 is_signed)
{
	off &= AGG_REC_MASK;
	switch (size) {
	case 1: return is_signed ? (__u64)*(__s8 *)(rec + off) : *(__u8 *)(rec + off);
	case 2: return is_signed ? (__u64)*(__s16 *)(rec + off) : *(__u16 *)(rec + off);
	case 4: return is_signed ? (__u64)*(__s32 *)(rec + off) : *(__u32 *)(rec + off);
	default: return *(__u64 *)(rec + off);
	}
}

/* The kernel's ilog2(roundup_pow_of_two(v)); 0 and 1 give 0. */
static __always_inline __u64 agg_log2(__u64 v)
{
	__u64 n = 1;

	if (v < 2)
		return 0;
	v--;
	if (v >> 32) { n += 32; v >>= 32; }
	if (v >> 16) { n += 16; v >>= 16; }
	if (v >> 8) { n += 8; v >>= 8; }
	if (v >> 4) { n += 4; v >>= 4; }
	if (v >> 2) { n += 2; v >>= 2; }
	if (v >> 1) n += 1;
	return n;
}

/* A string key: the kernel copies up to the NUL and pads with zeros (the
 * buffer was zeroed), so bytes after a fixed array's NUL do not count. A
 * __data_loc string is read from the event's own record (ctx): the class
 * program copied only the fixed part that the filter and keys read. */
static __always_inline void agg_key_str(const struct agg_key_src *k, const __u8 *rec,
					const __u8 *ctx, __u8 *dst, __u32 n)
{
	__u32 off = k->off & AGG_REC_MASK, loc, start;

	/* key_off < 256 and n <= 256: inside the 512 bytes of the key buffer */
	if (n > TRACERD_AGG_LARGE)
		n = TRACERD_AGG_LARGE;
	if (k->src == SRC_STR) {
		bpf_probe_read_kernel_str(dst, n, rec + off);
		return;
	}
	loc = *(__u32 *)(rec + off);
	start = (loc & 0xffff) + (k->src == SRC_REL_LOC ? off + 4 : 0);
	if (n > loc >> 16)
		n = loc >> 16;
	if (n)
		bpf_probe_read_kernel_str(dst, n, ctx + start);
}

/* common_stacktrace: the kernel call path as return addresses, the first
 * at the tracepoint's caller (from the regs perf_trace_<class> saved; the
 * tracing machinery's own frames that may precede it are taken off when
 * the dump is read). Frames past the last are zeros: bpf_get_stack()
 * clears the rest of the buffer. The frames are the key itself, as in the
 * kernel's hist: no id that two stacks could share, nothing kept between
 * dumps. False: the kernel gave no stack. */
static __always_inline bool agg_key_stack(void *ctx, __u8 *dst)
{
	return bpf_get_stack(ctx, dst, TRACERD_HIST_STACK_FRAMES * 8, 0) > 0;
}

/* compact: the key's compact layout (agg_desc.short_size), whose strings
 * are short. */
static __always_inline bool agg_key_part(const struct agg_key_src *k, const __u8 *rec,
					 void *ctx, __u64 pid_tgid, __u8 *data, bool compact)
{
	__u8 *dst = data + ((compact ? k->short_off : k->key_off) & AGG_KEY_MASK);
	__u64 v;

	switch (k->src) {
	case SRC_STACKTRACE:
		return agg_key_stack(ctx, dst);
	case SRC_STR:
	case SRC_DATA_LOC:
	case SRC_REL_LOC:
		agg_key_str(k, rec, ctx, dst, compact ? tracerd_agg_short_width(k) : k->width);
		return true;
	case SRC_COMM:
		bpf_get_current_comm(dst, TRACERD_COMM_LEN);
		return true;
	case SRC_PID_COMM:
		bpf_get_current_comm(dst + 8, TRACERD_COMM_LEN);
		/* fall through */
	case SRC_PID:
		v = (__u32)pid_tgid;
		break;
	case SRC_CPU:
		v = bpf_get_smp_processor_id();
		break;
	case SRC_CGROUP:
	case SRC_UNIT:
		v = bpf_get_current_cgroup_id();
		break;
	case SRC_TIMESTAMP:
		v = bpf_ktime_get_ns();
		break;
	default:
		v = agg_load(rec, k->off, k->size, k->is_signed);
	}
	if (k->xform == AGG_X_LOG2)
		v = agg_log2(v);
	else if (k->xform == AGG_X_BUCKETS && k->buckets)
		v = v / k->buckets * k->buckets;
	else if (k->xform == AGG_X_USECS)
		v = (v + 500) / 1000;	/* the kernel's ns2usecs() */
	*(__u64 *)dst = v;
	return true;
}

/* vals=common_timestamp[.usecs] */
static __always_inline __u64 agg_timestamp(__u32 ts)
{
	__u64 ns = bpf_ktime_get_ns();

	return ts == AGG_X_USECS ? (ns + 500) / 1000 : ns;
}

/* Adds the event to an entry other CPUs may be adding to. */
static __always_inline void agg_add(struct agg_value *v, const struct agg_desc *ad,
				    const __u8 *rec)
{
	__u32 i;

	__sync_fetch_and_add(&v->hitcount, 1);
	for (i = 0; i < TRACERD_AGG_VALS; i++) {
		const struct agg_val_src *s = &ad->vals[i];

		if (i >= ad->n_vals)
			break;
		__sync_fetch_and_add(&v->sums[i], s->ts ? agg_timestamp(s->ts) :
				     agg_load(rec, s->off, s->size, s->is_signed));
	}
}

/* A new key: take one of the slot's size= entries, or count it Dropped,
 * as the kernel's tracing_map does once max_elts are in use. */
static __always_inline bool agg_insert(void *map, struct agg_scratch *a, const struct agg_desc *ad,
				       const __u8 *rec)
{
	__u32 idx = a->hdr.slot * 2 + (a->hdr.gen & 1);
	struct agg_budget *b = bpf_map_lookup_elem(&agg_budgets, &idx);
	struct agg_value *v;
	long err;

	if (!b)
		return false;
	if (__sync_fetch_and_add(&b->entries, 1) >= ad->max_entries) {
		__sync_fetch_and_add(&b->entries, -1);
		__sync_fetch_and_add(&b->dropped, 1);
		return false;
	}
	__builtin_memset(&a->init, 0, sizeof(a->init));
	agg_add(&a->init, ad, rec);
	err = bpf_map_update_elem(map, &a->hdr, &a->init, BPF_NOEXIST);
	if (!err)
		return true;
	__sync_fetch_and_add(&b->entries, -1);
	/* Another CPU placed the same key meanwhile: count it there. */
	v = err == -17 /* EEXIST */ ? bpf_map_lookup_elem(map, &a->hdr) : NULL;
	if (v) {
		agg_add(v, ad, rec);
		return true;
	}
	__sync_fetch_and_add(&b->dropped, 1);
	return false;
}

static __always_inline bool agg_count(void *map, struct agg_scratch *a, const struct agg_desc *ad,
				      const __u8 *rec)
{
	struct agg_value *v = bpf_map_lookup_elem(map, &a->hdr);

	if (v) {
		agg_add(v, ad, rec);
		return true;
	}
	return agg_insert(map, a, ad, rec);
}

/* An event whose key could not be built: Dropped, as one that found no
 * entry, so that Hits still adds up. */
static __always_inline void agg_drop(__u32 slot, __u32 gen)
{
	__u32 idx = slot * 2 + (gen & 1);
	struct agg_budget *b = bpf_map_lookup_elem(&agg_budgets, &idx);

	if (b)
		__sync_fetch_and_add(&b->dropped, 1);
}

enum agg_result { AGG_COUNTED, AGG_NO_ENTRY, AGG_NO_STACK };

#define AGG_EFAULT 14

/* keys=common_stacktrace alone: the stack's id as the key of the small
 * map. -1: no id (the frames are the key); AGG_NO_STACK: no stack. */
static __always_inline int agg_by_stack_id(void *ctx, struct agg_scratch *a,
					   const struct agg_desc *ad, const __u8 *rec)
{
	long id = bpf_get_stackid(ctx, &agg_stacks, 0);

	if (id == -AGG_EFAULT) {
		agg_drop(a->hdr.slot, a->hdr.gen);
		return AGG_NO_STACK;
	}
	if (id < 0)
		return -1;
	__builtin_memset(a->data, 0, TRACERD_AGG_SMALL);
	*(__u64 *)a->data = id;
	return agg_count(&agg_small, a, ad, rec) ? AGG_COUNTED : AGG_NO_ENTRY;
}

/* Has the key of ad a compact layout, and are its __data_loc strings in
 * this record all short? Then it goes to the small map in that layout
 * (the emitted program decides alike: filter_emit_frame.c). */
static __always_inline bool agg_compact(const struct agg_desc *ad, const __u8 *rec)
{
	__u32 i;

	if (!ad->short_size)
		return false;
	for (i = 0; i < TRACERD_AGG_KEYS; i++) {
		const struct agg_key_src *k = &ad->keys[i];

		if (i >= ad->n_keys)
			break;
		if (tracerd_agg_dyn_str(k->src) &&
		    !tracerd_agg_str_is_short(*(__u32 *)(rec + (k->off & AGG_REC_MASK))))
			return false;
	}
	return true;
}

/* Counts the record of slot in its histogram: rec is the copy of its
 * fixed part (at least), ctx the kernel's. Inlined: a stack is walked
 * from the helper's frame up, and a BPF subprogram's frame between cost
 * ~50-140 ns an event in the unwinder (bench/results/
 * 2026-12-04-aggregate-stack-ids.txt). */
static __always_inline int aggregate(__u32 slot, const __u8 *rec, void *ctx,
				     __u64 pid_tgid, struct agg_scratch *a)
{
	const struct agg_desc *ad = bpf_map_lookup_elem(&agg_descs, &slot);
	bool compact, counted;
	__u32 i, map;
	int r;

	if (!ad || !a)
		return AGG_NO_ENTRY;
	a->hdr.slot = slot;
	a->hdr.gen = ad->gen & 1;
	if (ad->stack_ids && (r = agg_by_stack_id(ctx, a, ad, rec)) >= 0)
		return r;
	compact = agg_compact(ad, rec);
	map = compact ? AGG_MAP_SMALL : ad->map;
	if (map == AGG_MAP_LARGE)
		__builtin_memset(a->data, 0, TRACERD_AGG_LARGE);
	else if (map == AGG_MAP_MEDIUM)
		__builtin_memset(a->data, 0, TRACERD_AGG_MEDIUM);
	else
		__builtin_memset(a->data, 0, TRACERD_AGG_SMALL);
	for (i = 0; i < TRACERD_AGG_KEYS; i++) {
		if (i >= ad->n_keys)
			break;
		if (!agg_key_part(&ad->keys[i], rec, ctx, pid_tgid, a->data, compact)) {
			agg_drop(slot, a->hdr.gen);
			return AGG_NO_STACK;
		}
	}
	if (map == AGG_MAP_LARGE)
		counted = agg_count(&agg_large, a, ad, rec);
	else if (map == AGG_MAP_MEDIUM)
		counted = agg_count(&agg_medium, a, ad, rec);
	else
		counted = agg_count(&agg_small, a, ad, rec);
	return counted ? AGG_COUNTED : AGG_NO_ENTRY;
}

#endif
