// SPDX-License-Identifier: GPL-2.0
/* A snapshot of the recorder's window: its blocks at the trigger, then
 * those sealed until its end (KeepAfterSec=), written as a store file
 * (docs/STORE.md) into a directory of its own, by a thread of its own, so
 * that the ring buffer is drained meanwhile. The blocks go out as the
 * window holds them, compressed; each is preceded by the descriptions of
 * its events and the symbols of its kernel frames that the file has not
 * had yet. The directory is written under a hidden temporary name, synced,
 * and renamed: a snapshot directory is whole, and a temporary one left
 * behind was torn by a crash. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include "store/store_priv.h"
#include "util.h"

/* One snapshot file being written: the thread's. */
struct snap_file {
	int fd;
	uint64_t size;
	struct store_compressor *comp;
	bool *described;		/* by event id */
	size_t n_described;
	struct ksym_set ksyms;
	struct bbuf p, out;
	struct strbuf sym;
};

static void stream_id(char out[17])
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = store_now_usec() ^ ((uint64_t)getpid() << 32);
	snprintf(out, 17, "%016llx", (unsigned long long)v);
}

static int snap_open(struct store_snap *s, struct snap_file *f)
{
	char name[64], stream[17], extra[300];
	struct timespec now;
	_cleanup_free_ char *path = NULL;
	int r;

	/* [Store] Directory= is made by the first snapshot, not at start. */
	if ((mkdir(s->dir, 0750) < 0 && errno != EEXIST) || mkdir(s->tmp, 0750) < 0)
		return -errno;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(name, sizeof(name), "tracerd-%016llx-0000%s",
		 (unsigned long long)now.tv_sec * 1000000ULL + now.tv_nsec / 1000, STORE_SUFFIX);
	if (asprintf(&path, "%s/%s", s->tmp, name) < 0)
		return -ENOMEM;
	f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (f->fd < 0)
		return -errno;
	r = store_compressor_new(&f->comp, s->w->o.codec, s->w->o.level);
	if (r < 0)
		return r;
	stream_id(stream);
	snprintf(extra, sizeof(extra), "snapshot=%s\n", s->reason);
	return store_file_chunk_write(f->fd, &f->size, s->w->o.codec, stream,
				      s->info.overwritten, NULL, extra);
}

/* A chunk of p's bytes, compressed by the file's codec. */
static int put_chunk(struct store_snap *s, struct snap_file *f, uint8_t type, uint32_t n)
{
	struct store_chunk_hdr h = { .type = type, .codec = s->w->o.codec, .n_records = n };
	int r = f->p.oom ? -ENOMEM : store_compress(f->comp, f->p.p, f->p.len, &f->out);

	if (r < 0)
		return r;
	h.raw_len = f->p.len;
	h.disk_len = f->out.len;
	return store_chunk_write(f->fd, &f->size, &h, f->out.p);
}

/* An EVENTS chunk for b's events that the file has not described. */
static int put_events(struct store_snap *s, struct snap_file *f, const struct store_wblock *b)
{
	uint32_t n = 0;

	f->p.len = 0;
	for (size_t i = 0; i < b->n_events; i++) {
		unsigned id = b->events[i];

		if (GROW_TO(f->described, f->n_described, id) < 0)
			return -ENOMEM;
		if (f->described[id])
			continue;
		pthread_mutex_lock(&s->w->lock);
		store_describe(&f->p, s->w->ev[id]);
		pthread_mutex_unlock(&s->w->lock);
		f->described[id] = true;
		n++;
	}
	return n ? put_chunk(s, f, STORE_CHUNK_EVENTS, n) : 0;
}

/* A KSYMS chunk for b's kernel frames that the file has not described. */
static int put_ksyms(struct store_snap *s, struct snap_file *f, const struct store_wblock *b)
{
	uint32_t n = 0;

	if (!s->w->o.ksym)
		return 0;
	f->p.len = 0;
	for (size_t i = 0; i < b->n_kaddrs; i++) {
		if (!ksym_set_add(&f->ksyms, b->kaddrs[i], 1))
			continue;
		sb_reset(&f->sym);
		if (!s->w->o.ksym(b->kaddrs[i], &f->sym))
			sb_reset(&f->sym);
		bbuf_varint(&f->p, b->kaddrs[i]);
		bbuf_string(&f->p, sb_str(&f->sym));
		n++;
	}
	return n ? put_chunk(s, f, STORE_CHUNK_KSYMS, n) : 0;
}

static int put_block(struct store_snap *s, struct snap_file *f, const struct store_wblock *b)
{
	struct store_chunk_hdr h = b->h;
	int r = put_events(s, f, b);

	if (r >= 0)
		r = put_ksyms(s, f, b);
	if (r >= 0)
		r = store_chunk_write(f->fd, &f->size, &h, b->payload);
	if (r < 0)
		return r;
	s->info.records += b->h.n_records;
	s->info.lost += b->lost;
	if (b->h.n_records && (!s->info.ts_first || b->h.ts_first < s->info.ts_first))
		s->info.ts_first = b->h.ts_first;
	if (b->h.n_records && b->h.ts_last > s->info.ts_last)
		s->info.ts_last = b->h.ts_last;
	return 0;
}

/* A snapshot that could not be written leaves nothing. */
static void remove_tmp(const struct store_snap *s)
{
	DIR *d = opendir(s->tmp);
	struct dirent *de;

	while (d && (de = readdir(d)))
		(void)unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	(void)rmdir(s->tmp);
}

static void snap_file_free(struct snap_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	store_compressor_free(f->comp);
	free(f->described);
	ksym_set_free(&f->ksyms);
	bbuf_free(&f->p);
	bbuf_free(&f->out);
	sb_free(&f->sym);
}

/* The file synced, the directory synced and renamed, its parent synced;
 * on an error, nothing left. */
static int snap_close(struct store_snap *s, struct snap_file *f, int r)
{
	_cleanup_close_ int d = -1, parent = -1;

	if (r >= 0 && fdatasync(f->fd) < 0)
		r = -errno;
	snap_file_free(f);
	if (r >= 0 && ((d = open(s->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fsync(d) < 0))
		r = -errno;
	if (r >= 0 && rename(s->tmp, s->final) < 0)
		r = -errno;
	if (r >= 0 && ((parent = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		       fsync(parent) < 0))
		r = -errno;
	if (r < 0)
		remove_tmp(s);
	return r;
}

/* The next block to write, NULL once the snapshot has its last. */
static struct store_wblock *next_block(struct store_snap *s, size_t *i)
{
	struct store_wblock *b = NULL;

	pthread_mutex_lock(&s->w->lock);
	while (*i == s->n && !s->complete)
		pthread_cond_wait(&s->w->cond, &s->w->lock);
	if (*i < s->n) {
		b = s->b[*i];
		s->b[(*i)++] = NULL;
	}
	pthread_mutex_unlock(&s->w->lock);
	return b;
}

static void *snap_thread(void *arg)
{
	struct store_snap *s = arg;
	struct snap_file f = { .fd = -1 };
	struct store_wblock *b;
	size_t i = 0;
	int r = snap_open(s, &f);

	while ((b = next_block(s, &i))) {
		if (r >= 0)
			r = put_block(s, &f, b);
		store_wblock_unref(b);
	}
	pthread_mutex_lock(&s->w->lock);
	if (r >= 0)
		r = s->info.err;	/* a block it could not take (the file thread's) */
	pthread_mutex_unlock(&s->w->lock);
	r = snap_close(s, &f, r);
	pthread_mutex_lock(&s->w->lock);
	s->info.err = r;
	s->finished = true;
	pthread_cond_broadcast(&s->w->cond);
	pthread_mutex_unlock(&s->w->lock);
	return NULL;
}

/* DIR/snapshot-DATE-REASON, and its temporary name beside it. */
static int snap_names(struct store_snap *s, const char *dir, const char *reason)
{
	struct timespec now;
	struct tm tm;
	char date[64];

	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
	s->dir = strdup(dir);
	s->reason = strdup(reason);
	if (!s->dir || !s->reason ||
	    asprintf(&s->final, "%s/" STORE_SNAPSHOT_PREFIX "%s.%03ld-%s", dir, date,
		     now.tv_nsec / 1000000, reason) < 0 ||
	    asprintf(&s->tmp, "%s/" STORE_SNAPSHOT_TMP STORE_SNAPSHOT_PREFIX "%s.%03ld-%s", dir,
		     date, now.tv_nsec / 1000000, reason) < 0) {
		s->final = s->tmp = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void snap_free(struct store_snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		store_wblock_unref(s->b[i]);
	free(s->b);
	free(s->dir);
	free(s->tmp);
	free(s->final);
	free(s->reason);
	store_snapshot_info_free(&s->info);
	free(s);
}

/* The window's blocks now, and the snapshot in it to take the next ones. */
static int snap_attach(struct store_writer *w, struct store_snap *s)
{
	int r = 0;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; r >= 0 && i < w->win.n; i++)
		r = store_snap_take(s, w->win.b[i]);
	s->info.overwritten = w->win.n ? w->win.b[0]->first_record : w->win.records;
	if (r >= 0)
		w->win.snap = s;
	pthread_mutex_unlock(&w->lock);
	return r;
}

int store_snap_start(struct store_writer *w, const char *reason)
{
	struct store_snap *s;
	sigset_t all, old;
	int r;

	if (!w->o.window)
		return -EINVAL;
	if (w->win.snap)
		return -EBUSY;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->w = w;
	r = snap_names(s, w->dir, reason);
	if (r >= 0)
		r = snap_attach(w, s);
	if (r < 0) {
		snap_free(s);
		return r;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&s->thread, NULL, snap_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		pthread_mutex_lock(&w->lock);
		w->win.snap = NULL;
		pthread_mutex_unlock(&w->lock);
		snap_free(s);
	}
	return r;
}

void store_snap_end(struct store_writer *w)
{
	struct store_snap *s = w->win.snap;

	if (!s || s->ending)
		return;
	pthread_mutex_lock(&w->lock);
	s->ending = true;
	/* The last block taken: the open one is empty (flushed), or none. */
	s->last_gen = w->open ? w->gen - 1 : w->gen;
	if ((int32_t)(w->win.done_gen - s->last_gen) >= 0)
		s->complete = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int store_snapshot_poll(struct store_writer *w, bool wait, struct store_snapshot_info *info)
{
	struct store_snap *s = w->win.snap;
	bool finished;

	if (!s)
		return 0;
	pthread_mutex_lock(&w->lock);
	while (wait && s->ending && !s->finished)
		pthread_cond_wait(&w->cond, &w->lock);
	finished = s->finished;
	if (finished)
		w->win.snap = NULL;
	pthread_mutex_unlock(&w->lock);
	if (!finished)
		return 0;
	pthread_join(s->thread, NULL);
	*info = s->info;
	info->path = TAKE_PTR(s->final);
	info->reason = TAKE_PTR(s->reason);
	s->info = (struct store_snapshot_info){ 0 };
	snap_free(s);
	return 1;
}

void store_snapshot_info_free(struct store_snapshot_info *i)
{
	free(i->path);
	free(i->reason);
	*i = (struct store_snapshot_info){ 0 };
}

void store_snapshot_free(struct store_writer *w)
{
	struct store_snapshot_info info;

	store_snap_end(w);
	if (store_snapshot_poll(w, true, &info) > 0)
		store_snapshot_info_free(&info);
}
