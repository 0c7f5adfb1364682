// SPDX-License-Identifier: GPL-2.0
/* Output=store: raw records into the event store (daemon/store/,
 * docs/STORE.md), not text: the consumer renders nothing for it. Each
 * (slot, selection) is registered with the writer once, holding a
 * reference on the slot, and counted when its block is on disk (delivered)
 * or could not be written (a sink error, by errno): every record is
 * counted once either way. Daemon messages go to the journal. */
#include <sys/stat.h>
#include "render/render_stack.h"
#include "config/config.h"
#include "log.h"
#include "sink.h"
#include "store/store.h"
#include "util.h"

struct sslot {
	const struct out_slot *slot;	/* referenced */
	int priority;
	unsigned id;			/* the writer's */
};

struct sink_store {
	struct sink base;
	struct store_writer *w;
	struct sink *messages;		/* the journal */
	struct sslot slots[TRACERD_MAX_EVENTS];
	struct sslot *retired;		/* registrations of replaced slots */
	size_t n_retired, cap_retired;
	char *dir;
	/* The writer thread's: failures are logged once a minute at most, as a
	 * nearly full disk fails big blocks and takes small ones in turn. */
	bool failing, fail_logged;
	uint64_t fail_logged_usec, failed;
	uint64_t deleted_logged;
};

/* On the writer thread, once per event per block. */
static void store_done(void *owner, uint64_t n, int err, void *userdata)
{
	struct sink_store *s = userdata;

	if (!err) {
		out_slot_delivered(owner, n);
		if (s->failing && s->fail_logged)
			log_info("store: writing to %s again; %llu records could not be written",
				 s->dir, (unsigned long long)s->failed);
		s->failing = s->fail_logged = false;
		return;
	}
	out_slot_error(owner, err, n);
	s->failed += n;
	if (s->failing)
		return;
	s->failing = true;
	if (s->fail_logged_usec && store_now_usec() - s->fail_logged_usec < 60 * 1000000ULL)
		return;
	s->fail_logged = true;
	s->fail_logged_usec = store_now_usec();
	log_warning("store: cannot write to %s: %s; its records count as lost until it can",
		    s->dir, strerror(-err));
}

static int store_register(struct sink_store *s, const struct out_record *r, struct sslot *c)
{
	/* The writer parses the print fmt for its enum values: the one
	 * lazily filled part of an event, which outlives every sink. */
	struct tp_event *e = (struct tp_event *)r->slot->event;
	int id;

	if (c->slot) {
		/* Keep the old registration (and its reference) until the writer is done. */
		if (GROW(s->retired, s->cap_retired, s->n_retired) < 0)
			return -ENOMEM;
		s->retired[s->n_retired++] = *c;
		c->slot = NULL;
	}
	id = store_writer_add_event(s->w, e, e->class ? e->class->name : NULL, r->slot->selection,
				    r->priority, (void *)r->slot);
	if (id < 0)
		return id;
	*c = (struct sslot){ out_slot_ref(r->slot), r->priority, id };
	return 0;
}

static int store_emit(struct sink *sk, const struct out_record *r)
{
	struct sink_store *s = (struct sink_store *)sk;
	struct sslot *c;
	int k;

	if (r->slot->id >= TRACERD_MAX_EVENTS)
		return -EINVAL;
	c = &s->slots[r->slot->id];
	if (c->slot != r->slot || c->priority != r->priority) {
		k = store_register(s, r, c);
		if (k < 0)
			return k;
	}
	k = store_writer_append(s->w, c->id, r->hdr, r->rec, out_record_whole(r));
	return k < 0 ? k : 1;	/* counted by store_done() */
}

static int store_message(struct sink *sk, int priority, const char *msg, const char *const *fields,
			 size_t n_fields)
{
	struct sink_store *s = (struct sink_store *)sk;

	return s->messages->ops->message(s->messages, priority, msg, fields, n_fields);
}

/* Logs what MaxUse= deleted since the last time. */
static void log_retention(struct sink_store *s)
{
	struct store_writer_stats st;

	store_writer_get_stats(s->w, &st);
	if (st.files_deleted != s->deleted_logged) {
		log_info("store: deleted %llu old files, %llu in all (%llu MiB), to keep MaxUse=",
			 (unsigned long long)(st.files_deleted - s->deleted_logged),
			 (unsigned long long)st.files_deleted,
			 (unsigned long long)(st.bytes_deleted >> 20));
		s->deleted_logged = st.files_deleted;
	}
}

static void store_flush(struct sink *sk)
{
	struct sink_store *s = (struct sink_store *)sk;

	store_writer_flush(s->w, false);
	log_retention(s);
}

static void store_lost(struct sink *sk, unsigned cpu, uint64_t ts_ns, uint64_t n)
{
	struct sink_store *s = (struct sink_store *)sk;

	store_writer_add_lost(s->w, cpu, ts_ns, n);
}

static void store_close(struct sink *sk)
{
	struct sink_store *s = (struct sink_store *)sk;

	store_writer_sync(s->w);
	log_retention(s);
}

static void store_free(struct sink *sk)
{
	struct sink_store *s = (struct sink_store *)sk;

	store_writer_free(s->w);	/* syncs: every done() call is made */
	for (size_t i = 0; i < ARRAY_SIZE(s->slots); i++)
		if (s->slots[i].slot)
			out_slot_unref(s->slots[i].slot);
	for (size_t i = 0; i < s->n_retired; i++)
		out_slot_unref(s->retired[i].slot);
	free(s->retired);
	sink_free(s->messages);
	free(s->dir);
	free(s);
}

static const struct sink_ops store_ops;

struct store_writer *sink_store_writer(struct sink *sk)
{
	return sk && sk->ops == &store_ops ? ((struct sink_store *)sk)->w : NULL;
}

static const struct sink_ops store_ops = {
	.emit = store_emit,
	.message = store_message,
	.flush = store_flush,
	.lost = store_lost,
	.close = store_close,
	.free = store_free,
};

int sink_store_new(struct sink **ret, const struct config *cfg, uint64_t window, struct diag *d)
{
	struct sink_store *s = calloc(1, sizeof(*s));
	struct store_writer_opts o = {
		.directory = cfg->store.directory,
		.max_use = cfg->store.max_use,
		.max_file_size = cfg->store.max_file_size,
		.max_file_usec = cfg->store.max_file_sec * 1000000ULL,
		.sync_usec = cfg->store.sync_interval_sec * 1000000ULL,
		.flush_usec = cfg->flush_interval_ms * 1000ULL,
		.codec = (enum store_codec)cfg->store.compression,
		.done = store_done,
		.ksym = render_kernel_symbol,
		.window = window,
	};
	int r;

	if (!s)
		return -ENOMEM;
	s->base = (struct sink){ .ops = &store_ops };
	o.userdata = s;
	s->dir = strdup(cfg->store.directory ? cfg->store.directory : "");
	if (!s->dir || !cfg->store.directory)
		r = -ENOMEM;
	else if (!window && mkdir(s->dir, 0750) < 0 && errno != EEXIST)
		r = -errno;
	else
		r = sink_journal_new(&s->messages);
	if (r >= 0)
		r = store_writer_new(&s->w, &o);
	if (r == -EBUSY)
		diag_set(d, NULL, 0, 0,
			 "%s is written by another tracerd (pid %d, the holder of %s/.lock): "
			 "two cannot share a [Store] Directory=", s->dir, store_dir_holder(s->dir), s->dir);
	else if (r < 0)
		diag_set(d, NULL, 0, 0, "%s: %s", s->dir, strerror(-r));
	if (r < 0) {
		sink_free(s->messages);
		free(s->dir);
		free(s);
		return r;
	}
	*ret = &s->base;
	return 0;
}
