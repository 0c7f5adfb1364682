// SPDX-License-Identifier: GPL-2.0
/* The ring buffer drained to the sink, and its losses passed on after the
 * records drained: by the loop, by a reload's detach (tracer_apply.c) and
 * at stop. */
#include <time.h>
#include "sink/sink.h"
#include "tracer.h"
#include "util.h"

/* The ring buffer's new losses, per CPU, to the sink (the store marks them
 * after the records drained so far): one map read per drain. */
static void pass_losses(struct tracer *t)
{
	uint64_t now[256];
	struct timespec ts;
	int n = loader_lost_by_cpu(t->ld, now, ARRAY_SIZE(now));

	if (n <= 0 || !t->sink)
		return;
	if ((size_t)n > t->n_lost_seen) {
		uint64_t *v = realloc(t->lost_seen, n * sizeof(*v));

		if (!v)
			return;
		memset(v + t->n_lost_seen, 0, (n - t->n_lost_seen) * sizeof(*v));
		t->lost_seen = v;
		t->n_lost_seen = n;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int c = 0; c < n; c++)
		if (now[c] > t->lost_seen[c]) {
			sink_lost(t->sink, c, ts.tv_sec * 1000000000ull + ts.tv_nsec, now[c] - t->lost_seen[c]);
			t->lost_seen[c] = now[c];
		}
}

int tracer_drain(struct tracer *t)
{
	int r = consumer_drain(t->cons);

	pass_losses(t);
	return r;
}

void tracer_drain_all(struct tracer *t)
{
	if (t->cons)
		consumer_drain_all(t->cons);
	pass_losses(t);
}

void tracer_drain_written(struct tracer *t)
{
	if (t->cons)
		consumer_drain_written(t->cons);
	pass_losses(t);
}
