// SPDX-License-Identifier: GPL-2.0
/* Finding tracefs and reading its files. */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include "knobs.h"
#include "events.h"
#include "util.h"

static const char *tracefs_path;

#define TRACEFS_MAGIC 0x74726163

/* 0 if dir has an events directory; -EACCES if dir is a tracefs (or the
 * one we were told to use) that we may not look into; -ENOENT otherwise. */
static int probe(const char *dir, bool told)
{
	char p[256];
	struct stat st;
	struct statfs sf;

	snprintf(p, sizeof(p), "%s/events", dir);
	if (stat(p, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOENT;
	if (errno != EACCES)
		return -ENOENT;
	/* A 0700 tracefs: /sys/kernel/tracing is searchable, so statfs() tells
	 * it from an unmounted directory (or a debugfs we cannot see into). */
	if (told || (statfs(dir, &sf) == 0 && sf.f_type == TRACEFS_MAGIC))
		return -EACCES;
	return -ENOENT;
}

/* The tracefs mount, mounting it at /sys/kernel/tracing when absent.
 * TRACERD_TRACEFS overrides the path (tests use it to play "not mounted").
 * On failure *path is the path the error is about: -EACCES if tracefs is
 * there but not readable to us, -ENOENT or mount()'s error if it is not. */
int tracefs_find(const char **path)
{
	static const char *const candidates[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *env = knob_str(KNOB_TRACEFS);
	int r;

	if (tracefs_path)
		goto out;
	*path = env ?: candidates[0];
	if (env) {
		r = probe(env, true);
		if (r < 0)
			return r;
		tracefs_path = env;
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		r = probe(candidates[i], false);
		if (r == 0) {
			tracefs_path = candidates[i];
			goto out;
		}
		if (r == -EACCES) {
			*path = candidates[i];
			return r;
		}
	}
	if (mount("nodev", candidates[0], "tracefs", 0, NULL) < 0)
		return -errno;
	r = probe(candidates[0], false);
	if (r < 0)
		return r;
	tracefs_path = candidates[0];
out:
	*path = tracefs_path;
	return 0;
}

int tracefs_read_file(const char *rel, char **text)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	const char *root;
	size_t n = 0, cap = 0;
	char p[512];
	int r;

	r = tracefs_find(&root);
	if (r < 0)
		return r;
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t k;

		if (cap - n < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap += 65536;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		n += k;
	}
	buf[n] = 0;
	*text = TAKE_PTR(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every event tracefs offers, as "system:event", sorted. */
int tracefs_list_events(char ***names, size_t *n)
{
	_cleanup_free_ char *text = NULL;
	char **v = NULL, *save = NULL;
	size_t k = 0, cap = 0;
	int r;

	r = tracefs_read_file("available_events", &text);
	if (r < 0)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (GROW(v, cap, k) < 0 || !(v[k] = strdup(line))) {
			strv_free(v, k);
			return -ENOMEM;
		}
		k++;
	}
	qsort_safe(v, k, sizeof(*v), cmp_str);
	*names = v;
	*n = k;
	return 0;
}
