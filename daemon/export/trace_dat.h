/* SPDX-License-Identifier: GPL-2.0 */
/* Stored records written out as a trace-cmd trace.dat file, version 6, for
 * trace-cmd report and KernelShark: the kernel's own formats, and per-CPU
 * ring-buffer pages laid out as the kernel's ring buffer lays them out
 * (docs/STORE.md, "trace.dat"). Written from records alone: no tracefs, no
 * libtracecmd (whose writer probes the live tracefs). */
#ifndef TRACERD_TRACE_DAT_H
#define TRACERD_TRACE_DAT_H

#include <stddef.h>
#include <stdint.h>
#include "kernel-events/events.h"
#include "render/render_stack.h"
#include "tracerd_record.h"

struct trace_dat;

struct trace_dat_stats {
	uint64_t records;		/* written */
	uint64_t stacks;		/* kernel_stack and user_stack entries written */
	uint64_t too_large;		/* longer than a page holds: left out, marked dropped */
	uint64_t reordered;		/* earlier than their CPU's previous record: written at its time */
	uint64_t dropped;		/* marks written: the losses the records came with */
	unsigned cpus;
};

/* Opens path for writing (made or truncated); the per-CPU pages wait in
 * temporary files beside it until trace_dat_finish(). */
int trace_dat_new(struct trace_dat **ret, const char *path);
/* The export's id for e (its format goes out with it, once, however many
 * store files describe it). */
int trace_dat_add_event(struct trace_dat *t, struct tp_event *e, unsigned *ret_id);
/* Appends a record of the event trace_dat_add_event() numbered id; records
 * of one CPU come in time order. */
int trace_dat_add_record(struct trace_dat *t, unsigned id, const struct trace_rec_hdr *h,
			 const uint8_t *rec, size_t len);
/* trace_dat_stack.c: the stacks of the record just added (s from
 * rec_stacks_split()), as ftrace:kernel_stack and ftrace:user_stack entries
 * after it, their kernel functions into the file's kallsyms. */
int trace_dat_add_stacks(struct trace_dat *t, const struct trace_rec_hdr *h, const struct rec_stacks *s);
/* n records were lost on cpu after its last record so far: the next page
 * of that CPU says so (trace-cmd: "CPU:N [n EVENTS DROPPED]"). */
int trace_dat_add_lost(struct trace_dat *t, unsigned cpu, uint64_t n);
/* Writes the file: headers, formats, tasks, then the pages. */
int trace_dat_finish(struct trace_dat *t, struct trace_dat_stats *s);
void trace_dat_free(struct trace_dat *t);

#endif
