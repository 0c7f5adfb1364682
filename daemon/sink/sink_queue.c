// SPDX-License-Identifier: GPL-2.0
/* A bounded queue and a writer thread in front of any sink. The ring-buffer
 * consumer must never wait for journald or for a stdout pipe: if it did,
 * the BPF ring buffer would fill and the kernel side would lose records,
 * and the loop would stop answering SIGTERM, SIGHUP and the watchdog. So
 * the consumer copies each rendered record into the queue and returns; the
 * writer thread hands them to the real sink and counts each one delivered
 * or failed (by errno). When the queue is full, a record is counted as a
 * sink error ENOBUFS at once.
 *
 * A queued record copies what belongs to the record (header, record bytes,
 * text, priority) and holds a reference on its out_slot, which carries the
 * rest (event, selection name) and the counters, since a reload may free
 * the slot meanwhile; the tp_event lives as long as the tracer, which
 * closes the queue before freeing events.
 *
 * Closing waits for the writer while it makes progress; once it made none
 * for TRACERD_QUEUE_STALL_MS (1000 by default), the writer is cancelled in
 * its blocked write and whatever it had not delivered is counted ECANCELED,
 * so shutdown stays prompt and the counts stay exact.
 *
 * A sink whose records are lines of text (stdout: ops->text) gets them in
 * batches instead: the consumer appends each line to an open chunk of about
 * 256 KiB, handed to the writer when full and at the end of every drain, and
 * the writer writes it with one write(2) (or lines in writes of at most
 * sink->atomic_write bytes, into a pipe). Per record that is one copy of
 * the line and no allocation, lock or wakeup; a record queued one by one
 * cost a malloc, a copy of the record, a lock, often a wakeup of the writer
 * and a free on the other CPU, which was more than rendering it. */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include "clock.h"
#include "knobs.h"
#include "sink.h"
#include "util.h"

enum qkind { Q_RECORD, Q_MESSAGE, Q_TEXT };

/* Q_TEXT: rendered lines; each run of lines of one slot holds a reference
 * on it, taken by the run's first line. */
struct tline {
	size_t end;			/* offset past the line's newline */
	const struct out_slot *slot;
};

struct tchunk {
	struct strbuf text;
	struct tline *lines;
	size_t n_lines, cap_lines;
	size_t done;			/* lines written and counted */
};

/* A chunk is handed over at this size; a line never splits across two.
 * Each hand-over may wake the writer, which then preempts the consumer or
 * the traced workload on a small machine: a thousand lines or so a time. */
#define CHUNK_BYTES (256u << 10)
#define SPARE_CHUNKS 2

struct qentry {
	struct qentry *next;
	enum qkind kind;
	size_t bytes;
	size_t records;			/* what it counts against max_entries */
	struct tchunk *chunk;		/* Q_TEXT */
	const struct out_slot *counted;	/* referenced: the record's slot and counters */
	struct trace_rec_hdr hdr;
	int64_t realtime_offset_ns;
	size_t len;			/* of the record with its stacks (out_record_whole) */
	const char *text;
	int priority;			/* the record's, or the message's */
	struct render_opts render;	/* the record's */
	/* Q_MESSAGE */
	char **fields;
	size_t n_fields;
	uint8_t data[];		/* record, then text */
};

struct sink_queue {
	struct sink base;
	struct sink *inner;
	pthread_t thread;
	bool running;		/* the writer thread exists */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct qentry *head, **tail;
	struct qentry *open;		/* Q_TEXT being filled by the consumer, not queued yet */
	struct qentry *spare;		/* emptied Q_TEXT entries, for reuse (under lock) */
	unsigned n_spare;
	size_t n, max_entries;
	size_t bytes, max_bytes;
	bool stop;
	/* Owned by the writer while it runs; read by close() after join. */
	struct qentry *batch;
	uint64_t progress;	/* entries finished, atomically updated */
	unsigned delay_us;	/* TRACERD_TEST_SINK_DELAY_US */
};

/* q->n and q->bytes change under the lock, and the consumer reads them
 * without it (a full queue costs no lock): atomic stores. */
static void set_size(size_t *v, size_t n)
{
	__atomic_store_n(v, n, __ATOMIC_RELAXED);
}

/* Drops the lines of c and their references on slots; keeps the memory. */
static void chunk_reset(struct tchunk *c)
{
	for (size_t i = 0; i < c->n_lines; i++)
		if (!i || c->lines[i].slot != c->lines[i - 1].slot)
			out_slot_unref(c->lines[i].slot);
	c->n_lines = c->done = 0;
	sb_reset(&c->text);
	c->text.oom = false;
}

static void entry_free(struct qentry *e)
{
	if (!e)
		return;
	if (e->kind == Q_MESSAGE)
		strv_free(e->fields, e->n_fields);
	if (e->chunk) {
		chunk_reset(e->chunk);
		sb_free(&e->chunk->text);
		free(e->chunk->lines);
		free(e->chunk);
	}
	out_slot_unref(e->counted);
	free(e);
}

/* Counts lines [from, to) of c delivered, or failed with err; one update
 * per run of lines of the same slot. */
static void chunk_count(struct tchunk *c, size_t from, size_t to, int err)
{
	while (from < to) {
		const struct out_slot *slot = c->lines[from].slot;
		size_t k = from + 1;

		while (k < to && c->lines[k].slot == slot)
			k++;
		if (err)
			out_slot_error(slot, err, k - from);
		else
			out_slot_delivered(slot, k - from);
		from = k;
	}
}

/* The lines from c->done that fit one write of at most max bytes (at
 * least one line); returns the index past the last. */
static size_t chunk_piece(const struct tchunk *c, size_t max, bool one_line)
{
	size_t start = c->done ? c->lines[c->done - 1].end : 0, k = c->done + 1;

	if (one_line)
		return k;
	if (!max)
		return c->n_lines;
	while (k < c->n_lines && c->lines[k].end - start <= max)
		k++;
	return k;
}

/* Writes the chunk's lines, counting each delivered once it is all out.
 * Cancellable only inside the inner sink's write: c->done always says
 * how many lines are counted, so close() counts the rest ECANCELED. */
static void chunk_write(struct sink_queue *q, struct tchunk *c)
{
	while (c->done < c->n_lines) {
		size_t start = c->done ? c->lines[c->done - 1].end : 0;
		size_t last = chunk_piece(c, q->inner->atomic_write, q->delay_us), written, k;
		int r;

		if (q->delay_us)
			usleep(q->delay_us);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		r = q->inner->ops->text->write(q->inner, c->text.buf + start,
					      c->lines[last - 1].end - start, &written);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		for (k = c->done; k < last && c->lines[k].end - start <= written; k++)
			;
		chunk_count(c, c->done, k, 0);
		chunk_count(c, k, last, r < 0 ? r : -EIO);
		c->done = last;
	}
}

/* Runs the inner sink on one entry; counts a record's outcome. */
static void entry_write(struct sink_queue *q, struct qentry *e)
{
	int r;

	if (e->kind == Q_MESSAGE) {
		q->inner->ops->message(q->inner, e->priority, e->text,
				       (const char *const *)e->fields, e->n_fields);
		return;
	}
	{
		struct out_record rec = {
			.slot = e->counted, .priority = e->priority, .hdr = &e->hdr,
			.render = e->render,
			.rec = e->data,
			.text = e->text, .text_len = strlen(e->text),
			.realtime_offset_ns = e->realtime_offset_ns,
		};

		/* The record travelled whole: its stacks and their text again. */
		rec.len = rec_stacks_split(e->hdr.flags, e->data, e->len, &rec.stacks);

		if (q->delay_us)
			usleep(q->delay_us);
		r = q->inner->ops->emit(q->inner, &rec);
	}
	if (r < 0)
		out_slot_error(e->counted, r, 1);
	else
		out_slot_delivered(e->counted, 1);
}

/* A written Q_TEXT entry goes back to the consumer for its next chunk:
 * its buffers are grown already. */
static void entry_recycle(struct sink_queue *q, struct qentry *e)
{
	if (e->kind != Q_TEXT) {
		entry_free(e);
		return;
	}
	chunk_reset(e->chunk);
	pthread_mutex_lock(&q->lock);
	if (q->n_spare < SPARE_CHUNKS) {
		e->next = q->spare;
		q->spare = e;
		q->n_spare++;
		e = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	entry_free(e);
}

static void *writer(void *arg)
{
	struct sink_queue *q = arg;

	/* Cancellable only inside the inner sink's writes, never while this
	 * thread holds the queue's lock or is between counting and freeing. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		pthread_mutex_lock(&q->lock);
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		q->batch = q->head;
		q->head = NULL;
		q->tail = &q->head;
		set_size(&q->n, 0);
		set_size(&q->bytes, 0);
		pthread_mutex_unlock(&q->lock);

		while (q->batch) {
			struct qentry *e = q->batch;

			if (e->kind == Q_TEXT) {
				chunk_write(q, e->chunk);
			} else {
				pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
				entry_write(q, e);
				pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			}
			q->batch = e->next;
			entry_recycle(q, e);
			__atomic_add_fetch(&q->progress, 1, __ATOMIC_RELEASE);
		}
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		sink_flush(q->inner);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		__atomic_add_fetch(&q->progress, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Appends e, or returns -ENOBUFS when the queue is full (unless force). */
static int enqueue(struct sink_queue *q, struct qentry *e, bool force)
{
	pthread_mutex_lock(&q->lock);
	if (!force && (q->n + e->records > q->max_entries || q->bytes + e->bytes > q->max_bytes)) {
		pthread_mutex_unlock(&q->lock);
		return -ENOBUFS;
	}
	e->next = NULL;
	*q->tail = e;
	q->tail = &e->next;
	/* Wake the writer once per batch: it takes the whole list. */
	if (!q->n)
		pthread_cond_signal(&q->cond);
	set_size(&q->n, q->n + e->records);
	set_size(&q->bytes, q->bytes + e->bytes);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* The consumer's open chunk: a spare one, or a new one. */
static struct tchunk *open_chunk(struct sink_queue *q)
{
	struct qentry *e;

	if (q->open)
		return q->open->chunk;
	pthread_mutex_lock(&q->lock);
	e = q->spare;
	if (e) {
		q->spare = e->next;
		q->n_spare--;
	}
	pthread_mutex_unlock(&q->lock);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		e->kind = Q_TEXT;
		e->chunk = calloc(1, sizeof(*e->chunk));
		if (!e->chunk) {
			free(e);
			return NULL;
		}
	}
	e->records = e->bytes = 0;
	q->open = e;
	return e->chunk;
}

/* Hands the open chunk to the writer; its room was checked line by line. */
static void publish(struct sink_queue *q)
{
	struct qentry *e = q->open;

	if (!e || !e->chunk->n_lines)
		return;
	q->open = NULL;
	e->records = e->chunk->n_lines;
	e->bytes = e->chunk->text.len + e->chunk->n_lines * sizeof(struct tline);
	enqueue(q, e, true);
}

/* A text sink's record: its line appended to the open chunk. */
static int queue_emit_text(struct sink_queue *q, const struct out_record *r)
{
	struct tchunk *c;
	size_t start, queued = __atomic_load_n(&q->n, __ATOMIC_RELAXED);
	struct tline *prev;

	if (queued + (q->open ? q->open->chunk->n_lines : 0) >= q->max_entries)
		return -ENOBUFS;
	c = open_chunk(q);
	if (!c)
		return -ENOMEM;
	if (__atomic_load_n(&q->bytes, __ATOMIC_RELAXED) + c->text.len > q->max_bytes)
		return -ENOBUFS;
	start = c->text.len;
	q->inner->ops->text->format(q->inner, r, &c->text);
	if (c->text.oom || GROW(c->lines, c->cap_lines, c->n_lines) < 0) {
		c->text.len = start;	/* the line is not queued */
		c->text.oom = false;
		if (c->text.buf)
			c->text.buf[start] = 0;
		return -ENOMEM;
	}
	prev = c->n_lines ? &c->lines[c->n_lines - 1] : NULL;
	c->lines[c->n_lines++] = (struct tline){
		.end = c->text.len,
		.slot = prev && prev->slot == r->slot ? prev->slot : out_slot_ref(r->slot),
	};
	/* A small queue (tests) must not wait for a full chunk. */
	if (c->text.len >= CHUNK_BYTES || c->n_lines >= q->max_entries / 2 + 1)
		publish(q);
	return 1;
}

static int queue_emit(struct sink *s, const struct out_record *r)
{
	struct sink_queue *q = (struct sink_queue *)s;
	size_t tlen = r->text_len;
	size_t len = out_record_whole(r);	/* with its stacks: the writer splits it again */
	size_t bytes = sizeof(struct qentry) + len + tlen + 1;
	struct qentry *e;
	char *p;

	if (!q->running)
		return q->inner->ops->emit(q->inner, r);
	if (q->inner->ops->text)
		return queue_emit_text(q, r);
	/* Check before copying: a full queue costs no allocation. */
	if (__atomic_load_n(&q->n, __ATOMIC_RELAXED) >= q->max_entries)
		return -ENOBUFS;
	e = malloc(bytes);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->kind = Q_RECORD;
	e->bytes = bytes;
	e->records = 1;
	e->hdr = *r->hdr;
	e->priority = r->priority;
	e->render = r->render;
	e->len = len;
	e->realtime_offset_ns = r->realtime_offset_ns;
	memcpy(e->data, r->rec, len);
	p = (char *)e->data + len;
	memcpy(p, r->text, tlen);
	p[tlen] = 0;
	e->text = p;
	e->counted = out_slot_ref(r->slot);
	if (enqueue(q, e, false) < 0) {
		entry_free(e);
		return -ENOBUFS;
	}
	return 1;
}

static int queue_message(struct sink *s, int priority, const char *msg,
			 const char *const *fields, size_t n_fields)
{
	struct sink_queue *q = (struct sink_queue *)s;
	size_t mlen = strlen(msg), bytes = sizeof(struct qentry) + mlen + 1;
	struct qentry *e;

	if (!q->running || (q->inner->ops->text && q->inner->ops->text->message_direct))
		return q->inner->ops->message(q->inner, priority, msg, fields, n_fields);
	e = calloc(1, bytes);
	if (!e)
		return -ENOMEM;
	e->kind = Q_MESSAGE;
	e->bytes = bytes;
	e->records = 1;
	e->priority = priority;
	memcpy(e->data, msg, mlen + 1);
	e->text = (const char *)e->data;
	if (n_fields) {
		e->fields = calloc(n_fields, sizeof(*e->fields));
		if (!e->fields) {
			entry_free(e);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n_fields; i++, e->n_fields++)
			if (!(e->fields[i] = strdup(fields[i]))) {
				entry_free(e);
				return -ENOMEM;
			}
	}
	/* Daemon messages (stats, reloads) are few and must not be dropped;
	 * they follow the records rendered before them. */
	publish(q);
	enqueue(q, e, true);
	return 0;
}

/* The end of a drain: what was rendered goes to the writer (which
 * flushes the inner sink after every batch). */
static void queue_flush(struct sink *s)
{
	publish((struct sink_queue *)s);
}

/* Counts every record of list as not delivered with err; frees the list. */
static void fail_list(struct qentry *list, int err)
{
	while (list) {
		struct qentry *next = list->next;

		if (list->kind == Q_RECORD)
			out_slot_error(list->counted, err, 1);
		else if (list->kind == Q_TEXT)
			chunk_count(list->chunk, list->chunk->done, list->chunk->n_lines, err);
		entry_free(list);
		list = next;
	}
}

static unsigned stall_ms(void)
{
	long long v = knob_num(KNOB_QUEUE_STALL_MS, 0);

	return v > 0 ? (unsigned)v : 1000;
}

static void queue_close(struct sink *s)
{
	struct sink_queue *q = (struct sink_queue *)s;
	uint64_t last = UINT64_MAX, since = now_msec(CLOCK_MONOTONIC);
	unsigned limit = stall_ms();
	bool cancelled = false;

	if (!q->running)
		return;
	publish(q);
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	for (;;) {
		uint64_t p = __atomic_load_n(&q->progress, __ATOMIC_ACQUIRE);
		int r = pthread_tryjoin_np(q->thread, NULL);

		if (r == 0)
			break;
		if (p != last) {
			last = p;
			since = now_msec(CLOCK_MONOTONIC);
		} else if (now_msec(CLOCK_MONOTONIC) - since >= limit) {
			pthread_cancel(q->thread);
			pthread_join(q->thread, NULL);
			cancelled = true;
			break;
		}
		usleep(2000);
	}
	q->running = false;
	/* The writer is gone: what it was writing, and what still waits, was
	 * not delivered. */
	fail_list(q->batch, -ECANCELED);
	q->batch = NULL;
	fail_list(q->head, -ECANCELED);
	q->head = NULL;
	q->tail = &q->head;
	set_size(&q->n, 0);
	set_size(&q->bytes, 0);
	if (cancelled && q->inner->ops->text && q->inner->ops->text->abort)
		q->inner->ops->text->abort(q->inner);
}

static void queue_free(struct sink *s)
{
	struct sink_queue *q = (struct sink_queue *)s;

	queue_close(s);
	entry_free(q->open);	/* empty: close() published it */
	fail_list(q->spare, 0);
	sink_free(q->inner);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q);
}

static const struct sink_ops queue_ops = {
	.emit = queue_emit,
	.message = queue_message,
	.flush = queue_flush,
	.close = queue_close,
	.free = queue_free,
};

int sink_queue_new(struct sink **ret, struct sink *inner, size_t max_entries)
{
	struct sink_queue *q = calloc(1, sizeof(*q));
	sigset_t all, old;
	int r;

	if (!q)
		return -ENOMEM;
	q->base.ops = &queue_ops;
	q->base.inner = inner;
	q->inner = inner;
	q->tail = &q->head;
	q->max_entries = max_entries ? max_entries : 65536;
	q->max_bytes = 64 << 20;
	q->delay_us = knob_num(KNOB_TEST_SINK_DELAY_US, 0);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	/* Every signal blocked in the writer: the main loop takes SIGTERM, SIGHUP
	 * and SIGINT through signalfd, which works only while no thread leaves
	 * them unblocked (the kernel would deliver them there instead). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&q->thread, NULL, writer, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		free(q);
		return r;
	}
	q->running = true;
	*ret = &q->base;
	return 0;
}

int sink_queue_wrap(struct sink **s)
{
	struct sink *q;
	int r = sink_queue_new(&q, *s, knob_num(KNOB_QUEUE_ENTRIES, 0));

	if (r < 0)
		return r;
	*s = q;
	return 0;
}
