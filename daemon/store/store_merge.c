// SPDX-License-Identifier: GPL-2.0
/* The store reader: files and directories, merged into one stream in time
 * order. A file is opened when the merge reaches the time its first block
 * begins (read from the chunk headers alone), so that a directory of many
 * rotated files holds one decoded block per file that overlaps in time,
 * not one per file. Timestamps of different boots compare by wall clock. */
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include "store/store_read_priv.h"
#include "util.h"

static bool is_store_name(const char *n)
{
	size_t l = strlen(n), s = strlen(STORE_SUFFIX);

	return l > s && !strcmp(n + l - s, STORE_SUFFIX);
}

static bool known(const struct store_reader *r, const char *path)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->c[i]->path, path))
			return true;
	return false;
}

static int add_file(struct store_reader *r, const char *path, const char *dir)
{
	struct store_cursor *c;
	int k;

	if (known(r, path))
		return 0;
	k = cursor_open(r, path, dir, &c);
	if (k == -ENOENT && dir)	/* deleted by MaxUse= since the listing: never seen */
		return k;
	if (k < 0) {
		fprintf(stderr, "tracerd: %s: %s\n", path, strerror(-k));
		return k;
	}
	c->later = r->started;
	if (GROW(r->c, r->cap, r->n) < 0) {
		cursor_free(c);
		return -ENOMEM;
	}
	r->c[r->n++] = c;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the store files of dir not yet known, in name (creation) order. */
static int scan_dir(struct store_reader *r, const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int k = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (is_store_name(de->d_name) && GROW(names, cap, n) == 0 &&
		    asprintf(&names[n], "%s/%s", dir, de->d_name) >= 0)
			n++;
	closedir(d);
	qsort_safe(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && k >= 0; i++) {
		k = add_file(r, names[i], dir);
		if (k == -ENOENT)
			k = 0;
	}
	strv_free(names, n);
	return k < 0 ? k : 0;
}

/* A record's time for comparing across files: the monotonic clock within a
 * boot, else the wall clock. */
static bool before(const struct store_cursor *a, const struct drec *x, const struct store_cursor *b,
		   const struct drec *y)
{
	if (a->info.boot_id && b->info.boot_id && !strcmp(a->info.boot_id, b->info.boot_id))
		return x->hdr.ts_ns < y->hdr.ts_ns;
	return (int64_t)x->hdr.ts_ns + a->info.realtime_offset_ns <
	       (int64_t)y->hdr.ts_ns + b->info.realtime_offset_ns;
}

int store_reader_new(struct store_reader **ret, char *const *paths, size_t n,
		     const struct store_reader_opts *o)
{
	struct store_reader *r = calloc(1, sizeof(*r));
	int k = 0;

	if (!r || cgroup_map_new(&r->cgroups) < 0) {
		free(r);
		return -ENOMEM;
	}
	r->o = *o;
	for (size_t i = 0; i < n && k >= 0; i++) {
		struct stat st;

		if (stat(paths[i], &st) < 0) {
			k = -errno;
			fprintf(stderr, "tracerd: %s: %s\n", paths[i], strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			k = GROW(r->dirs, r->cap_dirs, r->n_dirs);
			if (k >= 0 && !(r->dirs[r->n_dirs] = strdup(paths[i])))
				k = -ENOMEM;
			if (k >= 0)
				k = scan_dir(r, r->dirs[r->n_dirs++]);
		} else
			k = add_file(r, paths[i], NULL);
	}
	if (k < 0) {
		store_reader_free(r);
		return k;
	}
	*ret = r;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct store_cursor *x = *(struct store_cursor *const *)a, *y = *(struct store_cursor *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Orders the files not yet opened, c[n_active..n), by their start. */
static void order_pending(struct store_reader *r)
{
	for (size_t i = r->n_active; i < r->n; i++)
		if (!r->c[i]->have_info && !r->c[i]->done && cursor_peek(r->c[i]) == -ENOENT) {
			/* Gone before it was seen: the file before it counts its records. */
			r->c[i]->gone = r->c[i]->gap_reported = true;
			cursor_end(r->c[i]);
		}
	if (r->n > r->n_active)	/* r->c is NULL before the first file */
		qsort_safe(r->c + r->n_active, r->n - r->n_active, sizeof(*r->c), cmp_start);
}

/* Reads c's next block: a deleted file ends with its gap reported, one at
 * its end waits for the next poll (follow), or ends if superseded. A file
 * that ends has its gap reported then too: before the next file's records,
 * where its marks go. */
static void fill(struct store_reader *r, struct store_cursor *c, int *err)
{
	int k = cursor_fill(c);

	if (k == 0 && c->done)
		report_gaps(r, false);
	else if (k == -ENOENT) {
		c->gone = true;
		cursor_end(c);
		report_gaps(r, false);
	} else if (k < 0) {
		fprintf(stderr, "tracerd: %s: %s\n", c->path, strerror(-k));
		c->done = true;
		*err = k;
	} else if (k == 0 && r->o.follow) {
		if (superseded(r, c)) {
			cursor_end(c);
			report_gaps(r, false);
		} else
			c->idle = true;
	}
}

/* The active file whose next record comes first; fills files whose block
 * ran out. */
static struct store_cursor *earliest(struct store_reader *r, int *err)
{
	struct store_cursor *best = NULL;

	for (size_t i = 0; i < r->n_active; i++) {
		struct store_cursor *c = r->c[i];

		if (!cursor_head(c) && !c->done && !c->idle)
			fill(r, c, err);
		if (cursor_head(c) && (!best || before(c, cursor_head(c), best, cursor_head(best))))
			best = c;
	}
	return best;
}

static int64_t wall(const struct store_cursor *c)
{
	return (int64_t)cursor_head(c)->hdr.ts_ns + c->info.realtime_offset_ns;
}

static void follow_wait(struct store_reader *r)
{
	struct timespec t = { 0, 200 * 1000 * 1000 };

	if (r->o.idle)
		r->o.idle(r->o.userdata);
	nanosleep(&t, NULL);
	for (size_t i = 0; i < r->n_dirs; i++)
		(void)scan_dir(r, r->dirs[i]);
	order_pending(r);
	for (size_t i = 0; i < r->n; i++)
		r->c[i]->idle = false;
	report_gaps(r, false);
}

/* At the end of a read that is not a follow: a file deleted before it was
 * read to its end needs the next file of its stream to count what it held,
 * which its writer may have made after the directory was listed (a writer
 * that restarted, rotated and deleted while the reader was behind). Such
 * files are looked at for their numbering only, not read. */
static void number_later_files(struct store_reader *r)
{
	size_t known = r->n;
	bool need = false;

	for (size_t i = 0; i < r->n; i++)
		need |= r->c[i]->gone && !r->c[i]->gap_reported && r->c[i]->dir;
	if (!need)
		return;
	for (size_t i = 0; i < r->n_dirs; i++)
		(void)scan_dir(r, r->dirs[i]);
	for (size_t i = known; i < r->n; i++) {
		r->c[i]->done = r->c[i]->gap_reported = r->c[i]->head_checked = true;
		cursor_end(r->c[i]);
	}
}

/* A mark of records deleted unread, if one waits: before every record of
 * the file it is at, which the reader has not read yet. */
static bool next_mark(struct store_reader *r, struct store_rec *rec)
{
	const struct unread_mark *m;

	if (r->next_mark == r->n_marks) {
		r->next_mark = r->n_marks = 0;
		return false;
	}
	m = &r->marks[r->next_mark++];
	*rec = (struct store_rec){
		.file = &m->at->info, .lost = m->n, .deleted = true,
		.hdr = { .cpu = m->cpu, .ts_ns = m->at->first_ts },
	};
	return true;
}

int store_reader_next(struct store_reader *r, struct store_rec *rec)
{
	int err = 0;

	if (!r->started) {
		order_pending(r);
		r->started = true;
	}
	for (;;) {
		struct store_cursor *best = earliest(r, &err);
		const struct drec *d;

		if (next_mark(r, rec))
			return 1;
		/* Open the files that begin before what the open ones have next. */
		if (r->n_active < r->n && (!best || r->c[r->n_active]->start_ns <= wall(best))) {
			r->c[r->n_active++]->active = true;
			continue;
		}
		if (!best) {
			if (!r->o.follow) {
				number_later_files(r);
				report_gaps(r, true);
				return next_mark(r, rec) ? 1 : err;
			}
			follow_wait(r);
			continue;
		}
		d = cursor_head(best);
		best->pos++;
		*rec = (struct store_rec){
			.file = &best->info, .lost = d->lost, .ev = d->ev, .hdr = d->hdr,
			.data = d->lost ? NULL : best->data.p + d->off, .len = d->len,
			.cgroup = d->lost ? NULL : cgroup_map_get(r->cgroups, d->hdr.cgroup_id),
		};
		return 1;
	}
}

uint64_t store_reader_skipped(const struct store_reader *r)
{
	return r->skipped;
}

uint64_t store_reader_unread(const struct store_reader *r, uint64_t *unknown)
{
	*unknown = r->unread_unknown;
	return r->unread;
}

void store_reader_free(struct store_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		cursor_free(r->c[i]);
	free(r->c);
	free(r->marks);
	strv_free(r->dirs, r->n_dirs);
	cgroup_map_free(r->cgroups);
	free(r);
}
