/* SPDX-License-Identifier: GPL-2.0 */
/* The running tracer: the loaded class program, its maps, and one slot per
 * attached (selection, event) pair. A slot's index is the BPF cookie of its
 * attachment and the key of its descriptor and counters in the maps. */
#ifndef TRACERD_TRACER_H
#define TRACERD_TRACER_H

#include <stdint.h>
#include "config/config.h"
#include "kernel-events/events.h"
#include "strbuf.h"
#include "tracerd_record.h"
#include "aggregate/hist_map.h"

struct bpf_link;
struct rb_reader;
struct tracerd_bpf;
struct sink;

struct sel_state;

/* Sink errors of one slot, by errno; the last bucket takes any other errno. */
#define TRACERD_SINK_ERRNOS 6
struct sink_errno_count {
	int err;			/* positive errno, 0: bucket unused */
	uint64_t n;
};

struct trace_slot {
	unsigned id;
	struct tp_event *event;
	struct sel_state *sel;
	struct bpf_link *link;
	unsigned instance;		/* which copy of the class program, see tracer.c */
	/* The sink queue's writer thread counts delivered and sink errors
	 * after the main loop handed a record over: both are updated with
	 * atomics (delivered) or under a lock (errors, see consumer.c), and a
	 * queued record holds a reference so that a reload cannot free the
	 * counters under the writer. */
	unsigned refs;
	uint64_t delivered;		/* reached the sink */
	uint64_t suppressed;		/* dropped by the selection's rate limit */
	uint64_t sink_errors;
	struct sink_errno_count errnos[TRACERD_SINK_ERRNOS];
	/* Aggregate=: the slot's histogram, NULL when it has records; its
	 * desc.gen is the generation events go to (hist_map.c). */
	struct hist *hist;
	bool hist_done;			/* its last dump is out (stop, reload) */
};

struct sel_state {
	const struct selection *conf;	/* points into tracer->cfg */
	struct trace_slot **slots;
	size_t n_slots, cap_slots;
	char **refused;			/* glob-matched events the kernel refused */
	size_t n_refused, cap_refused;
	/* Rate limit: a token bucket in events. */
	double tokens;
	uint64_t last_refill_ns;
	uint64_t suppressed_unreported;
	uint64_t hist_due_usec;		/* the next AggregateIntervalSec= dump, 0: none */
	unsigned hist_interval_sec;	/* what hist_due_usec was set for */
};

/* Per selection (or slot) accounting: every record the program saw ends up
 * in exactly one of these. */
struct sel_totals {
	uint64_t hits, filtered, lost, truncated;	/* from BPF */
	uint64_t aggregated, agg_dropped;		/* Aggregate=, from BPF */
	uint64_t delivered, suppressed, sink_errors;	/* from the daemon */
	struct sink_errno_count errnos[TRACERD_SINK_ERRNOS];	/* sink_errors by errno */
};

/* The kernel lets one program attach to a tracepoint only once (EEXIST), so
 * an event that two selections share, or that a changed selection re-attaches
 * before its old attachment goes, uses another copy of the class program:
 * same code, same maps. Copies are loaded on demand and freed when unused. */
#define TRACERD_PROG_INSTANCES 8

struct tracer {
	struct config cfg;
	struct tracerd_bpf *skel;
	struct tracerd_bpf *extra[TRACERD_PROG_INSTANCES];	/* [0] unused: skel */
	unsigned extra_users[TRACERD_PROG_INSTANCES];
	struct rb_reader *rb;		/* daemon/ringbuf.c */
	struct tp_classes classes;
	struct tp_event **events;	/* loaded formats, shared by selections */
	size_t n_events, cap_events;
	char **available;		/* "sys:event" as tracefs lists them */
	size_t n_available;
	struct trace_slot *slots[TRACERD_MAX_EVENTS];
	struct sel_state **sels;
	size_t n_sels, cap_sels;
	struct sink *sink;
	struct hist_maps hist_maps;	/* Aggregate='s maps */
	bool hist_stdout;		/* dumps in the hist file layout on stdout */
	uint64_t malformed;		/* records that failed validation */
	uint64_t late;			/* records for a slot already detached */
	/* Delivered, but not whole: rendered with a marker where data is missing. */
	uint64_t short_records;		/* shorter than the event's fixed fields */
	uint64_t bad_dyn_records;	/* a __data_loc/__rel_loc past the record */
	uint64_t truncated_records;	/* cut at TRACERD_MAX_RECORD by the BPF side */
	uint64_t skipped_retired;	/* kernel skips of program copies since freed */
	struct strbuf text;
	int64_t realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	/* Called about once a second while attaching or detaching blocks the
	 * caller (detaching 1500 events takes a minute or more: the kernel waits
	 * for RCU grace periods, one event at a time), with how many of how many
	 * are done, so that the service manager hears that it progresses. */
	void (*busy)(void *userdata, size_t done, size_t total);
	void *busy_userdata;
	uint64_t busy_last_usec;
};

/* With cfg NULL, only tracefs and BTF are read: for inspection. Returns
 * -ENOMEDIUM if tracefs is not mounted (and cannot be), -EACCES if it may not
 * be read; no other failure returns these. */
int tracer_new(struct tracer **ret, const struct config *cfg, struct diag *d);
/* Resolves every selection and compiles its filters, attaching nothing. */
int tracer_check(struct tracer *t, const struct config *cfg, struct diag *d);
/* Applies cfg (taking ownership of it on success): attaches what is new or
 * changed before detaching what went away; unchanged selections keep their
 * attachments. On error nothing changes and d says why. */
int tracer_apply(struct tracer *t, struct config *cfg, struct diag *d);
void tracer_stop(struct tracer *t);
void tracer_free(struct tracer *t);
/* Drains up to TRACER_DRAIN_BUDGET records, or for TRACER_DRAIN_USEC;
 * returns 1 if more may wait. */
int tracer_drain(struct tracer *t);
/* Drains until the ring is empty (at stop, once nothing is attached). */
void tracer_drain_all(struct tracer *t);
void tracer_totals(struct tracer *t, const struct sel_state *s, struct sel_totals *tot);
void tracer_slot_totals(struct tracer *t, const struct trace_slot *slot, struct sel_totals *tot);
int tracer_prog_count(struct tracer *t);
/* Events the kernel did not run the program for (bpf_prog_info.recursion_misses,
 * summed over every copy): a BPF program already ran on that CPU. */
uint64_t tracer_skipped(struct tracer *t);

/* hist_out.c: Aggregate='s dumps. Interval dumps of the selections due at
 * now_usec (CLOCK_MONOTONIC); the last dump of a slot once it is detached
 * (why: "final" at stop, "replaced" on reload); then the hist is freed. */
void hist_out_tick(struct tracer *t, uint64_t now_usec);
void hist_out_last(struct tracer *t, struct trace_slot *slot, const char *why);
void hist_out_stop(struct tracer *t);

/* consumer.c: the ring buffer reader's callback */
#define TRACER_DRAIN_BUDGET 65536	/* records per drain before the loop runs again */
/* ...or this long: a drain's length is the loop's latency for signals, reload
 * and the watchdog, and a record's cost depends on the sink (a slow
 * consumer at 65536 records would block for seconds). */
#define TRACER_DRAIN_USEC 5000
int tracer_on_record(void *ctx, void *data, size_t size);
/* Counting that the sink queue's writer thread does too. */
struct trace_slot *trace_slot_ref(struct trace_slot *slot);
void trace_slot_unref(struct trace_slot *slot);
void trace_slot_delivered(struct trace_slot *slot);
void trace_slot_delivered_n(struct trace_slot *slot, uint64_t n);
void trace_slot_error(struct trace_slot *slot, int err);	/* err: negative errno */
void trace_slot_error_n(struct trace_slot *slot, int err, uint64_t n);
/* Adds slot's daemon-side counters to tot (thread-safe against the writer). */
void trace_slot_add_counts(const struct trace_slot *slot, struct sel_totals *tot);
/* "EPIPE 3, ENOBUFS 10" */
void sink_errnos_format(const struct sink_errno_count *e, char *buf, size_t size);

/* resolve.c */
int tracer_event(struct tracer *t, const char *sys_event, struct tp_event **ret);
int resolve_selection(struct tracer *t, const struct selection *s,
		      struct tp_event ***events, size_t *n, struct diag *d);
void suggest_events(struct tracer *t, const char *glob, char *buf, size_t size);

#endif
