/* SPDX-License-Identifier: GPL-2.0 */
/* The store writer's insides, shared by the block builder (store_write.c,
 * the caller's thread) and the file writer (store_file.c, its own thread). */
#ifndef TRACERD_STORE_PRIV_H
#define TRACERD_STORE_PRIV_H

#include <pthread.h>
#include "store/store.h"
#include "store/store_codec.h"
#include "store/store_cpus.h"
#include "store/store_ksyms.h"

#define STORE_BLOCKS		4		/* one being filled, the rest queued for disk */
#define STORE_BLOCK_TARGET	(1u << 20)	/* raw bytes that seal a block */
#define STORE_TASK_HASH		1024

/* A registered event, as the EVENTS chunk describes it. Immutable once
 * published, apart from described_gen, which only the file thread uses. */
struct store_evinfo {
	unsigned id;
	char *system, *name, *class_name, *selection, *format;
	int priority;
	struct tp_enum *enums;
	size_t n_enums;
	void *owner;
	uint64_t described_gen;		/* the file it was last described in */
};

struct store_task {
	uint32_t gen, idx, pid, tid;
	char comm[TRACERD_COMM_LEN];
	uint64_t cgroup_id;
};

struct store_count {
	unsigned id;
	uint32_t n;
};

struct store_block {
	struct bbuf col[STORE_N_COLUMNS];
	uint32_t n, gen, n_tasks;
	uint64_t ts_first, ts_min, ts_max, prev_ts, opened_usec;
	size_t raw;
	uint32_t *slot_of;		/* event id -> index in counts + 1, this block */
	size_t cap_slot_of;
	struct store_count *counts;
	size_t n_counts, cap_counts;
	struct store_task tasks[STORE_TASK_HASH];
	struct bbuf kaddrs;		/* kernel stack frames (__u64), for KSYMS */
	uint64_t *cgroups;		/* this block's, in CGROUPS order */
	size_t n_cgroups, cap_cgroups;
	struct cpu_counts cpus;		/* its records per CPU */
	uint64_t lost;			/* the ring buffer's losses marked in it */
};

/* The recorder's window (store_window.c): sealed blocks, compressed, as
 * the chunks a file would hold; shared with snapshots by reference. */
struct store_wblock {
	unsigned refs;			/* atomic */
	uint32_t gen;			/* its store_block's */
	uint64_t first_record;		/* the records the window was given before it */
	uint64_t lost;
	struct store_chunk_hdr h;	/* sealed: written as is */
	uint8_t *payload;		/* h.disk_len bytes */
	unsigned *events;		/* the event ids of its records */
	size_t n_events;
	uint64_t *kaddrs;		/* kernel frames, for KSYMS */
	size_t n_kaddrs;
};

struct store_snap;

struct store_window {
	struct store_wblock **b;	/* oldest first */
	size_t n, cap;
	uint64_t bytes;			/* of Size= (opts.window) */
	uint64_t records;		/* given to the window, in all */
	uint64_t overwritten, overwritten_lost;	/* records and losses of dropped blocks */
	struct store_snap *snap;	/* a snapshot taking blocks, or NULL */
	uint32_t done_gen;		/* the last block the file thread is done with */
	char stream[17];		/* the numbering's id, random */
};

/* A snapshot being written (store_snapshot.c): the window's blocks at its
 * start, then each one the file thread adds up to the end's. */
struct store_snap {
	struct store_writer *w;
	pthread_t thread;
	char *dir, *tmp, *final, *reason;
	struct store_wblock **b;	/* under w->lock */
	size_t n, cap;
	uint32_t last_gen;		/* with ending: the last block it takes */
	bool ending, complete, finished;
	uint32_t max_gen;		/* of the blocks it has */
	bool any;
	struct store_snapshot_info info;	/* the thread's until finished */
};

struct store_writer {
	struct store_writer_opts o;
	char *dir;
	struct store_dir *sdir;		/* its lock, and its stream's record count */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_started, stopping, busy;
	bool sync_asked;		/* store_writer_sync() waits for a store_file_sync() */

	struct store_block blocks[STORE_BLOCKS];
	unsigned head, n_sealed;	/* blocks[head..] wait for the file thread, in order */
	struct store_block *open;	/* the caller's, or NULL */
	uint32_t gen;

	struct store_evinfo **ev;	/* by id; the array moves under lock */
	size_t n_ev, cap_ev;
	struct bbuf *prev;		/* caller's: previous record of each event */
	uint32_t *prev_gen;		/* the block prev[] belongs to */
	size_t cap_prev;
	/* The caller's: frames already in the open block's kaddrs, by hash. */
	uint64_t kseen[1024];
	uint32_t kseen_gen[1024];

	struct store_writer_stats stats;	/* under lock */

	/* The file thread's. */
	int fd;
	uint64_t file_size, file_opened_usec, file_gen;
	uint64_t synced_usec;		/* when the file was last made durable */
	bool unsynced, dir_unsynced;	/* blocks, or a new or deleted file, not yet */
	unsigned file_seq;
	struct store_compressor *comp;
	struct bbuf payload, out;
	struct ksym_set ksyms;		/* frames the file describes, by file_gen */

	struct store_window win;	/* opts.window: the recorder's */
};

/* store_lock.c: the directory's lock, shared by the writers of one
 * process; -EBUSY if another process holds it. */
struct store_dir;
int store_dir_lock(const char *path, struct store_dir **ret);
void store_dir_unlock(struct store_dir *d);
/* The stream's id and the records put into its files so far, in all and
 * per CPU (as first_record_cpus= says them). */
void store_dir_stream(struct store_dir *d, char stream[17], uint64_t *records, struct strbuf *cpus);
/* A block's n records, cpus of them per CPU, are in the stream's files. */
void store_dir_add_records(struct store_dir *d, uint64_t n, const struct cpu_counts *cpus);
/* store_tail.c: where the stream of the store file path ends: its id
 * (NULL: the file has none), the records of its files up to the end of
 * this one, in all and per CPU (as far as the file says them: a reader
 * checks them). -errno. */
int store_stream_end(const char *path, char **stream, uint64_t *records, struct cpu_counts *cpus);

/* store_file.c, on the file thread. */
/* A chunk, whole or not at all (a short write is cut back off), at *size. */
int store_chunk_write(int fd, uint64_t *size, struct store_chunk_hdr *h, const void *payload);
/* A FILE chunk; cpus: first_record_cpus= (NULL: none); extra: more lines. */
int store_file_chunk_write(int fd, uint64_t *size, enum store_codec codec, const char *stream,
			   uint64_t first, const char *cpus, const char *extra);
/* An event's description in an EVENTS payload. */
void store_describe(struct bbuf *p, const struct store_evinfo *ev);
/* b's columns into w->payload, compressed into w->out. */
int store_file_pack(struct store_writer *w, const struct store_block *b);
/* The done() calls for b's records: written (err 0) or lost (-errno). */
void store_file_done(struct store_writer *w, const struct store_block *b, int err);
int store_file_write_block(struct store_writer *w, struct store_block *b);
void store_file_close(struct store_writer *w);
/* Makes what was written durable: fdatasync, and the directory's fsync
 * after a file was made or deleted. */
void store_file_sync(struct store_writer *w);
/* When the file thread must call store_file_sync() (CLOCK_MONOTONIC µs); 0: no need. */
uint64_t store_file_sync_due(const struct store_writer *w);

/* store_window.c: on the file thread, b compressed into the window, the
 * oldest blocks dropped past opts.window, and taken by a snapshot that
 * wants it. */
int store_window_add(struct store_writer *w, struct store_block *b);
struct store_wblock *store_wblock_ref(struct store_wblock *b);
void store_wblock_unref(struct store_wblock *b);
/* Under w->lock: a snapshot takes b (a reference); complete once it has
 * its last. */
int store_snap_take(struct store_snap *s, struct store_wblock *b);
void store_window_free(struct store_window *win);
/* store_snapshot.c: a snapshot's start and end, after the open block was
 * sealed (store_writer_flush()); its end, once the writer stops. */
int store_snap_start(struct store_writer *w, const char *reason);
void store_snap_end(struct store_writer *w);
void store_snapshot_free(struct store_writer *w);

#endif
