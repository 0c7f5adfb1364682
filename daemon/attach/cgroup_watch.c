// SPDX-License-Identifier: GPL-2.0
/* New cgroups: see cgroup_watch.h. */
#include <bpf/libbpf.h>
#include "attach/cgroup_watch.h"
#include "cgroup_watch.skel.h"
#include "tracerd_record.h"
#include "util.h"

/* Births kept with their paths: what a unit that fails at once is named by,
 * once its cgroup is gone. */
#define CGROUP_BIRTHS 1024

struct birth {
	uint64_t id;
	unsigned level;
	char *path;		/* the kernel's: from the root of the whole tree */
};

struct cgroup_watch {
	struct cgroup_watch_bpf *skel;
	struct ring_buffer *rb;
	cgroup_new_fn fn;
	void *userdata;
	uint64_t lost_seen;
	int root_level;
	/* The kernel's path of the root of tracerd's mount: "" on a host;
	 * in a container learned from the first birth known to be below it.
	 * NULL: not yet. */
	char *root_path;
	struct birth births[CGROUP_BIRTHS];	/* a ring, the newest at next - 1 */
	unsigned next;
};

static int on_birth(void *ctx, void *data, size_t size)
{
	struct cgroup_watch *w = ctx;
	const struct cgroup_birth *b = data;
	struct birth *k = &w->births[w->next];

	if (size < offsetof(struct cgroup_birth, path) ||
	    b->len > size - offsetof(struct cgroup_birth, path))
		return 0;
	if (b->len && !b->path[b->len - 1] && b->path[0] == '/') {
		free(k->path);
		k->path = strdup(b->path);
		k->id = k->path ? b->id : 0;
		k->level = b->level;
		w->next = (w->next + 1) % CGROUP_BIRTHS;
	}
	w->fn(w->userdata, b->id);
	return 0;
}

static const struct birth *find_birth(const struct cgroup_watch *w, uint64_t id)
{
	for (unsigned i = 0; i < CGROUP_BIRTHS; i++) {
		const struct birth *k = &w->births[(w->next + CGROUP_BIRTHS - 1 - i) % CGROUP_BIRTHS];

		if (!k->path)
			break;
		if (k->id == id)
			return k;
	}
	return NULL;
}

const char *cgroup_watch_birth_path(struct cgroup_watch *w, uint64_t id, bool below_root)
{
	const struct birth *b = find_birth(w, id);
	const char *p;
	size_t n;

	if (!b || w->root_level < 0 || (int)b->level < w->root_level)
		return NULL;
	/* The path below the root: without root_level leading components. */
	p = b->path;
	for (int i = 0; i < w->root_level && p; i++)
		p = strchr(p + 1, '/');
	n = p ? (size_t)(p - b->path) : strlen(b->path);
	if (!w->root_path && below_root)
		w->root_path = strndup(b->path, n);
	if (!below_root && (!w->root_path || strlen(w->root_path) != n || strncmp(w->root_path, b->path, n)))
		return NULL;
	return p ? p : "/";
}

int cgroup_watch_new(struct cgroup_watch **ret, int root_level, cgroup_new_fn fn, void *userdata)
{
	struct cgroup_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->userdata = userdata;
	w->root_level = root_level;
	if (root_level == 0 && !(w->root_path = strdup("")))
		goto fail;
	w->skel = cgroup_watch_bpf__open_and_load();
	if (!w->skel || cgroup_watch_bpf__attach(w->skel) < 0)
		goto fail;
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.cgroup_ring), on_birth, w, NULL);
	if (!w->rb)
		goto fail;
	*ret = w;
	return 0;
fail:
	r = -errno;
	cgroup_watch_free(w);
	return r < 0 ? r : -EINVAL;
}

void cgroup_watch_free(struct cgroup_watch *w)
{
	if (!w)
		return;
	ring_buffer__free(w->rb);
	cgroup_watch_bpf__destroy(w->skel);
	for (unsigned i = 0; i < CGROUP_BIRTHS; i++)
		free(w->births[i].path);
	free(w->root_path);
	free(w);
}

int cgroup_watch_fd(const struct cgroup_watch *w)
{
	return ring_buffer__epoll_fd(w->rb);
}

uint64_t cgroup_watch_read(struct cgroup_watch *w)
{
	uint64_t lost, n;

	ring_buffer__consume(w->rb);
	lost = __atomic_load_n(&w->skel->bss->lost, __ATOMIC_RELAXED);
	n = lost - w->lost_seen;
	w->lost_seen = lost;
	return n;
}
