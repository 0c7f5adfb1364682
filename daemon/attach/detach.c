// SPDX-License-Identifier: GPL-2.0
/* Detaching many events at once, from threads, while the caller hears
 * about progress. */
#include <bpf/libbpf.h>
#include <pthread.h>
#include <time.h>
#include "attach/loader_priv.h"
#include "util.h"

/* Destroying a link waits for grace periods in the kernel twice: releasing
 * the link (the program leaves the perf event) waits for tasks-trace RCU,
 * outside any global lock, so threads share it; closing the tracepoint's
 * last perf event takes event_mutex and, under it, waits for the
 * tracepoint's unregistration (tasks-trace RCU, then RCU): 20-40 ms an event
 * here, one event at a time whatever the number of threads. So threads halve
 * the time (bench/detach-cost.c: 300 events, 44 ms an event from one thread,
 * 22 from 16), and no order does better. The caller waits, calling the
 * progress callback as links go, and its idle callback every
 * DETACH_IDLE_USEC: a reload drains the ring buffer there, for the events
 * that stay attached fire on all along. */
#define DETACH_THREADS 64
/* The ring's drain interval meanwhile: the loop's flush timer's order. */
#define DETACH_IDLE_USEC 5000

struct detach_work {
	struct attachment **atts;
	size_t n, next;		/* next: taken with __atomic_fetch_add */
	size_t done;		/* under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *detach_worker(void *arg)
{
	struct detach_work *w = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n) {
		attachment_close(w->atts[i]);
		pthread_mutex_lock(&w->lock);
		w->done++;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/* Waits for the workers, reporting progress every second and calling idle
 * (if any) every DETACH_IDLE_USEC, on the caller's thread. */
static void detach_wait(struct loader *l, struct detach_work *w, loader_idle_fn idle,
			void *userdata)
{
	uint64_t tick = idle ? DETACH_IDLE_USEC * 1000ULL : 1000000000ULL;

	pthread_mutex_lock(&w->lock);
	while (w->done < w->n) {
		struct timespec ts;
		uint64_t ns;
		size_t done;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ns = ts.tv_nsec + tick;
		ts.tv_sec += ns / 1000000000ULL;
		ts.tv_nsec = ns % 1000000000ULL;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		done = w->done;
		pthread_mutex_unlock(&w->lock);
		if (idle)
			idle(userdata);
		loader_progress(l, done, w->n);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
}

/* Entries not attached (no link) are passed over. */
void loader_detach_many(struct loader *l, struct attachment **atts, size_t n,
			loader_idle_fn idle, void *userdata)
{
	struct detach_work w = { .atts = atts, .n = n, .lock = PTHREAD_MUTEX_INITIALIZER };
	unsigned drops[TRACERD_PROG_INSTANCES + 1] = { 0 };	/* by instance: [0] emitted */
	pthread_t th[DETACH_THREADS];
	pthread_condattr_t ca;
	size_t started = 0, want;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);
	for (size_t i = 0; i < n; i++)
		if (atts[i]->attached)
			drops[atts[i]->instance]++;
	/* A thread for every 8 links: a few events need none, unless the
	 * caller has something to do meanwhile. */
	want = n / 8 < DETACH_THREADS ? n / 8 : DETACH_THREADS;
	if (!want && idle && n)
		want = 1;
	for (size_t i = 0; i < want; i++)
		if (pthread_create(&th[started], NULL, detach_worker, &w) == 0)
			started++;
	if (!started)	/* no thread: here, without the idle callback */
		detach_worker(&w);
	detach_wait(l, &w, idle, userdata);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_cond_destroy(&w.cond);
	/* copies of the class program go once their links have */
	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++)
		while (drops[k + 1]--)
			loader_instance_unuse(l, k);
}
