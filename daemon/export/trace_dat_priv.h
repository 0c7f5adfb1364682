/* SPDX-License-Identifier: GPL-2.0 */
/* One CPU's ring-buffer pages as the kernel lays them out
 * (kernel/trace/ring_buffer.c; tracefs events/header_page, header_event):
 * a page is u64 time_stamp, long commit, data; each event a 4-byte header
 * of type_len (5 bits) and time delta (27 bits). */
#ifndef TRACERD_TRACE_DAT_PRIV_H
#define TRACERD_TRACE_DAT_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "tracerd_record.h"

#define TD_PAGE_SIZE		4096u
#define TD_PAGE_HDR		16u		/* time_stamp, commit */
#define TD_MAX_SMALL_DATA	112u		/* type_len 1..28: length / 4 */
#define TD_DELTA_BITS		27
#define TD_TYPE_TIME_EXTEND	30
#define TD_MISSED_EVENTS	(1ull << 31)	/* commit: events were lost before this page */
#define TD_MISSED_STORED	(1ull << 30)	/* ...and their count follows the data */

struct td_cpu {
	int fd;				/* the pages, in a temporary file */
	uint8_t page[TD_PAGE_SIZE];
	size_t used;			/* data bytes on the page */
	uint64_t page_ts, last_ts;
	uint64_t lost_pending;		/* for the next page */
	uint64_t lost_on_page;		/* this page's mark */
	uint64_t bytes;			/* pages written to fd */
	uint64_t reordered;
};

/* Appends one event; -E2BIG if no page can hold it. */
int td_cpu_append(struct td_cpu *c, uint64_t ts, const uint8_t *rec, size_t len, uint16_t id);
/* n events lost after the ones appended so far. */
int td_cpu_lost(struct td_cpu *c, uint64_t n);
/* Writes the page being filled out (and a page of nothing but a loss mark). */
int td_cpu_flush(struct td_cpu *c);

/* An event as it goes out. */
struct td_event {
	char *system, *name;
	char *stored;			/* the format as the store kept it: the key */
	char *format;			/* as written: enums resolved, the export's ID: */
	unsigned id;
};

struct td_symbol {
	uint64_t addr, size;
	char *name;
};

struct td_task {
	uint32_t pid;
	char comm[16];
};

struct trace_dat {
	char *path;
	int fd;
	struct td_event *events;
	size_t n_events, cap_events;
	void *tasks;			/* tsearch() tree of struct td_task */
	size_t n_tasks;
	struct td_cpu **cpus;
	size_t n_cpus, cap_cpus;
	struct td_symbol *syms;		/* kallsyms: the stacks' functions */
	size_t n_syms, cap_syms;
	uint64_t records, stacks, too_large, reordered, dropped;
};

/* trace_dat.c: a record of the export's event id on its CPU (records and
 * stack entries alike); a function for kallsyms. */
int td_add(struct trace_dat *t, unsigned id, const struct trace_rec_hdr *h, const uint8_t *rec, size_t len);
int td_add_symbol(struct trace_dat *t, uint64_t addr, uint64_t size, const char *name, size_t len);

/* trace_dat_file.c: the whole file, pages last. */
int td_file_write(struct trace_dat *t);

#endif
