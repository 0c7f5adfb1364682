// SPDX-License-Identifier: GPL-2.0
/* Per-selection Output=: records go to the sink their selection names
 * (journal, stdout, store), or the [Daemon] one. Each sink is made the
 * first time a record needs it, so that a reload may send a selection
 * somewhere new; the journal and stdout sit behind their queues, the store
 * has its own writer thread. Messages go to the [Daemon] sink. */
#include "config/config.h"
#include "log.h"
#include "sink.h"
#include "util.h"

#define N_OUTPUTS 3	/* OUTPUT_JOURNAL, OUTPUT_STDOUT, OUTPUT_STORE */

struct sink_route {
	struct sink base;
	struct sink *out[N_OUTPUTS];
	int failed[N_OUTPUTS];		/* -errno: could not be made, not tried again */
	enum output def;
	struct config cfg;		/* [Store] and FlushIntervalMSec=, as at start */
};

static int make(struct sink_route *s, enum output o)
{
	int r;

	if (s->failed[o])
		return s->failed[o];
	r = o == OUTPUT_STORE ? sink_store_new(&s->out[o], &s->cfg) :
	    o == OUTPUT_STDOUT ? sink_stdout_new(&s->out[o], stdout) : sink_journal_new(&s->out[o]);
	if (r >= 0 && o != OUTPUT_STORE && (r = sink_queue_wrap(&s->out[o])) < 0) {
		sink_free(s->out[o]);
		s->out[o] = NULL;
	}
	if (r < 0) {
		log_error("cannot open the %s output: %s; its records count as sink errors",
			  o == OUTPUT_STORE ? "store" : o == OUTPUT_STDOUT ? "stdout" : "journal",
			  strerror(-r));
		s->failed[o] = r;
	}
	return r;
}

static int route_emit(struct sink *sk, const struct out_record *r)
{
	struct sink_route *s = (struct sink_route *)sk;
	int o = out_slot_output(r->slot), k;

	if (o < 0 || o >= N_OUTPUTS)
		o = s->def;
	if (!s->out[o] && (k = make(s, o)) < 0)
		return k;
	return sink_emit(s->out[o], r);
}

static int route_message(struct sink *sk, int priority, const char *msg, const char *const *fields,
			 size_t n_fields)
{
	struct sink_route *s = (struct sink_route *)sk;

	return s->out[s->def]->ops->message(s->out[s->def], priority, msg, fields, n_fields);
}

static void route_flush(struct sink *sk)
{
	struct sink_route *s = (struct sink_route *)sk;

	for (unsigned i = 0; i < N_OUTPUTS; i++)
		if (s->out[i])
			sink_flush(s->out[i]);
}

static void route_close(struct sink *sk)
{
	struct sink_route *s = (struct sink_route *)sk;

	for (unsigned i = 0; i < N_OUTPUTS; i++)
		sink_close(s->out[i]);
}

static void route_free(struct sink *sk)
{
	struct sink_route *s = (struct sink_route *)sk;

	for (unsigned i = 0; i < N_OUTPUTS; i++)
		sink_free(s->out[i]);
	free(s->cfg.store.directory);
	free(s);
}

static const struct sink_ops route_ops = {
	.emit = route_emit,
	.message = route_message,
	.flush = route_flush,
	.close = route_close,
	.free = route_free,
};

int sink_route_new(struct sink **ret, const struct config *cfg)
{
	struct sink_route *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->base = (struct sink){ .ops = &route_ops };
	s->def = cfg->output < N_OUTPUTS ? cfg->output : OUTPUT_JOURNAL;
	s->cfg.store = cfg->store;
	s->cfg.store.directory = cfg->store.directory ? strdup(cfg->store.directory) : NULL;
	s->cfg.flush_interval_ms = cfg->flush_interval_ms;
	/* The [Daemon] output and every one a selection names now, so that a
	 * store directory that cannot be made fails the start, not the records. */
	r = make(s, s->def);
	/* sink_gone() asks the innermost sink: the [Daemon] one (stdout's EPIPE). */
	s->base.inner = s->out[s->def];
	for (size_t i = 0; r >= 0 && i < cfg->n_sels; i++)
		if (cfg->sels[i].output < N_OUTPUTS && !s->out[cfg->sels[i].output])
			r = make(s, cfg->sels[i].output);
	if (r < 0) {
		route_free(&s->base);
		return r;
	}
	*ret = &s->base;
	return 0;
}
