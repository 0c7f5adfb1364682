/* SPDX-License-Identifier: GPL-2.0 */
/* The ring-buffer consumer: reads records, checks each against its slot's
 * event, applies the selection's rate limit, renders the line (the one
 * place records become text) and hands a flat out_record to the output the
 * top level wired in: consume/ knows no sink. Every record ends up counted:
 * delivered, suppressed, a sink error (by errno), malformed, late (its
 * slot already detached), or rejected by Unit= (judged here: its cgroup
 * had no verdict in BPF yet). */
#ifndef TRACERD_CONSUMER_H
#define TRACERD_CONSUMER_H

#include "consume/out_record.h"
#include "consume/slots.h"
#include "strbuf.h"

struct ustack_syms;

#define CONSUMER_DRAIN_BUDGET 65536	/* records per drain before the loop runs again */
/* ...or this long: a drain's length is the loop's latency for signals, reload
 * and the watchdog, and a record's cost depends on the sink (a slow
 * consumer at 65536 records would block for seconds). */
#define CONSUMER_DRAIN_USEC 5000

/* 0: delivered; > 0: queued, the output counts it later; < 0: -errno. */
typedef int (*consumer_emit_fn)(void *out, const struct out_record *r);
/* The end of a drain. */
typedef void (*consumer_flush_fn)(void *out);

struct rb_reader;

/* Records counted by the consumer rather than per slot. */
struct record_counts {
	uint64_t malformed;		/* records that failed validation */
	uint64_t late;			/* records for a slot already detached */
	/* Delivered, but not whole: rendered with a marker where data is missing. */
	uint64_t short_records;		/* shorter than the event's fixed fields */
	uint64_t bad_dyn_records;	/* a __data_loc/__rel_loc past the record */
	uint64_t truncated_records;	/* cut at TRACERD_MAX_RECORD by the BPF side */
	/* User frames printed as bare addresses because their text did not
	 * fit the record (what the store takes) or memory ran out. */
	uint64_t ustack_unresolved;
};

struct consumer {
	struct rb_reader *rb;
	struct trace_slot *slots[TRACERD_MAX_EVENTS];
	consumer_emit_fn emit;
	consumer_flush_fn flush;
	void *out;
	struct record_counts counts;
	struct strbuf text;
	/* User frames, resolved as records are read (render/ustack_text.h):
	 * the symbolizer, and the record with its frames' text. */
	struct ustack_syms *ustack;
	struct strbuf wire;
	struct trace_rec_hdr wire_hdr;
	/* The header without the flags only the consumer reads
	 * (TRACERD_REC_NS_TGID, TRACERD_REC_UNIT_ASK). */
	struct trace_rec_hdr ns_hdr;
	/* Unit=: the tracer's verdict on a record BPF could not judge
	 * (TRACERD_REC_UNIT_ASK), by its slot's set of units and its cgroup;
	 * true: the cgroup is in the set. */
	bool (*unit_judge)(void *userdata, unsigned set, uint64_t cgroup_id);
	void *unit_userdata;
	int64_t realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	int daemon_output;		/* where Output=daemon selections go (enum output) */
	struct render_opts render;	/* RawPointers=: each record carries it */
	bool text_always;		/* --foreground: every record goes to stdout */
};

/* ring_fd < 0: no ring (records come through consumer_on_record). */
int consumer_new(struct consumer **ret, int ring_fd);
void consumer_free(struct consumer *c);
void consumer_set_output(struct consumer *c, consumer_emit_fn emit, consumer_flush_fn flush,
			 void *out);
/* [Daemon] Output=, for selections that do not name their own: records
 * bound for the store are not rendered (it keeps raw records). */
static inline void consumer_set_outputs(struct consumer *c, int daemon_output, bool text_always)
{
	c->daemon_output = daemon_output;
	c->text_always = text_always;
}
/* How records read from now on are rendered, by this thread and by a
 * sink's writer thread (the record carries it). */
static inline void consumer_set_render(struct consumer *c, const struct render_opts *o)
{
	c->render = *o;
}
/* Re-reads CLOCK_REALTIME - CLOCK_MONOTONIC, so that a clock step shows. */
void consumer_refresh_clock(struct consumer *c);
/* A free slot id, or -ENOSPC. */
int consumer_slot_alloc(const struct consumer *c);
static inline void consumer_slot_set(struct consumer *c, struct trace_slot *s) { c->slots[s->id] = s; }
static inline void consumer_slot_clear(struct consumer *c, unsigned id) { c->slots[id] = NULL; }
/* Drains up to CONSUMER_DRAIN_BUDGET records, or for CONSUMER_DRAIN_USEC,
 * then flushes the output; returns 1 if more may wait. */
int consumer_drain(struct consumer *c);
/* Drains until the ring is empty (once nothing is attached). */
void consumer_drain_all(struct consumer *c);
/* Drains the records written so far, not those written meanwhile: bounded
 * by the ring's size while events still fire (a reload). */
void consumer_drain_written(struct consumer *c);
/* The ring reader's callback: one record. */
int consumer_on_record(void *ctx, void *data, size_t size);

#endif
