/* SPDX-License-Identifier: GPL-2.0 */
/* The store reader's insides: one cursor per file (store_read.c), merged
 * in time order across files (store_merge.c). */
#ifndef TRACERD_STORE_READ_PRIV_H
#define TRACERD_STORE_READ_PRIV_H

#include "store/store.h"
#include "store/store_codec.h"
#include "store/store_cpus.h"
#include "store/store_ksyms.h"

#define STORE_MAX_EVENT_ID	(1u << 20)

struct drec {
	struct trace_rec_hdr hdr;
	struct store_event *ev;		/* NULL: not wanted, or a loss mark */
	uint32_t off, len;		/* in the cursor's data arena */
	uint64_t lost;			/* a loss mark: records lost on hdr.cpu */
};

struct store_cursor {
	struct store_reader *r;
	char *path;
	const char *dir;		/* the reader's directory it is in, or NULL */
	int fd;				/* open only while read: a deleted file holds no disk */
	uint64_t off;			/* the next chunk */
	struct store_file_info info;
	struct store_ksyms ksyms;	/* info.ksyms */
	bool have_info, done, active;
	bool idle;			/* at its end for now (follow): not looked at until the next poll */
	bool gone, gap_reported;	/* deleted before it was read to its end */
	bool later;			/* found by a follower's poll, not at the start */
	bool head_checked;		/* whether its stream's files before it were deleted unread */
	/* The writer's numbering of the records in its files (FILE chunk), and
	 * the records of the blocks read so far: what a deletion took unread. */
	char *stream;
	uint64_t first_record, passed;
	/* The same per CPU (first_record_cpus=; a block that did not decode
	 * leaves those passed not known). */
	struct cpu_counts first_cpus, passed_cpus;
	bool has_first_cpus, passed_cpus_unknown;
	uint64_t first_ts;		/* the first block's ts_first, its own clock */
	struct store_event **ev;	/* by file-local id */
	size_t cap_ev;
	/* The decoded block, and the order of its records by time. */
	struct drec *recs;
	size_t n, cap, pos;
	uint32_t *order;		/* the wanted ones, n_kept */
	size_t n_kept;
	struct bbuf data, disk, raw;
	uint32_t *last_of, *last_gen;	/* by event id: this block's last record */
	size_t cap_last;
	uint32_t gen;
	int64_t start_ns;		/* the first block's time, for merging */
};

struct store_reader {
	struct store_reader_opts o;
	struct store_cursor **c;
	size_t n, cap;
	size_t n_active;		/* c[0..n_active) are open, sorted by start_ns */
	char **dirs;
	size_t n_dirs, cap_dirs;
	bool started;
	uint64_t skipped;
	uint64_t unread;		/* records of files deleted before they were read */
	uint64_t unread_unknown;	/* such files whose count cannot be known */
	/* With want_lost: marks of records deleted unread, per CPU, not yet
	 * returned; each before the first record of the file at. */
	struct unread_mark {
		unsigned cpu;
		uint64_t n;
		const struct store_cursor *at;
	} *marks;
	size_t n_marks, cap_marks, next_mark;
	struct cgroup_map *cgroups;	/* every cgroup id the blocks named, with its path */
};

/* Opens and closes the file again, having read its FILE chunk and the time
 * of its first block (c->start_ns, for merging); -ENOENT if it is gone. */
int cursor_open(struct store_reader *r, const char *path, const char *dir,
		struct store_cursor **ret);
/* 1: a block of records is ready at c->pos; 0: the end for now; -ENOENT:
 * the file was deleted; < 0: -errno. */
int cursor_fill(struct store_cursor *c);
/* (Again) the FILE chunk and the first block's time, if not known yet. */
int cursor_peek(struct store_cursor *c);
/* The file's buffers are freed: it is over. */
void cursor_end(struct store_cursor *c);
void cursor_free(struct store_cursor *c);
/* store_decode.c: c->raw, a BLOCK chunk's payload, into c->recs in time
 * order; -EBADMSG if it does not decode, -ENOENT if it names an event the
 * file does not describe (its description was lost). */
int decode_block(struct store_cursor *c, const struct store_chunk_hdr *h);
/* store_gaps.c: reports (stderr) and counts the records of files over
 * (c->done) that were deleted before they were read, once the next file of
 * their stream is known, and those of a stream's first files that a
 * follower never saw; final: also those whose count cannot be known. */
void report_gaps(struct store_reader *r, bool final);
/* Whether a later file of c's directory exists: its writer moved on. */
bool superseded(const struct store_reader *r, const struct store_cursor *c);
static inline const struct drec *cursor_head(const struct store_cursor *c)
{
	return c->pos < c->n_kept ? &c->recs[c->order[c->pos]] : NULL;
}

#endif
