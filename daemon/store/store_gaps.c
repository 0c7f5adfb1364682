// SPDX-License-Identifier: GPL-2.0
/* What MaxUse= deleted before the reader read it. A file says where its
 * records begin in its writer's numbering (FILE chunk: stream=,
 * first_record=), and the reader counts the records of the blocks it passed
 * in each file: the difference to the next file of the stream is what was
 * deleted unread, exactly, whether the reader saw those files or not. */
#include "store/store_read_priv.h"
#include "util.h"

/* Whether d comes after c in their writer's stream of files. */
static bool later_in_stream(const struct store_cursor *d, const struct store_cursor *c)
{
	return d != c && d->stream && c->stream && !strcmp(d->stream, c->stream) &&
	       (d->first_record > c->first_record ||
		(d->first_record == c->first_record && strcmp(d->path, c->path) > 0));
}

/* The next file of c's stream that the reader knows of, or NULL. */
static const struct store_cursor *successor(const struct store_reader *r,
					    const struct store_cursor *c)
{
	const struct store_cursor *next = NULL;

	for (size_t i = 0; i < r->n; i++)
		if (later_in_stream(r->c[i], c) && (!next || later_in_stream(next, r->c[i])))
			next = r->c[i];
	return next;
}

/* Whether a file of c's directory after it (or before it) has not said
 * yet where its records begin (its FILE chunk not read yet): it may be c's
 * next (or its previous) one. */
static bool unnumbered_beside(const struct store_reader *r, const struct store_cursor *c, bool after)
{
	for (size_t i = 0; c->dir && i < r->n; i++) {
		int k = strcmp(r->c[i]->path, c->path);

		if (r->c[i]->dir == c->dir && !r->c[i]->stream && !r->c[i]->done &&
		    (after ? k > 0 : k < 0))
			return true;
	}
	return false;
}

/* Whether c is the first file of its stream that the reader knows of. */
static bool first_known(const struct store_reader *r, const struct store_cursor *c)
{
	for (size_t i = 0; i < r->n; i++)
		if (later_in_stream(c, r->c[i]))
			return false;
	return true;
}

/* Where c's stream stood on cpu once the reader passed c's blocks (NULL:
 * the stream's start). */
static uint64_t passed_on(const struct store_cursor *c, size_t cpu)
{
	return c ? cpu_counts_get(&c->first_cpus, cpu) + cpu_counts_get(&c->passed_cpus, cpu) : 0;
}

/* With want_lost, the n records deleted unread between c (NULL: the
 * stream's start) and next as marks per CPU, before next's first record:
 * when both files say where they begin per CPU, every block passed in c
 * decoded, and the counts per CPU add up to n. Otherwise n is only
 * reported (stderr), not marked. */
static void mark_gap(struct store_reader *r, const struct store_cursor *c,
		     const struct store_cursor *next, uint64_t n)
{
	size_t n_cpus = next->first_cpus.n, at = r->n_marks;
	uint64_t sum = 0;

	if (!r->o.want_lost || !next->has_first_cpus ||
	    (c && (!c->has_first_cpus || c->passed_cpus_unknown)))
		return;
	for (size_t cpu = 0; cpu < STORE_MAX_CPUS; cpu++) {
		uint64_t base = passed_on(c, cpu), end = cpu_counts_get(&next->first_cpus, cpu);

		if (end < base)
			return;
		sum += end - base;
		if (cpu >= n_cpus && (!c || (cpu >= c->first_cpus.n && cpu >= c->passed_cpus.n)))
			break;
	}
	if (sum != n)
		return;
	for (size_t cpu = 0; cpu < n_cpus; cpu++) {
		uint64_t k = cpu_counts_get(&next->first_cpus, cpu) - passed_on(c, cpu);

		if (!k)
			continue;
		if (GROW(r->marks, r->cap_marks, r->n_marks) < 0) {
			r->n_marks = at;	/* all or none */
			return;
		}
		r->marks[r->n_marks++] = (struct unread_mark){ .cpu = cpu, .n = k, .at = next };
	}
}

/* A follower that was there before a writer's first file (its stream first
 * seen after the reader started) and first saw it at a file whose records
 * begin past 0: the files before that one were deleted before it looked
 * (a stall). Their names are not known; their records are, exactly. */
static void report_head(struct store_reader *r, struct store_cursor *c, bool final)
{
	if (c->head_checked || !c->stream || !c->later)
		return;
	if (!first_known(r, c)) {
		c->head_checked = true;
		return;
	}
	if (!final && unnumbered_beside(r, c, false))
		return;
	c->head_checked = true;
	if (!c->first_record)
		return;
	fprintf(stderr, "tracerd: %s: its writer's first files were deleted before they were read: "
		"%llu records not read, up to %s\n", c->dir, (unsigned long long)c->first_record,
		c->path);
	mark_gap(r, NULL, c, c->first_record);
	r->unread += c->first_record;
}

/* Once a file is over (read to its end, or deleted before that) and the
 * next file of its stream is known: the records between where the reader
 * stopped in it and the first record of that next file were deleted before
 * they were read (its own rest, and files deleted before the reader saw
 * them). At the end (final), a deleted file with no next one known is
 * reported as such: how many records it held is not known. */
void report_gaps(struct store_reader *r, bool final)
{
	for (size_t i = 0; i < r->n; i++) {
		struct store_cursor *c = r->c[i];
		const struct store_cursor *next;
		uint64_t n;

		report_head(r, c, final);
		if (!c->done || c->gap_reported || (!c->stream && !c->gone))
			continue;
		next = c->stream ? successor(r, c) : NULL;
		if (!final && (!next || unnumbered_beside(r, c, true)))
			continue;
		c->gap_reported = true;
		if (!next) {
			if (!c->gone)
				continue;
			fprintf(stderr, "tracerd: %s: deleted before it was read to its end; how many "
				"records it held is not known (no later file of its writer)\n", c->path);
			r->unread_unknown++;
			continue;
		}
		n = next->first_record - c->first_record;
		n = n > c->passed ? n - c->passed : 0;
		if (n && c->gone)
			fprintf(stderr, "tracerd: %s: deleted before it was read%s: %llu records not "
				"read, up to %s\n", c->path, c->passed ? " to its end" : "",
				(unsigned long long)n, next->path);
		else if (n)
			fprintf(stderr, "tracerd: %s: the files after it were deleted before they were "
				"read: %llu records not read, up to %s\n", c->path,
				(unsigned long long)n, next->path);
		if (n)
			mark_gap(r, c, next, n);
		r->unread += n;
	}
}

/* Whether the writer has moved on from c's file to a later one in the same
 * directory (names sort in creation order): then c's end is its end. */
bool superseded(const struct store_reader *r, const struct store_cursor *c)
{
	for (size_t i = 0; c->dir && i < r->n; i++)
		if (r->c[i]->dir == c->dir && strcmp(r->c[i]->path, c->path) > 0)
			return true;
	return false;
}
