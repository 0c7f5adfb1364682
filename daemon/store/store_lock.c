// SPDX-License-Identifier: GPL-2.0
/* One writing process per store directory: an flock on DIR/.lock, which
 * holds the pid of its holder. Two tracerd processes writing into one
 * directory would delete each other's open files by MaxUse=. Within a
 * process the lock is shared: a reload that replaces the store on the same
 * directory makes the new writer while the old one still holds it.
 *
 * The directory's writers in one process also number the records they put
 * into its files, as one stream (docs/STORE.md: stream=, first_record=), so
 * that a reader can count the records of files deleted before it read them. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include "store/store_priv.h"
#include "util.h"

#define LOCK_NAME ".lock"

struct store_dir {
	struct store_dir *next;
	dev_t dev;
	ino_t ino;
	int fd;				/* DIR/.lock, flocked */
	unsigned refs;
	char stream[17];
	uint64_t records;		/* put into the stream's files so far */
};

static pthread_mutex_t dirs_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct store_dir *dirs;

static void new_stream_id(char out[17])
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v)) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		v = (uint64_t)getpid() << 40 ^ (uint64_t)t.tv_sec * 1000000000ULL ^ t.tv_nsec;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)v);
}

/* Takes the lock of a directory no writer of this process holds. */
static int lock_new(int dfd, const struct stat *st, struct store_dir **ret)
{
	_cleanup_close_ int fd = openat(dfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	struct store_dir *d;
	char pid[24];
	int n;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0)
		return -errno;
	if (pwrite(fd, pid, n, 0) != n)
		return -EIO;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = (struct store_dir){ .dev = st->st_dev, .ino = st->st_ino, .fd = TAKE_FD(fd), .refs = 1 };
	new_stream_id(d->stream);
	*ret = d;
	return 0;
}

int store_dir_lock(const char *path, struct store_dir **ret)
{
	_cleanup_close_ int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct store_dir *d;
	struct stat st;
	int r = 0;

	if (dfd < 0 || fstat(dfd, &st) < 0)
		return -errno;
	pthread_mutex_lock(&dirs_mutex);
	for (d = dirs; d && (d->dev != st.st_dev || d->ino != st.st_ino); d = d->next)
		;
	if (d)
		d->refs++;
	else if ((r = lock_new(dfd, &st, &d)) >= 0) {
		d->next = dirs;
		dirs = d;
	}
	pthread_mutex_unlock(&dirs_mutex);
	if (r >= 0)
		*ret = d;
	return r;
}

void store_dir_unlock(struct store_dir *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&dirs_mutex);
	if (--d->refs == 0) {
		for (struct store_dir **p = &dirs; *p; p = &(*p)->next)
			if (*p == d) {
				*p = d->next;
				break;
			}
		close(d->fd);	/* the lock goes with it; the file stays, not to race a new holder */
		free(d);
	}
	pthread_mutex_unlock(&dirs_mutex);
}

void store_dir_stream(struct store_dir *d, char stream[17], uint64_t *records)
{
	pthread_mutex_lock(&dirs_mutex);
	memcpy(stream, d->stream, 17);
	*records = d->records;
	pthread_mutex_unlock(&dirs_mutex);
}

void store_dir_add_records(struct store_dir *d, uint64_t n)
{
	pthread_mutex_lock(&dirs_mutex);
	d->records += n;
	pthread_mutex_unlock(&dirs_mutex);
}

int store_dir_holder(const char *path)
{
	_cleanup_free_ char *lock = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	int pid = 0;

	if (asprintf(&lock, "%s/" LOCK_NAME, path) < 0)
		return 0;
	f = fopen(lock, "re");
	if (!f || fscanf(f, "%d", &pid) != 1)
		return 0;
	return pid;
}
