/* SPDX-License-Identifier: GPL-2.0 */
/* The event store: raw trace records, compressed into checksummed blocks in
 * append-only files that describe themselves (docs/STORE.md), written at
 * the rate the ring buffer delivers and read back into the same records. */
#ifndef TRACERD_STORE_H
#define TRACERD_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include "diag.h"
#include "strbuf.h"
#include "kernel-events/cgroup.h"
#include "kernel-events/events.h"
#include "store/store_format.h"
#include "tracerd_record.h"

struct store_writer_opts {
	const char *directory;
	uint64_t max_use;		/* bytes of *.tstore files in directory; 0: no limit */
	uint64_t max_file_size;		/* rotate past this; 0: no limit */
	uint64_t max_file_usec;		/* rotate a file this old; 0: never */
	uint64_t sync_usec;		/* fdatasync written blocks this soon; 0: at close */
	uint64_t flush_usec;		/* the longest a record waits in memory */
	enum store_codec codec;
	int level;			/* compression level; 0: the codec's fast default */
	/* Called from the writer thread once the records of one event in one
	 * block are on disk (err 0) or could not be written (-errno: lost). */
	void (*done)(void *owner, uint64_t n, int err, void *userdata);
	void *userdata;
	/* A kernel address's symbol as %pS prints it, for the KSYMS chunks of
	 * stack frames (file thread); false: none. NULL: frames undescribed. */
	bool (*ksym)(uint64_t addr, struct strbuf *out);
	/* The recorder (Output=recorder): > 0, sealed blocks stay in memory,
	 * compressed, at most this many bytes of them (the oldest dropped
	 * first, counted overwritten), and reach the disk only in snapshots,
	 * directories of their own under directory. */
	uint64_t window;
};

struct store_writer_stats {
	uint64_t written, lost;		/* records */
	uint64_t blocks, bytes;		/* on disk */
	uint64_t files_deleted, bytes_deleted;	/* by MaxUse= */
	int last_error;			/* -errno of the last failed write, 0 */
};

struct store_writer;

/* -EBUSY: another process writes into o->directory (store_dir_holder()). */
int store_writer_new(struct store_writer **ret, const struct store_writer_opts *o);
/* The pid that DIR/.lock names (the process writing into DIR, or the last
 * one), 0 if none. */
int store_dir_holder(const char *dir);
/* Registers an event as it is stored (format, enum values, selection);
 * returns its stream id for store_writer_append(). owner is passed to done(). */
int store_writer_add_event(struct store_writer *w, struct tp_event *e, const char *class_name,
			   const char *selection, int priority, void *owner);
/* Copies one record into the open block; blocks only when every block
 * buffer waits for the disk. */
int store_writer_append(struct store_writer *w, unsigned id, const struct trace_rec_hdr *h,
			const uint8_t *rec, size_t len);
/* n records were lost on cpu (the ring buffer's losses, noticed at ts_ns):
 * a mark in the open block, after the records appended so far. */
void store_writer_add_lost(struct store_writer *w, unsigned cpu, uint64_t ts_ns, uint64_t n);
/* Seals the open block if force, or if its first record waited flush_usec/2. */
void store_writer_flush(struct store_writer *w, bool force);
/* Writes everything out, makes it durable (fdatasync) and waits for it
 * (the done() calls included). */
void store_writer_sync(struct store_writer *w);
void store_writer_get_stats(struct store_writer *w, struct store_writer_stats *s);
/* Syncs, then frees. */
void store_writer_free(struct store_writer *w);

/* The recorder's window (opts.window). */
struct store_window_stats {
	uint64_t bytes, blocks;		/* held now */
	uint64_t records;		/* given to it in all */
	uint64_t overwritten;		/* records of the blocks dropped */
	uint64_t overwritten_lost;	/* the ring buffer's losses marked in those */
};
void store_window_get_stats(struct store_writer *w, struct store_window_stats *s);

struct store_snapshot_info {
	char *path;			/* its directory (where it would have been) */
	char *reason;
	uint64_t records, lost;		/* its records; the ring's losses marked in them */
	uint64_t overwritten;		/* records the window dropped before its first */
	uint64_t ts_first, ts_last;	/* ns, CLOCK_MONOTONIC; 0 with no record */
	int err;			/* -errno: not written, nothing left of it */
};
/* A snapshot of the window into directory/snapshot-DATE-REASON/: every
 * block up to the records appended so far, then those appended until
 * store_snapshot_end(), written by a thread of its own into a hidden
 * temporary directory (STORE_SNAPSHOT_TMP) renamed once it is whole and
 * synced. -EBUSY: one is being taken. reason: [A-Za-z0-9_.-] only. */
int store_snapshot_start(struct store_writer *w, const char *reason);
/* Its last records: those appended so far. */
void store_snapshot_end(struct store_writer *w);
/* 1: the snapshot is written, or failed (info->err), and info is its (free
 * with store_snapshot_info_free()); 0: none, or not yet. wait: until it is
 * (after store_snapshot_end()). */
int store_snapshot_poll(struct store_writer *w, bool wait, struct store_snapshot_info *info);
void store_snapshot_info_free(struct store_snapshot_info *i);
/* The name a snapshot's directory has until it is complete: this, then
 * its name ("snapshot-..."). One left at a start was torn by a crash. */
#define STORE_SNAPSHOT_TMP ".tmp-"
#define STORE_SNAPSHOT_PREFIX "snapshot-"

/* store_snapshots_keep.c: [Recorder] MaxSnapshots=. Whether name is a
 * snapshot directory's: snapshot-YYYYMMDD-HHMMSS.mmm-REASON, or such a name
 * with ".torn" at its end (one a crash cut, renamed at the next start). */
bool store_snapshot_name(const char *name);
/* The snapshot directories in dir past the newest keep, oldest first (by
 * name: by the time they were taken, torn ones among them), into *names
 * (*n of them; strv_free() them); nothing else in dir is one. current (a
 * name in dir, or NULL): the snapshot just written, counted among the keep
 * and never past them. keep 0: no limit, none. No dir: none. */
int store_snapshots_over(const char *dir, unsigned keep, const char *current, char ***names,
			 size_t *n);
/* Deletes dir/name, a snapshot directory, and the files in it; 0 or the
 * first -errno (what could not be deleted stays). -EINVAL: not a
 * snapshot's name. */
int store_snapshot_remove(const char *dir, const char *name);

/* CLOCK_MONOTONIC in µs. */
uint64_t store_now_usec(void);

/* Reading. */
struct store_file_info {
	char *path;
	char *kernel_release;
	char *boot_id;
	char *pointer_key_id;		/* the key its pointers are hashed with (ptrkey.h) */
	int64_t realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct store_ksyms *ksyms;	/* its kernel frames' symbols (KSYMS chunks) */
};
/* A kernel frame's symbol as the file's writer named it ("func+0xoff/0xsize";
 * "" none), NULL if the file does not say. */
const char *store_file_ksym(const struct store_file_info *f, uint64_t addr);

struct store_event {
	unsigned id;			/* file-local */
	struct tp_event *event;		/* rebuilt from the stored format */
	char *class_name;
	char *selection;
	int priority;
	void *userdata;			/* the reader's user's, per event */
	bool wanted;			/* want_event() said yes */
};

struct store_rec {
	const struct store_file_info *file;
	/* With want_lost, a record may be a loss mark instead: lost records
	 * (the ring buffer's) on hdr.cpu before hdr.ts_ns; ev and data NULL.
	 * deleted: records MaxUse= deleted before they were read instead,
	 * before the file's first record (store_reader_unread() counts them). */
	uint64_t lost;
	bool deleted;
	struct store_event *ev;
	struct trace_rec_hdr hdr;
	const uint8_t *data;
	size_t len;
	/* hdr.cgroup_id's path and names as the writer saw them; NULL: none
	 * (a file from before, or a cgroup gone before it was written) */
	const struct cgroup_info *cgroup;
};

struct store_reader_opts {
	bool follow;			/* at the end, wait for more */
	/* Called once per event as its description is read; false: its records
	 * are skipped. NULL: every event. */
	bool (*want_event)(struct store_event *ev, void *userdata);
	bool want_lost;			/* the loss marks too (store_rec.lost) */
	/* With follow: called before waiting for more (to flush output). */
	void (*idle)(void *userdata);
	void *userdata;
};

struct store_reader;
int store_reader_new(struct store_reader **ret, char *const *paths, size_t n,
		     const struct store_reader_opts *o);
/* 1: *rec is the next record in time order (valid until the next call);
 * 0: the end (never with follow); < 0: -errno. */
int store_reader_next(struct store_reader *r, struct store_rec *rec);
/* Torn or corrupt chunks reported and skipped so far. */
uint64_t store_reader_skipped(const struct store_reader *r);
/* Records of files deleted (MaxUse=) before they were read, each gap
 * reported on stderr; *unknown: such files whose count is not known. */
uint64_t store_reader_unread(const struct store_reader *r, uint64_t *unknown);
void store_reader_free(struct store_reader *r);

#endif
