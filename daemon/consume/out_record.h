/* SPDX-License-Identifier: GPL-2.0 */
/* What sinks get: a flat record, and its slot's output descriptor,
 * resolved once per slot. Sinks read these fields and nothing else of the
 * tracer (no selection state, no config). */
#ifndef TRACERD_OUT_RECORD_H
#define TRACERD_OUT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include "kernel-events/events.h"
#include "render/render.h"
#include "render/render_stack.h"
#include "tracerd_record.h"

/* Sink errors of one slot, by errno; the last bucket takes any other errno. */
#define TRACERD_SINK_ERRNOS 6
struct sink_errno_count {
	int err;			/* positive errno, 0: bucket unused; -1: other */
	uint64_t n;
};

/* A slot as sinks see it. The sink queue's writer thread counts delivered
 * and sink errors after the consumer handed a record over, so a queued
 * record holds a reference, and a reload that frees the slot cannot free
 * the counters under the writer. Events outlive every sink. */
struct out_slot {
	unsigned id;			/* the slot id: reused after a reload */
	const struct tp_event *event;
	char *selection;		/* the selection's name, "" for none */
	int priority;			/* syslog level; a reload may change it (atomic) */
	int output;			/* the selection's Output= (enum output); atomic too */
	int trigger;			/* its Trigger= (enum sel_trigger); atomic too */
	unsigned refs;
	uint64_t delivered;		/* atomic */
	uint64_t sink_errors;		/* and errnos: under a lock, see out_slot.c */
	struct sink_errno_count errnos[TRACERD_SINK_ERRNOS];
	/* Aggregate=: events of the dumped histogram entries whose stack key
	 * was cut at TRACERD_HIST_STACK_DEPTH (atomic). Here, beside what
	 * the sinks got: a reload keeps the slot's counts before its last
	 * dump. */
	uint64_t hist_stack_cut;
};

struct out_record {
	const struct out_slot *slot;
	int priority;			/* the slot's when the record was read */
	struct render_opts render;	/* the config's when it was read: text and
					 * fields of one record agree across a reload */
	const struct trace_rec_hdr *hdr;
	const uint8_t *rec;
	size_t len;			/* the record proper: without its stacks */
	struct rec_stacks stacks;	/* StackTrace=: the frames after it */
	const char *text;		/* what the kernel prints after "event_name: " */
	size_t text_len;
	int64_t realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
};

/* The record's bytes as the ring buffer held them, its stacks included,
 * and their user frames' text after them when the consumer resolved them
 * (TRACERD_REC_USTACK_TEXT: hdr is then the consumer's, its len the whole);
 * len is the record proper's. */
static inline size_t out_record_whole(const struct out_record *r)
{
	return r->hdr->flags & TRACERD_REC_STACKS && r->hdr->len > r->len ? r->hdr->len : r->len;
}

int out_slot_new(struct out_slot **ret, unsigned id, const struct tp_event *e,
		 const char *selection, int priority);
struct out_slot *out_slot_ref(const struct out_slot *s);
void out_slot_unref(const struct out_slot *s);
void out_slot_set_priority(struct out_slot *s, int priority);
int out_slot_priority(const struct out_slot *s);
void out_slot_set_output(struct out_slot *s, int output);
int out_slot_output(const struct out_slot *s);
void out_slot_set_trigger(struct out_slot *s, int trigger);
int out_slot_trigger(const struct out_slot *s);
/* Counting, from the consumer or the sink queue's writer thread. */
void out_slot_delivered(const struct out_slot *s, uint64_t n);
void out_slot_error(const struct out_slot *s, int err, uint64_t n);	/* err: negative errno */
/* A dump showed n events under a cut stack key (the main loop). */
void out_slot_hist_cut(const struct out_slot *s, uint64_t n);
uint64_t out_slot_hist_cuts(const struct out_slot *s);
/* Reads the counters consistently against the writer. */
void out_slot_counts(const struct out_slot *s, uint64_t *delivered, uint64_t *sink_errors,
		     struct sink_errno_count *errnos);
/* "EPIPE 3, ENOBUFS 10" */
void sink_errnos_format(const struct sink_errno_count *e, char *buf, size_t size);

#endif
