// SPDX-License-Identifier: GPL-2.0
/* The store writer's file thread: compresses sealed blocks, writes each as
 * one chunk behind the descriptions of events new to the file, rotates by
 * size and age, and deletes the oldest files past MaxUse=. A chunk that
 * could not be written whole is cut off again, and its records count as
 * lost; the next block tries again, so writing resumes when space returns. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include "boot_id.h"
#include "ptrkey.h"
#include "store/store_priv.h"
#include "util.h"

static int64_t realtime_offset_ns(void)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return (r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

/* One chunk, whole or not at all: header and payload in one write; on a
 * short write the file is cut back to where the chunk began. */
int store_chunk_write(int fd, uint64_t *size, struct store_chunk_hdr *h, const void *payload)
{
	struct iovec iov[2] = { { h, sizeof(*h) }, { (void *)payload, h->disk_len } };
	size_t want = sizeof(*h) + h->disk_len;
	ssize_t n;

	store_chunk_seal(h, payload);
	n = writev(fd, iov, 2);
	if (n == (ssize_t)want) {
		*size += want;
		return 0;
	}
	int err = n < 0 ? -errno : -ENOSPC;
	if (n > 0)
		(void)!ftruncate(fd, *size);
	return err;
}

static int write_chunk(struct store_writer *w, struct store_chunk_hdr *h, const void *payload)
{
	return store_chunk_write(w->fd, &w->file_size, h, payload);
}

/* Writes payload, already compressed into out. */
static int write_compressed(struct store_writer *w, const struct bbuf *payload,
			    const struct bbuf *out, uint8_t type, uint32_t n_records,
			    uint64_t ts_first, uint64_t ts_last)
{
	struct store_chunk_hdr h = {
		.type = type, .codec = w->o.codec, .raw_len = payload->len, .disk_len = out->len,
		.n_records = n_records, .ts_first = ts_first, .ts_last = ts_last,
	};

	return write_chunk(w, &h, out->p);
}

int store_file_chunk_write(int fd, uint64_t *size, enum store_codec codec, const char *stream,
			   uint64_t first, const char *cpus, const char *extra)
{
	char boot[BOOT_ID_MAX], *text = NULL;
	struct utsname u;
	struct timespec now;
	struct store_chunk_hdr h = { .type = STORE_CHUNK_FILE, .codec = STORE_CODEC_NONE };
	int n, r;

	uname(&u);
	(void)boot_id_get(boot);
	clock_gettime(CLOCK_REALTIME, &now);
	n = asprintf(&text,
		     "version=%d\nwriter=tracerd %s\nkernel_release=%s\nmachine=%s\nboot_id=%s\n"
		     "pointer_key_id=%s\nclock=CLOCK_MONOTONIC\nrealtime_offset_ns=%lld\ncreated_realtime_ns=%lld\n"
		     "codec=%s\nstream=%s\nfirst_record=%llu\n%s%s%s%s",
		     STORE_VERSION, TRACERD_VERSION, u.release, u.machine, boot, ptrkey_in_use()->id,
		     (long long)realtime_offset_ns(),
		     (long long)now.tv_sec * 1000000000LL + now.tv_nsec, store_codec_name(codec),
		     stream, (unsigned long long)first, cpus ? "first_record_cpus=" : "",
		     cpus ? cpus : "", cpus ? "\n" : "", extra ? extra : "");
	if (n < 0)
		return -ENOMEM;
	h.raw_len = h.disk_len = n;
	r = store_chunk_write(fd, size, &h, text);
	free(text);
	return r;
}

static int write_file_chunk(struct store_writer *w)
{
	char stream[17];
	struct strbuf cpus = { 0 };
	uint64_t first;
	int r;

	store_dir_stream(w->sdir, stream, &first, &cpus);
	r = store_file_chunk_write(w->fd, &w->file_size, w->o.codec, stream, first,
				   cpus.oom ? NULL : sb_str(&cpus), NULL);
	sb_free(&cpus);
	return r;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Deletes the oldest files (by name: they sort by creation time) while
 * the directory and a full new file would hold more than MaxUse=, so that
 * the limit holds until the next rotation; never the file being written. */
static void enforce_max_use(struct store_writer *w, const char *current)
{
	DIR *d = opendir(w->dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (l <= strlen(STORE_SUFFIX) || strcmp(de->d_name + l - strlen(STORE_SUFFIX), STORE_SUFFIX) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		total += st.st_size;
		if (GROW(names, cap, n) == 0 && (names[n] = strdup(de->d_name)))
			n++;
	}
	qsort_safe(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n && total + w->o.max_file_size > w->o.max_use; i++) {
		struct stat st;

		if ((current && !strcmp(names[i], current)) ||
		    fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    unlinkat(dirfd(d), names[i], 0) < 0)
			continue;
		total -= st.st_size;
		pthread_mutex_lock(&w->lock);
		w->stats.files_deleted++;
		w->stats.bytes_deleted += st.st_size;
		pthread_mutex_unlock(&w->lock);
	}
	strv_free(names, n);
	closedir(d);
}

/* The store's clock: block ages, sync and rotation deadlines. Here, not in
 * store_write.c: that file calls this one, and not the reverse. */
uint64_t store_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/* Blocks are in the page cache once written, safe from a crash of tracerd;
 * past a crash of the machine only once synced. A new file's name needs its
 * directory synced too. Errors are not counted: the records were written,
 * and the next write reports a failing disk. */
void store_file_sync(struct store_writer *w)
{
	if (w->fd >= 0 && w->unsynced)
		(void)fdatasync(w->fd);
	if (w->dir_unsynced) {
		_cleanup_close_ int d = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (d >= 0)
			(void)fsync(d);
	}
	w->unsynced = w->dir_unsynced = false;
	w->synced_usec = store_now_usec();
}

uint64_t store_file_sync_due(const struct store_writer *w)
{
	if (!w->o.sync_usec || (!w->unsynced && !w->dir_unsynced))
		return 0;
	return w->synced_usec + w->o.sync_usec;
}

void store_file_close(struct store_writer *w)
{
	if (w->fd < 0)
		return;
	w->unsynced = true;
	store_file_sync(w);
	close(w->fd);
	w->fd = -1;
}

static int open_file(struct store_writer *w)
{
	struct timespec now;
	char name[64];
	int r;

	clock_gettime(CLOCK_REALTIME, &now);
	for (unsigned tries = 0; w->fd < 0 && tries < 100; tries++) {
		snprintf(name, sizeof(name), "tracerd-%016llx-%04x%s",
			 (unsigned long long)now.tv_sec * 1000000ULL + now.tv_nsec / 1000,
			 w->file_seq++ & 0xffff, STORE_SUFFIX);
		w->fd = openat(AT_FDCWD, w->dir, O_DIRECTORY | O_PATH | O_CLOEXEC);
		if (w->fd < 0)
			return -errno;
		r = openat(w->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0640);
		close(w->fd);
		w->fd = r < 0 ? -1 : r;
		if (r < 0 && errno != EEXIST)
			return -errno;
	}
	if (w->fd < 0)
		return -EEXIST;
	w->file_size = 0;
	w->file_opened_usec = w->synced_usec = store_now_usec();
	w->dir_unsynced = true;
	w->file_gen++;
	r = write_file_chunk(w);
	if (r < 0) {
		/* An empty file would only be noise: try again with the next block. */
		close(w->fd);
		w->fd = -1;
		(void)!unlink(name);
		return r;
	}
	if (w->o.max_use)
		enforce_max_use(w, name);
	return 0;
}

static int ensure_file(struct store_writer *w, size_t next)
{
	if (w->fd >= 0 &&
	    ((w->o.max_file_size && w->file_size > 0 && w->file_size + next > w->o.max_file_size) ||
	     (w->o.max_file_usec && store_now_usec() - w->file_opened_usec >= w->o.max_file_usec)))
		store_file_close(w);
	return w->fd >= 0 ? 0 : open_file(w);
}

void store_describe(struct bbuf *p, const struct store_evinfo *ev)
{
	bbuf_varint(p, ev->id);
	bbuf_string(p, ev->system);
	bbuf_string(p, ev->name);
	bbuf_string(p, ev->class_name);
	bbuf_string(p, ev->selection);
	bbuf_varint(p, zigzag(ev->priority));
	bbuf_string(p, ev->format);
	bbuf_varint(p, ev->n_enums);
	for (size_t i = 0; i < ev->n_enums; i++) {
		bbuf_string(p, ev->enums[i].name);
		bbuf_varint(p, zigzag(ev->enums[i].value));
	}
}

/* An EVENTS chunk for the block's events that this file has not described. */
static int write_events(struct store_writer *w, const struct store_block *b)
{
	struct bbuf p = { 0 };
	uint32_t n = 0;
	int r = 0;

	for (size_t i = 0; i < b->n_counts; i++) {
		struct store_evinfo *ev;

		pthread_mutex_lock(&w->lock);
		ev = w->ev[b->counts[i].id];
		pthread_mutex_unlock(&w->lock);
		if (ev->described_gen == w->file_gen)
			continue;
		store_describe(&p, ev);
		n++;
	}
	if (n) {
		struct bbuf out = { 0 };

		r = p.oom ? -ENOMEM : store_compress(w->comp, p.p, p.len, &out);
		if (r >= 0)
			r = write_compressed(w, &p, &out, STORE_CHUNK_EVENTS, n, 0, 0);
		bbuf_free(&out);
	}
	bbuf_free(&p);
	for (size_t i = 0; n && r >= 0 && i < b->n_counts; i++) {
		pthread_mutex_lock(&w->lock);
		w->ev[b->counts[i].id]->described_gen = w->file_gen;
		pthread_mutex_unlock(&w->lock);
	}
	return r;
}

/* A KSYMS chunk for the block's kernel frames that this file has not
 * described: their symbols as this kernel names them, so that the file
 * reads the same on another boot or machine. */
static int write_ksyms(struct store_writer *w, const struct store_block *b)
{
	struct bbuf p = { 0 }, out = { 0 };
	struct strbuf sym = { 0 };
	uint32_t n = 0;
	int r = 0;

	if (!w->o.ksym || b->kaddrs.oom)
		return b->kaddrs.oom ? -ENOMEM : 0;
	for (size_t i = 0; i + 8 <= b->kaddrs.len; i += 8) {
		uint64_t a;

		memcpy(&a, b->kaddrs.p + i, 8);
		if (!ksym_set_add(&w->ksyms, a, w->file_gen))
			continue;
		sb_reset(&sym);
		if (!w->o.ksym(a, &sym))
			sb_reset(&sym);
		bbuf_varint(&p, a);
		bbuf_string(&p, sb_str(&sym));
		n++;
	}
	if (n)
		r = p.oom || sym.oom ? -ENOMEM : store_compress(w->comp, p.p, p.len, &out);
	if (n && r >= 0)
		r = write_compressed(w, &p, &out, STORE_CHUNK_KSYMS, n, 0, 0);
	if (r < 0)	/* what it marked described is not: all again */
		ksym_set_free(&w->ksyms);
	bbuf_free(&out);
	bbuf_free(&p);
	sb_free(&sym);
	return r;
}

int store_file_pack(struct store_writer *w, const struct store_block *b)
{
	w->payload.len = 0;
	w->payload.oom = false;
	for (unsigned i = 0; i < STORE_N_COLUMNS; i++) {
		if (b->col[i].oom)
			return -ENOMEM;
		bbuf_varint(&w->payload, b->col[i].len);
		bbuf_put(&w->payload, b->col[i].p, b->col[i].len);
	}
	return w->payload.oom ? -ENOMEM : store_compress(w->comp, w->payload.p, w->payload.len, &w->out);
}

static int write_block(struct store_writer *w, const struct store_block *b)
{
	/* Compressed first, so that rotation goes by what the block takes on
	 * disk (and some room for event descriptions before it). */
	int r = store_file_pack(w, b);

	if (r >= 0)
		r = ensure_file(w, w->out.len + 2 * sizeof(struct store_chunk_hdr) + 4096);
	if (r >= 0)
		r = write_events(w, b);
	if (r >= 0)
		r = write_ksyms(w, b);
	if (r < 0)
		return r;
	return write_compressed(w, &w->payload, &w->out, STORE_CHUNK_BLOCK, b->n, b->ts_min,
				b->ts_max);
}

/* Each event's records of b counted: on disk (err 0) or lost (-errno). */
void store_file_done(struct store_writer *w, const struct store_block *b, int err)
{
	for (size_t i = 0; w->o.done && i < b->n_counts; i++) {
		struct store_evinfo *ev;

		pthread_mutex_lock(&w->lock);
		ev = w->ev[b->counts[i].id];
		pthread_mutex_unlock(&w->lock);
		w->o.done(ev->owner, b->counts[i].n, err < 0 ? err : 0, w->o.userdata);
	}
}

int store_file_write_block(struct store_writer *w, struct store_block *b)
{
	int r = write_block(w, b);
	uint64_t due;

	pthread_mutex_lock(&w->lock);
	if (r < 0) {
		w->stats.lost += b->n;
		w->stats.last_error = r;
	} else {
		w->unsynced = true;
		store_dir_add_records(w->sdir, b->n, &b->cpus);
		w->stats.written += b->n;
		w->stats.blocks++;
		w->stats.bytes = w->stats.bytes + w->out.len + sizeof(struct store_chunk_hdr);
		w->stats.last_error = 0;
	}
	pthread_mutex_unlock(&w->lock);
	/* Under a steady stream the thread never waits: sync from here. */
	due = store_file_sync_due(w);
	if (due && store_now_usec() >= due)
		store_file_sync(w);
	store_file_done(w, b, r);
	return r;
}
