// SPDX-License-Identifier: GPL-2.0
/* One writing process per store directory: an flock on DIR/.lock, which
 * holds the pid of its holder. Two tracerd processes writing into one
 * directory would delete each other's open files by MaxUse=. Within a
 * process the lock is shared: a reload that replaces the store on the same
 * directory makes the new writer while the old one still holds it.
 *
 * The directory's writers also number the records they put into its files,
 * as one stream (docs/STORE.md: stream=, first_record=, first_record_cpus=),
 * so that a reader can count the records of files deleted before it read
 * them. A writer that takes the lock (a restart) numbers on from where the
 * directory's last file ends, so that the count holds across it. */
#include <dirent.h>
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
	/* ... per CPU, from where this process began to count them: a reader
	 * takes differences between files, and checks that they add up. */
	struct cpu_counts cpus;
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

/* The stream of the directory's last file (names sort in creation order),
 * numbered on from that file's end: its first_record and the records of its
 * blocks; else a new one. Reads that file through: outside dirs_mutex, which
 * the writers of other directories take for every block they write. */
static void begin_stream(const char *dirpath, struct store_dir *d)
{
	_cleanup_free_ char *last = NULL, *path = NULL, *stream = NULL;
	struct cpu_counts cpus = { 0 };
	char id[17];
	uint64_t records = 0;
	DIR *dir = opendir(dirpath);
	struct dirent *de;
	int r = -ENOENT;

	while (dir && (de = readdir(dir))) {
		size_t l = strlen(de->d_name), s = strlen(STORE_SUFFIX);

		if (l > s && !strcmp(de->d_name + l - s, STORE_SUFFIX) &&
		    (!last || strcmp(de->d_name, last) > 0)) {
			free(last);
			last = strdup(de->d_name);
		}
	}
	if (dir)
		closedir(dir);
	if (last && asprintf(&path, "%s/%s", dirpath, last) >= 0)
		r = store_stream_end(path, &stream, &records, &cpus);
	if (r >= 0 && stream && strlen(stream) == 16)
		memcpy(id, stream, 17);
	else {
		new_stream_id(id);
		records = 0;
		cpu_counts_free(&cpus);
	}
	pthread_mutex_lock(&dirs_mutex);
	memcpy(d->stream, id, 17);
	d->records = records;
	d->cpus = cpus;
	pthread_mutex_unlock(&dirs_mutex);
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
	*ret = d;
	return 0;
}

int store_dir_lock(const char *path, struct store_dir **ret)
{
	_cleanup_close_ int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct store_dir *d;
	struct stat st;
	bool fresh = false;
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
		fresh = true;
	}
	pthread_mutex_unlock(&dirs_mutex);
	/* No other writer of this process has d yet: its caller makes the
	 * writers, one at a time. */
	if (fresh)
		begin_stream(path, d);
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
		cpu_counts_free(&d->cpus);
		free(d);
	}
	pthread_mutex_unlock(&dirs_mutex);
}

void store_dir_stream(struct store_dir *d, char stream[17], uint64_t *records, struct strbuf *cpus)
{
	pthread_mutex_lock(&dirs_mutex);
	memcpy(stream, d->stream, 17);
	*records = d->records;
	cpu_counts_format(&d->cpus, cpus);
	pthread_mutex_unlock(&dirs_mutex);
}

void store_dir_add_records(struct store_dir *d, uint64_t n, const struct cpu_counts *cpus)
{
	pthread_mutex_lock(&dirs_mutex);
	d->records += n;
	(void)cpu_counts_add_all(&d->cpus, cpus);	/* no memory: a reader's check finds it */
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
