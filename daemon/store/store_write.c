// SPDX-License-Identifier: GPL-2.0
/* The store writer's caller side: records go into the open block as
 * columns (docs/STORE.md): timestamps as deltas, tasks through a per-block
 * dictionary, record bytes XORed with the previous record of the same
 * event, so that what repeats from one record to the next becomes zeros
 * before the codec sees it. Sealed blocks go to the file thread. */
#include <signal.h>
#include <time.h>
#include "kernel-events/cgroup.h"
#include "kernel-events/printfmt.h"
#include "store/store_priv.h"
#include "util.h"

/* Waits for a sealed block or the stop; meanwhile makes written blocks
 * durable once SyncIntervalSec= has passed. Returns with the lock held. */
static void wait_for_work(struct store_writer *w)
{
	while (!w->n_sealed && !w->stopping && !w->sync_asked) {
		uint64_t due = store_file_sync_due(w);
		struct timespec ts;

		if (!due) {
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		if (store_now_usec() >= due) {
			pthread_mutex_unlock(&w->lock);
			store_file_sync(w);
			pthread_mutex_lock(&w->lock);
			continue;
		}
		ts.tv_sec = due / 1000000;
		ts.tv_nsec = due % 1000000 * 1000;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
}

static void *file_thread(void *arg)
{
	struct store_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct store_block *b;

		wait_for_work(w);
		if (!w->n_sealed && w->sync_asked) {
			pthread_mutex_unlock(&w->lock);
			store_file_sync(w);
			pthread_mutex_lock(&w->lock);
			w->sync_asked = false;
			pthread_cond_broadcast(&w->cond);
			continue;
		}
		if (!w->n_sealed)
			break;
		b = &w->blocks[w->head];
		w->busy = true;
		pthread_mutex_unlock(&w->lock);
		if (w->o.window)
			store_window_add(w, b);
		else
			store_file_write_block(w, b);
		pthread_mutex_lock(&w->lock);
		w->busy = false;
		w->head = (w->head + 1) % STORE_BLOCKS;
		w->n_sealed--;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	store_file_close(w);
	return NULL;
}

int store_writer_new(struct store_writer **ret, const struct store_writer_opts *o)
{
	struct store_writer *w = calloc(1, sizeof(*w));
	pthread_condattr_t attr;
	int r;

	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->fd = -1;
	w->dir = strdup(o->directory);
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	/* Timed waits by store_now_usec()'s clock. */
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	/* The recorder writes no file into the directory until a snapshot,
	 * and each one into a directory of its own. */
	r = !w->dir ? -ENOMEM : o->window ? 0 : store_dir_lock(w->dir, &w->sdir);
	if (r >= 0)
		r = store_compressor_new(&w->comp, o->codec, o->level);
	if (r >= 0) {
		sigset_t all, old;

		/* No signal for this thread: the daemon takes its signals through
		 * a signalfd, which works only while every thread blocks them. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		r = -pthread_create(&w->thread, NULL, file_thread, w);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (r < 0) {
		store_writer_free(w);
		return r;
	}
	w->thread_started = true;
	*ret = w;
	return 0;
}

static void evinfo_free(struct store_evinfo *ev)
{
	if (!ev)
		return;
	free(ev->system);
	free(ev->name);
	free(ev->class_name);
	free(ev->selection);
	free(ev->format);
	for (size_t i = 0; i < ev->n_enums; i++)
		free(ev->enums[i].name);
	free(ev->enums);
	free(ev);
}

static struct store_evinfo *evinfo_new(struct tp_event *e, const char *class_name,
				       const char *selection, int priority, void *owner)
{
	struct store_evinfo *ev = calloc(1, sizeof(*ev));
	const struct tp_printfmt *pf;

	if (!ev)
		return NULL;
	/* Parsing the print fmt looks its enum names up: e->enums then has them. */
	(void)tp_event_printfmt(e, &pf);
	ev->system = strdup(e->system ? e->system : "");
	ev->name = strdup(e->name ? e->name : "");
	ev->class_name = strdup(class_name ? class_name : ev->name ? ev->name : "");
	ev->selection = strdup(selection ? selection : "");
	ev->format = strdup(e->format_text ? e->format_text : "");
	ev->priority = priority;
	ev->owner = owner;
	ev->enums = calloc(e->n_enums ? e->n_enums : 1, sizeof(*ev->enums));
	if (!ev->system || !ev->name || !ev->class_name || !ev->selection || !ev->format ||
	    !ev->enums) {
		evinfo_free(ev);
		return NULL;
	}
	for (; ev->n_enums < e->n_enums; ev->n_enums++) {
		ev->enums[ev->n_enums].value = e->enums[ev->n_enums].value;
		ev->enums[ev->n_enums].name = strdup(e->enums[ev->n_enums].name);
		if (!ev->enums[ev->n_enums].name) {
			evinfo_free(ev);
			return NULL;
		}
	}
	return ev;
}

int store_writer_add_event(struct store_writer *w, struct tp_event *e, const char *class_name,
			   const char *selection, int priority, void *owner)
{
	struct store_evinfo *ev = evinfo_new(e, class_name, selection, priority, owner);
	int r = 0;

	if (!ev)
		return -ENOMEM;
	if (w->n_ev + 1 > w->cap_prev) {
		size_t cap = w->cap_prev ? w->cap_prev * 2 : 64;
		struct bbuf *p = realloc(w->prev, cap * sizeof(*p));
		uint32_t *g = p ? realloc(w->prev_gen, cap * sizeof(*g)) : NULL;

		if (p)
			w->prev = p;
		if (!p || !g) {
			evinfo_free(ev);
			return -ENOMEM;
		}
		memset(p + w->cap_prev, 0, (cap - w->cap_prev) * sizeof(*p));
		memset(g + w->cap_prev, 0, (cap - w->cap_prev) * sizeof(*g));
		w->prev_gen = g;
		w->cap_prev = cap;
	}
	pthread_mutex_lock(&w->lock);
	if (GROW(w->ev, w->cap_ev, w->n_ev) < 0)
		r = -ENOMEM;
	else {
		ev->id = w->n_ev;
		w->ev[w->n_ev++] = ev;
		r = ev->id;
	}
	pthread_mutex_unlock(&w->lock);
	if (r < 0)
		evinfo_free(ev);
	return r;
}

/* The next free block, waiting for the file thread if every one is queued. */
static struct store_block *take_block(struct store_writer *w)
{
	struct store_block *b;

	pthread_mutex_lock(&w->lock);
	while (w->n_sealed == STORE_BLOCKS)
		pthread_cond_wait(&w->cond, &w->lock);
	b = &w->blocks[(w->head + w->n_sealed) % STORE_BLOCKS];
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < STORE_N_COLUMNS; i++) {
		b->col[i].len = 0;
		b->col[i].oom = false;
	}
	b->n = b->n_tasks = 0;
	b->kaddrs.len = 0;
	b->kaddrs.oom = false;
	b->n_cgroups = 0;
	b->raw = 0;
	b->n_counts = 0;
	b->lost = 0;
	cpu_counts_zero(&b->cpus);
	b->gen = ++w->gen;
	b->opened_usec = store_now_usec();
	return b;
}

static void seal(struct store_writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->n_sealed++;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	w->open = NULL;
}

/* The index of a cgroup in the block's CGROUPS, which carries its path, so
 * that a reader names it after it is gone, on another machine too. */
static uint32_t cgroup_index(struct store_block *b, uint64_t id)
{
	const struct cgroup_info *c;
	size_t n;

	for (size_t i = 0; i < b->n_cgroups; i++)
		if (b->cgroups[i] == id)
			return i;
	if (GROW(b->cgroups, b->cap_cgroups, b->n_cgroups) < 0) {
		b->col[STORE_COL_CGROUPS].oom = true;
		return 0;
	}
	b->cgroups[b->n_cgroups] = id;
	c = cgroup_lookup(id);
	n = c ? strlen(c->path) : 0;
	bbuf_varint(&b->col[STORE_COL_CGROUPS], id);
	bbuf_varint(&b->col[STORE_COL_CGROUPS], n);
	if (n)
		bbuf_put(&b->col[STORE_COL_CGROUPS], c->path, n);
	return b->n_cgroups++;
}

static uint32_t task_index(struct store_block *b, const struct trace_rec_hdr *h)
{
	uint64_t c8;
	uint32_t i;
	size_t clen;

	memcpy(&c8, h->comm, 8);
	i = (uint32_t)((h->tid * 0x9e3779b97f4a7c15ULL ^ c8) * 0x9e3779b97f4a7c15ULL >> 54);
	for (unsigned probe = 0; probe < 8; probe++, i = (i + 1) % STORE_TASK_HASH) {
		struct store_task *t = &b->tasks[i];

		if (t->gen == b->gen) {
			if (t->tid == h->tid && t->pid == h->pid && t->cgroup_id == h->cgroup_id &&
			    !memcmp(t->comm, h->comm, TRACERD_COMM_LEN))
				return t->idx;
			continue;
		}
		*t = (struct store_task){ b->gen, b->n_tasks, h->pid, h->tid, { 0 }, h->cgroup_id };
		memcpy(t->comm, h->comm, TRACERD_COMM_LEN);
		break;
	}
	/* New, or the hash is crowded: a new entry (duplicates are harmless). */
	clen = strnlen(h->comm, TRACERD_COMM_LEN);
	bbuf_varint(&b->col[STORE_COL_TASKS], h->pid);
	bbuf_varint(&b->col[STORE_COL_TASKS], h->tid);
	bbuf_varint(&b->col[STORE_COL_TASKS], clen);
	bbuf_put(&b->col[STORE_COL_TASKS], h->comm, clen);
	bbuf_varint(&b->col[STORE_COL_TASK_CGROUPS], cgroup_index(b, h->cgroup_id));
	return b->n_tasks++;
}

static int count(struct store_block *b, unsigned id)
{
	if (GROW_TO(b->slot_of, b->cap_slot_of, id) < 0)
		return -ENOMEM;
	if (!b->slot_of[id] || b->slot_of[id] > b->n_counts || b->counts[b->slot_of[id] - 1].id != id) {
		if (GROW(b->counts, b->cap_counts, b->n_counts) < 0)
			return -ENOMEM;
		b->counts[b->n_counts++] = (struct store_count){ id, 0 };
		b->slot_of[id] = b->n_counts;
	}
	b->counts[b->slot_of[id] - 1].n++;
	return 0;
}

/* The record XOR the previous one of its event in this block, then kept as
 * the previous one. */
static void put_data(struct store_writer *w, struct store_block *b, unsigned id,
		     const uint8_t *rec, size_t len)
{
	struct bbuf *d = &b->col[STORE_COL_DATA], *prev = &w->prev[id];
	size_t same = w->prev_gen[id] == b->gen ? (prev->len < len ? prev->len : len) : 0, i = 0;
	uint8_t *out;

	if (d->len + len > d->cap && bbuf_reserve(d, len) < 0)
		return;
	out = d->p + d->len;
	for (; i + 8 <= same; i += 8) {
		uint64_t a, p;

		memcpy(&a, rec + i, 8);
		memcpy(&p, prev->p + i, 8);
		a ^= p;
		memcpy(out + i, &a, 8);
	}
	for (; i < same; i++)
		out[i] = rec[i] ^ prev->p[i];
	memcpy(out + i, rec + i, len - i);
	d->len += len;
	prev->len = 0;
	bbuf_put(prev, rec, len);
	w->prev_gen[id] = b->gen;
}

static struct store_block *open_block(struct store_writer *w, uint64_t ts)
{
	struct store_block *b = w->open;

	if (!b) {
		b = w->open = take_block(w);
		b->ts_first = b->ts_min = b->ts_max = ts;
		b->prev_ts = 0;	/* the first delta is the timestamp itself */
	}
	return b;
}

void store_writer_add_lost(struct store_writer *w, unsigned cpu, uint64_t ts_ns, uint64_t n)
{
	struct store_block *b = open_block(w, ts_ns);
	struct bbuf *col = &b->col[STORE_COL_LOST];

	bbuf_varint(col, cpu);
	bbuf_varint(col, ts_ns);
	bbuf_varint(col, n);
	b->lost += n;
	b->ts_min = ts_ns < b->ts_min ? ts_ns : b->ts_min;
	b->ts_max = ts_ns > b->ts_max ? ts_ns : b->ts_max;
}

/* The record's kernel frames that the block has not listed yet, for the
 * file thread to describe (KSYMS); a frame seen again is skipped by a
 * direct-mapped cache, which may list one twice, never miss one. */
static void note_frames(struct store_writer *w, struct store_block *b,
			const struct trace_rec_hdr *h, const uint8_t *rec, size_t len)
{
	size_t from = b->kaddrs.len;

	store_ksyms_frames(h->flags, rec, len, &b->kaddrs);
	for (size_t i = from; i + 8 <= b->kaddrs.len; i += 8) {
		uint64_t a;
		size_t k;

		memcpy(&a, b->kaddrs.p + i, 8);
		k = (a * 0x9e3779b97f4a7c15ULL) >> 54;
		if (w->kseen[k] == a && w->kseen_gen[k] == b->gen) {
			memmove(b->kaddrs.p + i, b->kaddrs.p + i + 8, b->kaddrs.len - i - 8);
			b->kaddrs.len -= 8;
			i -= 8;
			continue;
		}
		w->kseen[k] = a;
		w->kseen_gen[k] = b->gen;
	}
}

int store_writer_append(struct store_writer *w, unsigned id, const struct trace_rec_hdr *h,
			const uint8_t *rec, size_t len)
{
	struct store_block *b = w->open;

	if (id >= w->n_ev || len > TRACERD_MAX_RECORD + TRACERD_MAX_STACKS)
		return -EINVAL;
	b = open_block(w, h->ts_ns);
	if (count(b, id) < 0 || cpu_counts_add(&b->cpus, h->cpu, 1) < 0)
		return -ENOMEM;
	bbuf_varint(&b->col[STORE_COL_TS], zigzag((int64_t)(h->ts_ns - b->prev_ts)));
	b->prev_ts = h->ts_ns;
	b->ts_min = h->ts_ns < b->ts_min ? h->ts_ns : b->ts_min;
	b->ts_max = h->ts_ns > b->ts_max ? h->ts_ns : b->ts_max;
	bbuf_varint(&b->col[STORE_COL_EVENT], id);
	bbuf_varint(&b->col[STORE_COL_CPU], h->cpu);
	bbuf_varint(&b->col[STORE_COL_TASK], task_index(b, h));
	bbuf_varint(&b->col[STORE_COL_FLAGS], h->flags);
	bbuf_varint(&b->col[STORE_COL_LEN], len);
	put_data(w, b, id, rec, len);
	if (h->flags & TRACERD_REC_STACKS)
		note_frames(w, b, h, rec, len);
	b->n++;
	b->raw = 0;
	for (unsigned i = 0; i < STORE_N_COLUMNS; i++)
		b->raw += b->col[i].len;
	if (b->raw >= STORE_BLOCK_TARGET)
		seal(w);
	return 0;
}

void store_writer_flush(struct store_writer *w, bool force)
{
	struct store_block *b = w->open;

	/* The recorder's blocks fill up: a snapshot seals the open one. */
	if (w->o.window && !force)
		return;
	if (b && (b->n || b->col[STORE_COL_LOST].len) && (force || store_now_usec() - b->opened_usec >= w->o.flush_usec / 2))
		seal(w);
}

/* The open block holds the records so far: sealed, it comes to the window,
 * and to the snapshot, next. */
int store_snapshot_start(struct store_writer *w, const char *reason)
{
	if (!w->o.window)
		return -EINVAL;
	if (w->win.snap)
		return -EBUSY;
	store_writer_flush(w, true);
	return store_snap_start(w, reason);
}

void store_snapshot_end(struct store_writer *w)
{
	store_writer_flush(w, true);
	store_snap_end(w);
}

void store_writer_sync(struct store_writer *w)
{
	store_writer_flush(w, true);
	pthread_mutex_lock(&w->lock);
	/* The file thread syncs once every sealed block is written. */
	w->sync_asked = true;
	pthread_cond_broadcast(&w->cond);
	while (w->n_sealed || w->sync_asked)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void store_writer_get_stats(struct store_writer *w, struct store_writer_stats *s)
{
	pthread_mutex_lock(&w->lock);
	*s = w->stats;
	pthread_mutex_unlock(&w->lock);
}

void store_writer_free(struct store_writer *w)
{
	if (!w)
		return;
	if (w->thread_started) {
		store_writer_flush(w, true);
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	store_snapshot_free(w);
	store_window_free(&w->win);
	for (unsigned i = 0; i < STORE_BLOCKS; i++) {
		for (unsigned c = 0; c < STORE_N_COLUMNS; c++)
			bbuf_free(&w->blocks[i].col[c]);
		free(w->blocks[i].slot_of);
		bbuf_free(&w->blocks[i].kaddrs);
		free(w->blocks[i].cgroups);
		free(w->blocks[i].counts);
		cpu_counts_free(&w->blocks[i].cpus);
	}
	for (size_t i = 0; i < w->n_ev; i++) {
		evinfo_free(w->ev[i]);
		bbuf_free(&w->prev[i]);
	}
	free(w->ev);
	free(w->prev);
	free(w->prev_gen);
	store_compressor_free(w->comp);
	ksym_set_free(&w->ksyms);
	store_dir_unlock(w->sdir);
	bbuf_free(&w->payload);
	bbuf_free(&w->out);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w->dir);
	free(w);
}
