/* SPDX-License-Identifier: GPL-2.0 */
/* Where records go: stdout (foreground) or the systemd journal. A sink
 * receives flat out_records (consume/out_record.h), already rendered by the
 * consumer, and only writes them; adding a sink is one file. */
#ifndef TRACERD_SINK_H
#define TRACERD_SINK_H

#include <stdbool.h>
#include <stdio.h>
#include "config/config.h"
#include "consume/out_record.h"
#include "kernel-events/cgroup.h"
#include "render/render.h"
#include "strbuf.h"

struct sink;

/* A sink whose records are lines of text (stdout). The sink queue then
 * batches lines and hands them to write() many at once instead of calling
 * emit() per record. */
struct sink_text_ops {
	/* Appends r's line to out. */
	void (*format)(struct sink *s, const struct out_record *r, struct strbuf *out);
	/* Writes buf (whole lines); *written says how much got out even on
	 * error. Returns 0 or -errno. */
	int (*write)(struct sink *s, const char *buf, size_t len, size_t *written);
	/* Optional: the writer was cancelled while blocked; drop buffered
	 * output without blocking (stdout into a pipe nobody reads). */
	void (*abort)(struct sink *s);
	/* Optional: the output is closed for good (stdout's reader went away:
	 * EPIPE), so tracing on would only count sink errors. Any thread. */
	bool (*gone)(struct sink *s);
	/* Messages go elsewhere than records (stdout's go to stderr): the sink
	 * queue passes them straight through instead of behind the records. */
	bool message_direct;
};

struct sink_ops {
	/* 0: delivered; > 0: queued, the sink counts it later (sink_queue.c);
	 * < 0: -errno, not delivered. */
	int (*emit)(struct sink *s, const struct out_record *r);
	/* A daemon message (stats, suppression, reload): MESSAGE plus fields "K=V". */
	int (*message)(struct sink *s, int priority, const char *msg, const char *const *fields,
		       size_t n_fields);
	void (*flush)(struct sink *s);	/* optional */
	/* Optional: n records were lost in the ring buffer on cpu (of any
	 * selection), noticed at ts_ns (CLOCK_MONOTONIC), after the records
	 * emitted so far: the store marks them there (docs/STORE.md). */
	void (*lost)(struct sink *s, unsigned cpu, uint64_t ts_ns, uint64_t n);
	/* Optional: finish what is pending, in bounded time; after it every
	 * counter is final and later calls write synchronously. */
	void (*close)(struct sink *s);
	void (*free)(struct sink *s);
	const struct sink_text_ops *text;	/* NULL: records one by one */
};

struct sink {
	const struct sink_ops *ops;
	struct sink *inner;		/* a wrapper's (the queue's) sink */
	/* text->write(): the largest write the sink takes whole or not at all
	 * (PIPE_BUF into a pipe), so that a line counts delivered only once it
	 * is all out; 0: any size. */
	size_t atomic_write;
};

int sink_stdout_new(struct sink **ret, FILE *out);
int sink_journal_new(struct sink **ret);
/* journal_reach.c: whether the journal's socket takes entries (0 or
 * -errno); journal_reached() records the outcome of a try, saying on stderr
 * when it changes; journal_unreachable() is that outcome (any thread). The
 * journal sink's messages go to stderr while it fails. */
int journal_probe(void);
void journal_reached(int r);
int journal_unreachable(void);
/* Output=store: raw records into cfg's [Store] directory (docs/STORE.md).
 * Fails with -EBUSY if another process writes into it; d says why.
 * window > 0: the recorder's window of that many bytes instead, on disk
 * only in snapshots (store_writer_opts.window). */
struct store_writer;
int sink_store_new(struct sink **ret, const struct config *cfg, uint64_t window, struct diag *d);
/* Its writer; NULL: not a store sink. */
struct store_writer *sink_store_writer(struct sink *s);
/* Output=recorder: the window of cfg's [Recorder] (a store sink's) and its
 * snapshots, into [Store] Directory=; reports a torn snapshot a crash left
 * there. */
int sink_recorder_new(struct sink **ret, const struct config *cfg, struct diag *d);
/* n triggers (a selection's records, SIGUSR1, onmax().snapshot()'s requests
 * since the last poll): the first takes a snapshot of the window, named
 * after reason (a selection's name, "signal", "request"), unless it comes
 * inside [Recorder] MinIntervalSec= of the last one or while one is taken;
 * every one that takes none is counted (-EBUSY). Not a recorder: -ENOENT. */
int sink_recorder_snapshot(struct sink *s, const char *reason, uint64_t n);
/* The route's recorder's (-ENOENT: none is configured). */
int sink_route_snapshot(struct sink *route, const char *reason, uint64_t n);
/* What the recorder did since start (GET /metrics); -ENOENT: not one, or
 * the route has none. */
struct recorder_stats {
	uint64_t records, overwritten;	/* into the window, and dropped from it */
	uint64_t bytes;			/* the window holds now */
	uint64_t snapshots, failed;	/* written whole; that could not be */
	uint64_t skipped;		/* triggers that took none (MinIntervalSec=, busy) */
	uint64_t deleted;		/* old snapshots deleted (MaxSnapshots=) */
};
int sink_recorder_stats(struct sink *s, struct recorder_stats *out);
int sink_route_recorder_stats(struct sink *route, struct recorder_stats *out);
/* Each selection's records to its Output= (or [Daemon] Output=), each sink
 * made when first needed; messages to [Daemon] Output=. */
int sink_route_new(struct sink **ret, const struct config *cfg, struct diag *d);
/* A reload's outputs, in two steps around the selections' own: prepare
 * makes every output the new config names that is not running yet, and a
 * new store if [Store] changed, and changes nothing (an output that cannot
 * be made fails it); commit swaps them in (the replaced store writes out
 * all it was given, then closes), abort drops them. Not a route (the
 * --foreground sink): nothing to do. */
/* The outputs a record may go to: journal, stdout, store (enum output). */
#define N_OUTPUTS OUTPUT_DAEMON

struct route_update {
	struct sink *out[N_OUTPUTS];	/* made for the new config */
	bool store_changed;
	enum output def;
	struct config cfg;		/* the new store's settings */
};
int sink_route_prepare(struct sink *s, const struct config *cfg, struct route_update *u,
		       struct diag *d);
void sink_route_commit(struct sink *s, struct route_update *u);
void sink_route_abort(struct route_update *u);
/* Wraps inner (taking it) behind a bounded queue and a writer thread, so a
 * stalled sink never blocks the ring-buffer consumer; see sink_queue.c. */
int sink_queue_new(struct sink **ret, struct sink *inner, size_t max_entries);
/* Puts *s behind a queue of TRACERD_QUEUE_ENTRIES (default 65536) records. */
int sink_queue_wrap(struct sink **s);
void journal_field_name(const char *field, char *out, size_t size);
/* The journal name of each of e's fields as the journal sink writes it, by
 * field index (NULL for common fields); the _RAW twin is NAME_RAW. Free with
 * strv_free(*ret, e->n_fields). */
int journal_event_field_names(const struct tp_event *e, char ***ret);
/* A syscall's user string argument whose journal name is name
 * ("TRACE_FILENAME"), as fields: name_STR= the bytes read, name_STR_CUT=1
 * when they filled the buffer; or name_STR_UNREADABLE= the errno's name
 * (EFAULT) when it could not be read. kv gets each key and value. */
typedef void (*journal_kv_fn)(void *ctx, const char *key, const char *value, size_t n);
/* TRACE_CGROUP_ID=, and when c (may be NULL) knows its path TRACE_CGROUP=, TRACE_UNIT=,
 * TRACE_SLICE=, TRACE_USER_UNIT= (those the path has). */
void journal_cgroup_fields(uint64_t id, const struct cgroup_info *c, journal_kv_fn kv, void *ctx);
void journal_user_string(const char *name, const struct render_ustr *u, journal_kv_fn kv,
			 void *ctx);

static inline int sink_emit(struct sink *s, const struct out_record *r) { return s->ops->emit(s, r); }
static inline void sink_flush(struct sink *s) { if (s->ops->flush) s->ops->flush(s); }
static inline void sink_lost(struct sink *s, unsigned cpu, uint64_t ts_ns, uint64_t n)
{
	if (s && s->ops->lost)
		s->ops->lost(s, cpu, ts_ns, n);
}
static inline void sink_close(struct sink *s) { if (s && s->ops->close) s->ops->close(s); }
static inline void sink_free(struct sink *s) { if (s) s->ops->free(s); }
/* Whether the innermost sink's output is closed for good. */
static inline bool sink_gone(struct sink *s)
{
	while (s && s->inner)
		s = s->inner;
	return s && s->ops->text && s->ops->text->gone && s->ops->text->gone(s);
}
int sink_message(struct sink *s, int priority, const char *const *fields, size_t n_fields,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
