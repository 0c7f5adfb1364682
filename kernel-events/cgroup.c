// SPDX-License-Identifier: GPL-2.0
/* cgroup ids to paths: see cgroup.h. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include "kernel-events/cgroup.h"
#include "util.h"

#define CGROUP_MAX_DEPTH 32	/* the scan's; systemd's trees are 5 or 6 deep */

struct cgroup_map {
	struct cgroup_info **slots;	/* open addressing, a power of two */
	size_t cap, n;
};

int cgroup_map_new(struct cgroup_map **ret)
{
	struct cgroup_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->cap = 64;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

void cgroup_map_free(struct cgroup_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i]) {
			free(m->slots[i]->path);
			free(m->slots[i]);
		}
	free(m->slots);
	free(m);
}

static size_t hash_id(uint64_t id)
{
	id *= 0x9e3779b97f4a7c15ULL;
	return id ^ (id >> 32);
}

static struct cgroup_info **find_slot(struct cgroup_info **slots, size_t cap, uint64_t id)
{
	size_t i = hash_id(id) & (cap - 1);

	while (slots[i] && slots[i]->id != id)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

const struct cgroup_info *cgroup_map_get(const struct cgroup_map *m, uint64_t id)
{
	return *find_slot(m->slots, m->cap, id);
}

static int grow_map(struct cgroup_map *m)
{
	size_t cap = m->cap * 2;
	struct cgroup_info **s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i])
			*find_slot(s, cap, m->slots[i]->id) = m->slots[i];
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

static unsigned path_level(const char *path)
{
	unsigned level = 0;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

const struct cgroup_info *cgroup_map_add(struct cgroup_map *m, uint64_t id, const char *path)
{
	struct cgroup_info **slot = find_slot(m->slots, m->cap, id), *c;

	if (*slot) {
		if (!(*slot)->path && path)	/* a negative entry learns its path */
			goto fill;
		return *slot;
	}
	if ((m->n + 1) * 2 > m->cap) {
		if (grow_map(m) < 0)
			return NULL;
		slot = find_slot(m->slots, m->cap, id);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->id = id;
	*slot = c;
	m->n++;
	if (!path)
		return c;
fill:
	c = *slot;
	c->path = strdup(path);
	if (!c->path)
		return c;
	unit_path_parse(path, &c->names);
	c->level = path_level(path);
	return c;
}

int cgroup_map_each(const struct cgroup_map *m, int (*fn)(const struct cgroup_info *, void *),
		    void *userdata)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i] && m->slots[i]->path) {
			int r = fn(m->slots[i], userdata);

			if (r)
				return r;
		}
	return 0;
}

int cgroup2_mount(const char **ret)
{
	static char found[4096];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;

	if (found[0]) {
		*ret = found;
		return 0;
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	/* "36 25 0:31 / /sys/fs/cgroup/unified rw,... shared:9 - cgroup2 cgroup2 rw" */
	while (getline(&line, &size, f) > 0) {
		char mnt[4096], type[64];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep, " - %63s", type) != 1 || strcmp(type, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		/* Mount points escape spaces as \040; a cgroup2 mount has none. */
		strcpy(found, mnt);
		*ret = found;
		return 0;
	}
	return -ENOENT;
}

/* The tree under dir (its path rel from the root), depth first. */
static int scan_dir(struct cgroup_map *m, int dfd, char *rel, size_t len, size_t size,
		    unsigned depth)
{
	DIR *d;
	struct dirent *de;
	struct stat st;

	if (fstat(dfd, &st) < 0) {
		close(dfd);
		return -errno;
	}
	if (!cgroup_map_add(m, st.st_ino, len ? rel : "/")) {
		close(dfd);
		return -ENOMEM;
	}
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while (depth < CGROUP_MAX_DEPTH && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int fd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + 1 + n + 1 > size)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* removed meanwhile */
		rel[len] = '/';
		memcpy(rel + len + 1, de->d_name, n + 1);
		if (scan_dir(m, fd, rel, len + 1 + n, size, depth + 1) == -ENOMEM) {
			closedir(d);
			return -ENOMEM;
		}
		rel[len] = 0;
	}
	closedir(d);
	return 0;
}

int cgroup_map_scan(struct cgroup_map *m)
{
	char rel[4096] = "";
	const char *root;
	int fd, r;

	r = cgroup2_mount(&root);
	if (r < 0)
		return r;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return scan_dir(m, fd, rel, 0, sizeof(rel), 0);
}

/* The cgroup opened by its id (the kernel's file handle of a kernfs node
 * is its id), as systemd's cg_cgroupid_open(); needs CAP_DAC_READ_SEARCH,
 * which the unit grants. Its path is then the fd's link. */
static int path_by_handle(uint64_t id, char *buf, size_t size)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = 0xfe /* FILEID_KERNFS */ } };
	char link[64], target[4096];
	_cleanup_close_ int mfd = -1, fd = -1;
	const char *root;
	size_t rl;
	ssize_t n;
	int r;

	r = cgroup2_mount(&root);
	if (r < 0)
		return r;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	mfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	rl = strlen(root);
	if (strncmp(target, root, rl) || (target[rl] && target[rl] != '/'))
		return -EXDEV;
	snprintf(buf, size, "%s", target[rl] ? target + rl : "/");
	return 0;
}

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cgroup_map *live;
static uint64_t scan_window_usec;
static unsigned scans_in_window;

void cgroup_lock(void)
{
	pthread_mutex_lock(&live_lock);
}

void cgroup_unlock(void)
{
	pthread_mutex_unlock(&live_lock);
}

struct cgroup_map *cgroup_live(void)
{
	if (!live && cgroup_map_new(&live) == 0)
		cgroup_map_scan(live);
	return live;
}

static bool may_scan(void)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
	if (now - scan_window_usec >= 1000000) {
		scan_window_usec = now;
		scans_in_window = 0;
	}
	return scans_in_window++ < CGROUP_SCANS_PER_SEC;
}

/* made: the cgroup is known to be visible (a task was in it) */
static const struct cgroup_info *lookup_locked(uint64_t id, bool made)
{
	struct cgroup_map *m = cgroup_live();
	const struct cgroup_info *c;
	char path[4096];

	if (!m)
		return NULL;
	c = cgroup_map_get(m, id);
	if (c)
		return c->path ? c : NULL;
	if (path_by_handle(id, path, sizeof(path)) == 0)
		return cgroup_map_add(m, id, path);
	if (!made || !may_scan())
		return NULL;	/* asked again later */
	cgroup_map_scan(m);
	c = cgroup_map_get(m, id);
	if (c)
		return c->path ? c : NULL;
	/* The record was made in it, so it existed: it is gone, and ids are
	 * not reused. Remember that, so it costs no second scan. */
	cgroup_map_add(m, id, NULL);
	return NULL;
}

const struct cgroup_info *cgroup_lookup(uint64_t id)
{
	const struct cgroup_info *c;

	cgroup_lock();
	c = lookup_locked(id, true);
	cgroup_unlock();
	return c;
}

const struct cgroup_info *cgroup_lookup_new(uint64_t id)
{
	const struct cgroup_info *c;

	cgroup_lock();
	c = lookup_locked(id, false);
	cgroup_unlock();
	return c;
}
