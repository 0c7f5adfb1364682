// SPDX-License-Identifier: GPL-2.0
/* A slot's output descriptor: what sinks read, and its counters. */
#include <pthread.h>
#include "consume/out_record.h"
#include "util.h"

/* Sink errors are rare: one lock for every slot's errno table is enough,
 * and it keeps the writer thread and the main loop consistent. */
static pthread_mutex_t errno_lock = PTHREAD_MUTEX_INITIALIZER;

int out_slot_new(struct out_slot **ret, unsigned id, const struct tp_event *e,
		 const char *selection, int priority)
{
	struct out_slot *s = calloc(1, sizeof(*s));

	if (!s || !(s->selection = strdup(selection ? selection : ""))) {
		free(s);
		return -ENOMEM;
	}
	s->id = id;
	s->event = e;
	s->priority = priority;
	s->refs = 1;
	*ret = s;
	return 0;
}

/* The counters are the only thing that changes under a reference: the
 * const is the sinks' view, which is read-only. */
struct out_slot *out_slot_ref(const struct out_slot *s)
{
	struct out_slot *m = (struct out_slot *)s;

	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	return m;
}

void out_slot_unref(const struct out_slot *s)
{
	struct out_slot *m = (struct out_slot *)s;

	if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(m->selection);
		free(m);
	}
}

void out_slot_set_priority(struct out_slot *s, int priority)
{
	__atomic_store_n(&s->priority, priority, __ATOMIC_RELAXED);
}

void out_slot_set_output(struct out_slot *s, int output)
{
	__atomic_store_n(&s->output, output, __ATOMIC_RELAXED);
}

int out_slot_output(const struct out_slot *s)
{
	return __atomic_load_n(&s->output, __ATOMIC_RELAXED);
}

void out_slot_set_trigger(struct out_slot *s, int trigger)
{
	__atomic_store_n(&s->trigger, trigger, __ATOMIC_RELAXED);
}

int out_slot_trigger(const struct out_slot *s)
{
	return __atomic_load_n(&s->trigger, __ATOMIC_RELAXED);
}

int out_slot_priority(const struct out_slot *s)
{
	return __atomic_load_n(&s->priority, __ATOMIC_RELAXED);
}

void out_slot_delivered(const struct out_slot *s, uint64_t n)
{
	__atomic_add_fetch(&((struct out_slot *)s)->delivered, n, __ATOMIC_RELAXED);
}

void out_slot_error(const struct out_slot *s, int err, uint64_t n)
{
	struct out_slot *m = (struct out_slot *)s;
	struct sink_errno_count *b = &m->errnos[TRACERD_SINK_ERRNOS - 1];

	err = err < 0 ? -err : err ? err : EIO;
	pthread_mutex_lock(&errno_lock);
	m->sink_errors += n;
	for (size_t i = 0; i < TRACERD_SINK_ERRNOS - 1; i++)
		if (m->errnos[i].err == err || !m->errnos[i].err) {
			b = &m->errnos[i];
			break;
		}
	if (b == &m->errnos[TRACERD_SINK_ERRNOS - 1] && b->err && b->err != err)
		b->err = -1;	/* "other" */
	else
		b->err = err;
	b->n += n;
	pthread_mutex_unlock(&errno_lock);
}

void out_slot_hist_cut(const struct out_slot *s, uint64_t n)
{
	__atomic_add_fetch(&((struct out_slot *)s)->hist_stack_cut, n, __ATOMIC_RELAXED);
}

uint64_t out_slot_hist_cuts(const struct out_slot *s)
{
	return __atomic_load_n(&s->hist_stack_cut, __ATOMIC_RELAXED);
}

static void add_errno(struct sink_errno_count *t, int err, uint64_t n)
{
	size_t i;

	for (i = 0; i < TRACERD_SINK_ERRNOS - 1; i++)
		if (t[i].err == err || !t[i].err)
			break;
	if (t[i].err && t[i].err != err)
		err = -1;
	t[i].err = err;
	t[i].n += n;
}

void out_slot_counts(const struct out_slot *s, uint64_t *delivered, uint64_t *sink_errors,
		     struct sink_errno_count *errnos)
{
	*delivered += __atomic_load_n(&s->delivered, __ATOMIC_RELAXED);
	pthread_mutex_lock(&errno_lock);
	*sink_errors += s->sink_errors;
	for (size_t i = 0; i < TRACERD_SINK_ERRNOS && s->errnos[i].err; i++)
		add_errno(errnos, s->errnos[i].err, s->errnos[i].n);
	pthread_mutex_unlock(&errno_lock);
}

void sink_errnos_format(const struct sink_errno_count *e, char *buf, size_t size)
{
	size_t k = 0;

	buf[0] = 0;
	for (size_t i = 0; i < TRACERD_SINK_ERRNOS && e[i].err && k < size; i++) {
		const char *name = e[i].err > 0 ? strerrorname_np(e[i].err) : "other";

		k += snprintf(buf + k, size - k, "%s%s %llu", i ? ", " : "", name ? name : "?",
			      (unsigned long long)e[i].n);
	}
}
