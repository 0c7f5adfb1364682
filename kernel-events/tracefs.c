// SPDX-License-Identifier: GPL-2.0
/* Finding tracefs and reading its files. */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "events.h"
#include "util.h"

static const char *tracefs_path;

static bool has_events(const char *dir)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", dir);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The tracefs mount, mounting it at /sys/kernel/tracing when absent.
 * TRACERD_TRACEFS overrides the path (tests use it to play "not mounted"). */
int tracefs_find(const char **path)
{
	static const char *const candidates[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *env = getenv("TRACERD_TRACEFS");

	if (tracefs_path)
		goto out;
	if (env) {
		if (!has_events(env))
			return -ENOENT;
		tracefs_path = env;
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++)
		if (has_events(candidates[i])) {
			tracefs_path = candidates[i];
			goto out;
		}
	if (mount("nodev", candidates[0], "tracefs", 0, NULL) < 0)
		return -errno;
	if (!has_events(candidates[0]))
		return -ENOENT;
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
	qsort(v, k, sizeof(*v), cmp_str);
	*names = v;
	*n = k;
	return 0;
}
