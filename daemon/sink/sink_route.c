// SPDX-License-Identifier: GPL-2.0
/* Per-selection Output=: records go to the sink their selection names
 * (journal, stdout, store, recorder), or the [Daemon] one; a record of a
 * Trigger=snapshot selection takes a snapshot of the recorder too. Every output a config names
 * is made when it is started or reloaded (one that cannot be made fails
 * that); the journal and stdout sit behind their queues, the store has its
 * own writer thread. A reload that changes [Store] closes the running store
 * (it writes out all it was given) and opens the new one. Messages go to
 * the [Daemon] sink. */
#include "config/config.h"
#include "log.h"
#include "sink.h"
#include "util.h"

struct sink_route {
	struct sink base;
	struct sink *out[N_OUTPUTS];
	int failed[N_OUTPUTS];		/* -errno: could not be made, not tried again */
	enum output def;
	struct config cfg;		/* [Store] and FlushIntervalMSec=, as at start */
};

static const char *output_name(enum output o)
{
	return o == OUTPUT_STORE ? "store" : o == OUTPUT_STDOUT ? "stdout" :
	       o == OUTPUT_RECORDER ? "recorder" : "journal";
}

/* One output's sink; cfg gives the store's settings. d says why it failed. */
static int open_output(enum output o, const struct config *cfg, struct sink **ret, struct diag *d)
{
	struct diag why = { 0 };
	int r;

	*ret = NULL;
	r = o == OUTPUT_STORE ? sink_store_new(ret, cfg, 0, &why) :
	    o == OUTPUT_RECORDER ? sink_recorder_new(ret, cfg, &why) :
	    o == OUTPUT_STDOUT ? sink_stdout_new(ret, stdout) : sink_journal_new(ret);
	/* The store and the recorder have their own writer thread. */
	if (r >= 0 && o != OUTPUT_STORE && o != OUTPUT_RECORDER && (r = sink_queue_wrap(ret)) < 0) {
		sink_free(*ret);
		*ret = NULL;
	}
	if (r < 0)
		diag_set(d, NULL, 0, 0, "cannot open the %s output: %s", output_name(o),
			 why.msg[0] ? why.msg : strerror(-r));
	return r;
}

/* d: the caller reports a failure (at start); NULL: logged here. */
static int make(struct sink_route *s, enum output o, struct diag *d)
{
	struct diag why = { 0 };
	int r;

	if (s->failed[o])
		return s->failed[o];
	r = open_output(o, &s->cfg, &s->out[o], d ? d : &why);
	if (r < 0) {
		if (!d)
			log_error("%s; its records count as sink errors", why.msg);
		s->failed[o] = r;
	}
	return r;
}

static enum output daemon_output(const struct config *cfg)
{
	return cfg->output < N_OUTPUTS ? cfg->output : OUTPUT_JOURNAL;
}

/* Whether cfg sends records or messages to o. */
static bool names(const struct config *cfg, enum output o)
{
	if (daemon_output(cfg) == o)
		return true;
	for (size_t i = 0; i < cfg->n_sels; i++)
		if (cfg->sels[i].output == o)
			return true;
	return false;
}

/* The settings a store is made with: [Store], and FlushIntervalMSec=;
 * [Recorder] for the recorder. */
static int store_settings(struct config *to, const struct config *from)
{
	to->store = from->store;
	to->recorder = from->recorder;
	to->store.directory = from->store.directory ? strdup(from->store.directory) : NULL;
	to->flush_interval_ms = from->flush_interval_ms;
	return !from->store.directory || to->store.directory ? 0 : -ENOMEM;
}

static bool store_differs(const struct config *a, const struct config *b)
{
	return !streq_ptr(a->store.directory, b->store.directory) ||
	       a->store.max_use != b->store.max_use ||
	       a->store.max_file_size != b->store.max_file_size ||
	       a->store.max_file_sec != b->store.max_file_sec ||
	       a->store.sync_interval_sec != b->store.sync_interval_sec ||
	       a->store.compression != b->store.compression ||
	       a->flush_interval_ms != b->flush_interval_ms;
}

/* Field by field: struct recorder_config has padding that a copy need not
 * keep, so memcmp() could see a change where none was made. */
static bool recorder_differs(const struct recorder_config *a, const struct recorder_config *b)
{
	return a->size != b->size || a->keep_after_sec != b->keep_after_sec ||
	       a->min_interval_sec != b->min_interval_sec || a->max_snapshots != b->max_snapshots;
}

static int route_emit(struct sink *sk, const struct out_record *r)
{
	struct sink_route *s = (struct sink_route *)sk;
	int o = out_slot_output(r->slot), k;

	if (o < 0 || o >= N_OUTPUTS)
		o = s->def;
	if (!s->out[o] && (k = make(s, o, NULL)) < 0)
		return k;
	k = sink_emit(s->out[o], r);
	if (out_slot_trigger(r->slot) == TRIGGER_SNAPSHOT)
		(void)sink_recorder_snapshot(s->out[OUTPUT_RECORDER], r->slot->selection, 1);
	return k;
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

static void route_lost(struct sink *sk, unsigned cpu, uint64_t ts_ns, uint64_t n)
{
	struct sink_route *s = (struct sink_route *)sk;

	sink_lost(s->out[OUTPUT_STORE], cpu, ts_ns, n);
	sink_lost(s->out[OUTPUT_RECORDER], cpu, ts_ns, n);
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

static const struct sink_ops route_ops;

static struct sink_route *as_route(struct sink *sk)
{
	return sk && sk->ops == &route_ops ? (struct sink_route *)sk : NULL;
}

static const struct sink_ops route_ops = {
	.emit = route_emit,
	.message = route_message,
	.flush = route_flush,
	.lost = route_lost,
	.close = route_close,
	.free = route_free,
};

int sink_route_new(struct sink **ret, const struct config *cfg, struct diag *d)
{
	struct sink_route *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->base = (struct sink){ .ops = &route_ops };
	s->def = daemon_output(cfg);
	r = store_settings(&s->cfg, cfg);
	/* The [Daemon] output and every one a selection names now, so that a
	 * store directory that cannot be made fails the start, not the records. */
	if (r >= 0)
		r = make(s, s->def, d);
	/* sink_gone() asks the innermost sink: the [Daemon] one (stdout's EPIPE). */
	s->base.inner = s->out[s->def];
	for (size_t i = 0; r >= 0 && i < cfg->n_sels; i++)
		if (cfg->sels[i].output < N_OUTPUTS && !s->out[cfg->sels[i].output])
			r = make(s, cfg->sels[i].output, d);
	if (r < 0) {
		route_free(&s->base);
		return r;
	}
	*ret = &s->base;
	return 0;
}

int sink_route_prepare(struct sink *sk, const struct config *cfg, struct route_update *u,
		       struct diag *d)
{
	struct sink_route *s = as_route(sk);
	int r = 0;

	*u = (struct route_update){ .def = daemon_output(cfg) };
	if (!s)
		return 0;
	u->store_changed = store_differs(&s->cfg, cfg);
	if (s->out[OUTPUT_RECORDER] && recorder_differs(&s->cfg.recorder, &cfg->recorder))
		log_warning("[Recorder] takes effect on restart only: the running window stays, "
			    "with its settings");
	r = store_settings(&u->cfg, cfg);
	for (unsigned o = 0; r >= 0 && o < N_OUTPUTS; o++) {
		if (!names(cfg, o) || (s->out[o] && !(o == OUTPUT_STORE && u->store_changed)))
			continue;
		r = open_output(o, &u->cfg, &u->out[o], d);
		if (r < 0)
			log_error("%s", d->msg);
	}
	if (r < 0)
		sink_route_abort(u);
	return r;
}

void sink_route_abort(struct route_update *u)
{
	for (unsigned o = 0; o < N_OUTPUTS; o++) {
		sink_close(u->out[o]);
		sink_free(u->out[o]);
	}
	free(u->cfg.store.directory);
	*u = (struct route_update){ 0 };
}

void sink_route_commit(struct sink *sk, struct route_update *u)
{
	struct sink_route *s = as_route(sk);

	if (!s)
		return sink_route_abort(u);
	/* The running store writes out what it was given, then closes. */
	if (u->store_changed && s->out[OUTPUT_STORE]) {
		sink_close(s->out[OUTPUT_STORE]);
		sink_free(s->out[OUTPUT_STORE]);
		s->out[OUTPUT_STORE] = NULL;
	}
	for (unsigned o = 0; o < N_OUTPUTS; o++)
		if (u->out[o]) {
			s->out[o] = u->out[o];
			s->failed[o] = 0;
			u->out[o] = NULL;
		}
	if (u->store_changed) {
		s->failed[OUTPUT_STORE] = 0;
		swap(s->cfg, u->cfg);
	}
	s->def = u->def;
	s->base.inner = s->out[s->def];
	sink_route_abort(u);
}

int sink_route_snapshot(struct sink *sk, const char *reason, uint64_t n)
{
	struct sink_route *s = as_route(sk);

	return s ? sink_recorder_snapshot(s->out[OUTPUT_RECORDER], reason, n) : -ENOENT;
}

int sink_route_recorder_stats(struct sink *sk, struct recorder_stats *out)
{
	struct sink_route *s = as_route(sk);

	return s ? sink_recorder_stats(s->out[OUTPUT_RECORDER], out) : -ENOENT;
}
