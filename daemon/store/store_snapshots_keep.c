// SPDX-License-Identifier: GPL-2.0
/* [Recorder] MaxSnapshots=: which snapshot directories under [Store]
 * Directory= are past the newest N, and their deletion. A snapshot's name
 * begins with its local time, fixed width (snap_names() in
 * store_snapshot.c), so names sort as the snapshots were taken; one torn by
 * a crash has ".torn" at its end (sink_recorder.c) and sorts among them by
 * the same time. Anything else in the directory, the store's own files, a
 * snapshot still being written (".tmp-snapshot-...") or a symlink that
 * looks like a snapshot, is never selected. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "store/store.h"
#include "util.h"

/* "snapshot-YYYYMMDD-HHMMSS.mmm-": D a digit, the others themselves. */
static const char stamp[] = STORE_SNAPSHOT_PREFIX "DDDDDDDD-DDDDDD.DDD-";

bool store_snapshot_name(const char *name)
{
	size_t n = strlen(stamp);

	for (size_t i = 0; i < n; i++) {
		if (stamp[i] == 'D' ? !isdigit((unsigned char)name[i]) : name[i] != stamp[i])
			return false;
	}
	/* the reason (store_snapshot_start()'s rule), ".torn" included */
	if (!name[n])
		return false;
	for (const char *c = name + n; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
			return false;
	return true;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The snapshot directories in d, in no order; *has_current: current is one. */
static int list_snapshots(DIR *d, const char *current, char ***ret, size_t *n,
			  bool *has_current)
{
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	*has_current = false;
	while ((errno = 0, de = readdir(d))) {
		struct stat st;

		if (!store_snapshot_name(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (current && !strcmp(de->d_name, current)) {
			*has_current = true;
			continue;
		}
		if (GROW(names, cap, *n) < 0 || !(names[*n] = strdup(de->d_name))) {
			strv_free(names, *n);
			return -ENOMEM;
		}
		(*n)++;
	}
	if (errno) {
		int r = -errno;

		strv_free(names, *n);
		return r;
	}
	*ret = names;
	return 0;
}

int store_snapshots_over(const char *dir, unsigned keep, const char *current, char ***ret,
			 size_t *n_ret)
{
	DIR *d;
	char **names = NULL;
	size_t n = 0, drop;
	bool has_current;
	int r;

	*ret = NULL;
	*n_ret = 0;
	if (!keep)
		return 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;	/* no snapshot yet */
	r = list_snapshots(d, current, &names, &n, &has_current);
	closedir(d);
	if (r < 0)
		return r;
	/* The one just written counts, and stays whatever its name sorts as
	 * (a clock set back): the others make up the rest of keep. */
	keep -= has_current;
	drop = n > keep ? n - keep : 0;
	qsort_safe(names, n, sizeof(*names), cmp_name);
	for (size_t i = drop; i < n; i++)
		free(names[i]);
	if (!drop) {
		free(names);
		names = NULL;
	}
	*ret = names;
	*n_ret = drop;
	return 0;
}

/* A snapshot directory holds the files its writer made, no directory: they
 * go one by one, and a directory inside (not tracerd's) stops the removal
 * (ENOTEMPTY) rather than be followed. */
int store_snapshot_remove(const char *dir, const char *name)
{
	_cleanup_close_ int parent = -1;
	DIR *d;
	struct dirent *de;
	int fd, r = 0;

	if (!store_snapshot_name(name))
		return -EINVAL;
	parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return -errno;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (!S_ISDIR(st.st_mode) && unlinkat(fd, de->d_name, 0) < 0))
			r = r < 0 ? r : -errno;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0)
		r = r < 0 ? r : -errno;
	return r;
}
