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
 * A queued record copies everything the sink reads (header, record bytes,
 * text, selection name and priority) because a reload may free the
 * selection meanwhile; it holds a reference on its slot for the counters,
 * and the tp_event lives as long as the tracer, which closes the queue
 * before freeing events.
 *
 * Closing waits for the writer while it makes progress; once it made none
 * for TRACERD_QUEUE_STALL_MS (1000 by default), the writer is cancelled in
 * its blocked write and whatever it had not delivered is counted ECANCELED,
 * so shutdown stays prompt and the counts stay exact. */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include "sink.h"
#include "util.h"

enum qkind { Q_RECORD, Q_MESSAGE };

struct qentry {
	struct qentry *next;
	enum qkind kind;
	size_t bytes;
	struct trace_slot *counted;	/* referenced: where the outcome is counted */
	/* What the inner sink sees of the slot: a snapshot, see above. */
	struct trace_slot slot;
	struct sel_state sel;
	struct selection conf;
	struct trace_rec_hdr hdr;
	int64_t realtime_offset_ns;
	size_t len;
	const char *text;
	/* Q_MESSAGE */
	int priority;
	char **fields;
	size_t n_fields;
	uint8_t data[];		/* record, then text, then name */
};

struct sink_queue {
	struct sink base;
	struct sink *inner;
	pthread_t thread;
	bool running;		/* the writer thread exists */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct qentry *head, **tail;
	size_t n, max_entries;
	size_t bytes, max_bytes;
	bool stop;
	/* Owned by the writer while it runs; read by close() after join. */
	struct qentry *batch;
	uint64_t progress;	/* entries finished, atomically updated */
	unsigned delay_us;	/* TRACERD_TEST_SINK_DELAY_US */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void entry_free(struct qentry *e)
{
	if (!e)
		return;
	if (e->kind == Q_MESSAGE)
		strv_free(e->fields, e->n_fields);
	trace_slot_unref(e->counted);
	free(e);
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
			.slot = &e->slot, .hdr = &e->hdr, .rec = e->data, .len = e->len,
			.text = e->text, .realtime_offset_ns = e->realtime_offset_ns,
		};

		if (q->delay_us)
			usleep(q->delay_us);
		r = q->inner->ops->emit(q->inner, &rec);
	}
	if (r < 0)
		trace_slot_error(e->counted, r);
	else
		trace_slot_delivered(e->counted);
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
		q->n = 0;
		q->bytes = 0;
		pthread_mutex_unlock(&q->lock);

		while (q->batch) {
			struct qentry *e = q->batch;

			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			entry_write(q, e);
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			q->batch = e->next;
			entry_free(e);
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
	if (!force && (q->n >= q->max_entries || q->bytes + e->bytes > q->max_bytes)) {
		pthread_mutex_unlock(&q->lock);
		return -ENOBUFS;
	}
	e->next = NULL;
	*q->tail = e;
	q->tail = &e->next;
	q->n++;
	q->bytes += e->bytes;
	/* Wake the writer once per batch: it takes the whole list. */
	if (q->n == 1)
		pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static int queue_emit(struct sink *s, const struct out_record *r)
{
	struct sink_queue *q = (struct sink_queue *)s;
	const char *name = r->slot->sel->conf->name ? r->slot->sel->conf->name : "";
	size_t tlen = strlen(r->text), nlen = strlen(name);
	size_t bytes = sizeof(struct qentry) + r->len + tlen + 1 + nlen + 1;
	struct qentry *e;
	char *p;

	if (!q->running)
		return q->inner->ops->emit(q->inner, r);
	/* Check before copying: a full queue costs no allocation. */
	if (__atomic_load_n(&q->n, __ATOMIC_RELAXED) >= q->max_entries)
		return -ENOBUFS;
	e = malloc(bytes);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->kind = Q_RECORD;
	e->bytes = bytes;
	e->hdr = *r->hdr;
	e->len = r->len;
	e->realtime_offset_ns = r->realtime_offset_ns;
	memcpy(e->data, r->rec, r->len);
	p = (char *)e->data + r->len;
	memcpy(p, r->text, tlen + 1);
	e->text = p;
	p += tlen + 1;
	memcpy(p, name, nlen + 1);
	e->conf.name = p;
	e->conf.priority = r->slot->sel->conf->priority;
	e->sel.conf = &e->conf;
	e->slot.id = r->slot->id;
	e->slot.event = r->slot->event;
	e->slot.sel = &e->sel;
	e->counted = trace_slot_ref((struct trace_slot *)r->slot);
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

	if (!q->running || q->inner->ops->message_direct)
		return q->inner->ops->message(q->inner, priority, msg, fields, n_fields);
	e = calloc(1, bytes);
	if (!e)
		return -ENOMEM;
	e->kind = Q_MESSAGE;
	e->bytes = bytes;
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
	/* Daemon messages (stats, reloads) are few and must not be dropped. */
	enqueue(q, e, true);
	return 0;
}

static void queue_flush(struct sink *s)
{
	(void)s;	/* the writer flushes the inner sink after every batch */
}

/* Counts every record of list as not delivered with err; frees the list. */
static void fail_list(struct qentry *list, int err)
{
	while (list) {
		struct qentry *next = list->next;

		if (list->kind == Q_RECORD)
			trace_slot_error(list->counted, err);
		entry_free(list);
		list = next;
	}
}

static unsigned stall_ms(void)
{
	const char *e = getenv("TRACERD_QUEUE_STALL_MS");
	int v = e ? atoi(e) : 0;

	return v > 0 ? (unsigned)v : 1000;
}

static void queue_close(struct sink *s)
{
	struct sink_queue *q = (struct sink_queue *)s;
	uint64_t last = UINT64_MAX, since = now_ms();
	unsigned limit = stall_ms();
	bool cancelled = false;

	if (!q->running)
		return;
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
			since = now_ms();
		} else if (now_ms() - since >= limit) {
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
	q->n = q->bytes = 0;
	if (cancelled && q->inner->ops->abort)
		q->inner->ops->abort(q->inner);
}

static void queue_free(struct sink *s)
{
	struct sink_queue *q = (struct sink_queue *)s;

	queue_close(s);
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
	const char *delay = getenv("TRACERD_TEST_SINK_DELAY_US");
	sigset_t all, old;
	int r;

	if (!q)
		return -ENOMEM;
	q->base.ops = &queue_ops;
	q->inner = inner;
	q->tail = &q->head;
	q->max_entries = max_entries ? max_entries : 65536;
	q->max_bytes = 64 << 20;
	q->delay_us = delay ? (unsigned)atoi(delay) : 0;
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
	const char *n = getenv("TRACERD_QUEUE_ENTRIES");
	struct sink *q;
	int r = sink_queue_new(&q, *s, n ? strtoul(n, NULL, 0) : 0);

	if (r < 0)
		return r;
	*s = q;
	return 0;
}
