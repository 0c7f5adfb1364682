// SPDX-License-Identifier: GPL-2.0
/* A block's columns back into records (docs/STORE.md), sorted by time:
 * records come in the order the ring buffer gave them, which is the order
 * they reserved space, not quite the order of their timestamps. */
#include "store/store_read_priv.h"
#include "util.h"

struct task {
	uint32_t pid, tid;
	char comm[TRACERD_COMM_LEN];
	uint64_t cgroup_id;
};

static int split_columns(const struct bbuf *raw, struct rcur col[STORE_N_COLUMNS])
{
	struct rcur rc = { raw->p, raw->p + raw->len, false };

	for (unsigned i = 0; i < STORE_N_COLUMNS; i++) {
		uint64_t n;
		const uint8_t *p;

		/* A file from before the cgroup (and LOST) columns ends before them. */
		if (i >= STORE_COL_TASK_CGROUPS && rc.p == rc.end) {
			col[i] = (struct rcur){ rc.p, rc.p, false };
			continue;
		}
		n = rcur_varint(&rc);
		p = rcur_take(&rc, n);
		if (!p)
			return -EBADMSG;
		col[i] = (struct rcur){ p, p + n, false };
	}
	return 0;
}

static int parse_tasks(struct rcur *rc, struct task **ret, size_t *n)
{
	size_t cap = 0;

	*n = 0;
	while (rc->p < rc->end) {
		struct task t = { 0 };
		uint64_t clen;
		const uint8_t *comm;

		t.pid = rcur_varint(rc);
		t.tid = rcur_varint(rc);
		clen = rcur_varint(rc);
		comm = clen <= TRACERD_COMM_LEN ? rcur_take(rc, clen) : NULL;
		if (!comm)
			return -EBADMSG;
		memcpy(t.comm, comm, clen);
		if (GROW(*ret, cap, *n) < 0)
			return -ENOMEM;
		(*ret)[(*n)++] = t;
	}
	return 0;
}

/* CGROUPS: each id with its path, into the reader's table (ids are never
 * reused, so one table serves every file); their ids in *ret. */
static int parse_cgroups(struct store_reader *r, struct rcur *rc, uint64_t **ret, size_t *n)
{
	size_t cap = 0;

	*n = 0;
	while (rc->p < rc->end) {
		uint64_t id = rcur_varint(rc), len = rcur_varint(rc);
		const uint8_t *p = len < 4096 ? rcur_take(rc, len) : NULL;
		char path[4096];

		if (!p || rc->bad)
			return -EBADMSG;
		memcpy(path, p, len);
		path[len] = 0;
		if (!cgroup_map_add(r->cgroups, id, len ? path : NULL) || GROW(*ret, cap, *n) < 0)
			return -ENOMEM;
		(*ret)[(*n)++] = id;
	}
	return 0;
}

/* TASK_CGROUPS: each task's cgroup; none in a file from before them. */
static int task_cgroups(struct rcur *rc, struct task *tasks, size_t n_tasks, const uint64_t *ids,
			size_t n_ids)
{
	for (size_t i = 0; i < n_tasks && rc->p < rc->end; i++) {
		uint64_t k = rcur_varint(rc);

		if (rc->bad || k >= n_ids)
			return -EBADMSG;
		tasks[i].cgroup_id = ids[k];
	}
	return 0;
}

static int grow_last(struct store_cursor *c)
{
	size_t need = c->cap_ev ? c->cap_ev : 1;
	uint32_t *a, *g;

	if (need <= c->cap_last)
		return 0;
	a = realloc(c->last_of, need * sizeof(*a));
	if (a)
		c->last_of = a;
	g = a ? realloc(c->last_gen, need * sizeof(*g)) : NULL;
	if (!g)
		return -ENOMEM;
	memset(g + c->cap_last, 0, (need - c->cap_last) * sizeof(*g));
	c->last_gen = g;
	c->cap_last = need;
	return 0;
}

static int cmp_ts(const void *a, const void *b, void *arg)
{
	const struct drec *recs = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = recs[x].hdr.ts_ns, ty = recs[y].hdr.ts_ns;

	return tx < ty ? -1 : tx > ty ? 1 : x < y ? -1 : x > y;
}

/* One record from the columns; its bytes into the arena, XORed back with the
 * previous record of its event. */
static int decode_one(struct store_cursor *c, struct rcur col[STORE_N_COLUMNS],
		      const struct task *tasks, size_t n_tasks, uint64_t *ts, struct drec *d)
{
	uint64_t id, ti, len;
	const uint8_t *src;
	uint8_t *dst;

	*ts += unzigzag(rcur_varint(&col[STORE_COL_TS]));
	id = rcur_varint(&col[STORE_COL_EVENT]);
	d->hdr.ts_ns = *ts;
	d->hdr.cpu = rcur_varint(&col[STORE_COL_CPU]);
	ti = rcur_varint(&col[STORE_COL_TASK]);
	d->hdr.flags = rcur_varint(&col[STORE_COL_FLAGS]);
	len = rcur_varint(&col[STORE_COL_LEN]);
	src = len <= TRACERD_MAX_RECORD + TRACERD_MAX_STACKS ? rcur_take(&col[STORE_COL_DATA], len) : NULL;
	for (unsigned i = 0; i < STORE_N_COLUMNS; i++)
		if (col[i].bad)
			return -EBADMSG;
	if (!src || ti >= n_tasks)
		return -EBADMSG;
	if (id >= c->cap_ev || !c->ev[id])
		return -ENOENT;
	d->hdr.pid = tasks[ti].pid;
	d->hdr.tid = tasks[ti].tid;
	d->hdr.cgroup_id = tasks[ti].cgroup_id;
	memcpy(d->hdr.comm, tasks[ti].comm, TRACERD_COMM_LEN);
	d->hdr.slot = id;
	d->hdr.len = len;
	d->lost = 0;
	d->ev = c->ev[id]->wanted ? c->ev[id] : NULL;
	d->off = c->data.len;
	d->len = len;
	if (bbuf_reserve(&c->data, len + 1) < 0)
		return -ENOMEM;
	dst = c->data.p + c->data.len;
	memcpy(dst, src, len);
	if (c->last_gen[id] == c->gen) {
		const struct drec *prev = &c->recs[c->last_of[id]];
		size_t same = prev->len < len ? prev->len : len;

		for (size_t i = 0; i < same; i++)
			dst[i] ^= c->data.p[prev->off + i];
	}
	c->data.len += len;
	c->last_gen[id] = c->gen;
	c->last_of[id] = c->n;
	return 0;
}

/* The loss marks, after the records: each its own drec, sorted in with them. */
static int decode_lost(struct store_cursor *c, struct rcur *col)
{
	while (col->p < col->end) {
		struct drec d = { 0 };

		d.hdr.cpu = rcur_varint(col);
		d.hdr.ts_ns = rcur_varint(col);
		d.lost = rcur_varint(col);
		if (col->bad || !d.lost)
			return -EBADMSG;
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 16;
			struct drec *v = realloc(c->recs, cap * sizeof(*v));
			uint32_t *o = v ? realloc(c->order, cap * sizeof(*o)) : NULL;

			if (v)
				c->recs = v;
			if (!o)
				return -ENOMEM;
			c->order = o;
			c->cap = cap;
		}
		c->recs[c->n++] = d;
	}
	return 0;
}

int decode_block(struct store_cursor *c, const struct store_chunk_hdr *h)
{
	struct rcur col[STORE_N_COLUMNS];
	_cleanup_free_ struct task *tasks = NULL;
	_cleanup_free_ uint64_t *cgroups = NULL;
	size_t n_tasks = 0, n_cgroups = 0, kept = 0;
	uint64_t ts = 0;
	int r;

	c->n = c->pos = c->n_kept = 0;
	c->data.len = 0;
	if (split_columns(&c->raw, col) < 0 || (r = parse_tasks(&col[STORE_COL_TASKS], &tasks, &n_tasks)) < 0)
		return -EBADMSG;
	r = parse_cgroups(c->r, &col[STORE_COL_CGROUPS], &cgroups, &n_cgroups);
	if (r >= 0)
		r = task_cgroups(&col[STORE_COL_TASK_CGROUPS], tasks, n_tasks, cgroups, n_cgroups);
	if (r < 0)
		return r;
	/* A record takes at least a byte in each of six columns: a count past
	 * that is corrupt, and must not size an allocation. */
	if (h->n_records > c->raw.len / 6 || grow_last(c) < 0)
		return h->n_records > c->raw.len / 6 ? -EBADMSG : -ENOMEM;
	if (h->n_records > c->cap) {
		struct drec *v = realloc(c->recs, h->n_records * sizeof(*v));
		uint32_t *o = v ? realloc(c->order, h->n_records * sizeof(*o)) : NULL;

		if (v)
			c->recs = v;
		if (!o)
			return -ENOMEM;
		c->order = o;
		c->cap = h->n_records;
	}
	c->gen++;
	for (uint32_t i = 0; i < h->n_records; i++) {
		r = decode_one(c, col, tasks, n_tasks, &ts, &c->recs[c->n]);
		if (r < 0) {
			c->n = 0;
			return r;
		}
		c->n++;
	}
	if (c->r->o.want_lost && (r = decode_lost(c, &col[STORE_COL_LOST])) < 0) {
		c->n = 0;
		return r;
	}
	for (uint32_t i = 0; i < c->n; i++)
		if (c->recs[i].ev || c->recs[i].lost)
			c->order[kept++] = i;
	if (kept > 1)	/* qsort_r(NULL, 0) is undefined */
		qsort_r(c->order, kept, sizeof(*c->order), cmp_ts, c->recs);
	c->pos = 0;
	c->n_kept = kept;
	return 0;
}
