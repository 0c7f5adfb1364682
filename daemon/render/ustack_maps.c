// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/maps, parsed: see ustack_maps.h. */
#include <inttypes.h>
#include <sys/sysmacros.h>
#include "render/ustack_elf.h"
#include "render/ustack_maps.h"
#include "util.h"

/* "start-end perms offset major:minor inode   path": the path starts after
 * the padding and may hold spaces; the kernel's own names ([heap],
 * [vdso], ...) and anonymous mappings have no file, as in ftrace. */
int ustack_map_parse(const char *line, struct ustack_map *map)
{
	unsigned long long start, end, pgoff, ino;
	unsigned maj, min;
	char perms[5];
	const char *p;
	size_t len;
	int n = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu%n", &start, &end, perms, &pgoff, &maj, &min,
		   &ino, &n) != 7 || !n || start >= end)
		return -EINVAL;
	*map = (struct ustack_map){ .start = start, .end = end, .pgoff = pgoff,
				    .dev = makedev(maj, min), .ino = ino };
	p = line + n;
	p += strspn(p, " \t");
	len = strcspn(p, "\n");
	if (!len || *p == '[')
		return 0;
	map->path = strndup(p, len);
	return map->path ? 0 : -ENOMEM;
}

static int maps_errno(int err)
{
	/* /proc/PID gone: ENOENT; a zombie's maps read empty (see below). */
	return err == ENOENT || err == ESRCH ? -ESRCH : -err;
}

int ustack_maps_read(pid_t tgid, struct ustack_maps **ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	struct ustack_maps *m;
	char path[64];
	size_t cap = 0;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return maps_errno(errno);
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->tgid = tgid;
	errno = 0;
	while (getline(&line, &cap, f) > 0) {
		if (GROW(m->maps, m->cap, m->n) < 0) {
			r = -ENOMEM;
			break;
		}
		r = ustack_map_parse(line, &m->maps[m->n]);
		if (r == -ENOMEM)
			break;
		if (r == 0)
			m->n++;
		r = 0;
	}
	if (!r && ferror(f))
		r = maps_errno(errno ? errno : EIO);
	/* An exited process not yet reaped (a zombie) has no mm: its maps
	 * file opens and reads empty. */
	if (!r && !m->n)
		r = -ESRCH;
	if (r < 0) {
		ustack_maps_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

void ustack_maps_free(struct ustack_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->maps[i].path);
		ustack_elf_unref(m->maps[i].elf);
	}
	free(m->maps);
	free(m);
}

struct ustack_map *ustack_maps_find(struct ustack_maps *m, uint64_t ip)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < m->maps[mid].start)
			hi = mid;
		else if (ip >= m->maps[mid].end)
			lo = mid + 1;
		else
			return &m->maps[mid];
	}
	return NULL;
}
