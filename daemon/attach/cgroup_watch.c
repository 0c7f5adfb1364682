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
	char *path;		/* under tracerd's cgroup2 mount */
};

struct cgroup_watch {
	struct cgroup_watch_bpf *skel;
	struct ring_buffer *rb;
	cgroup_new_fn fn;
	void *userdata;
	uint64_t lost_seen;
	int root_level;
	struct birth births[CGROUP_BIRTHS];	/* a ring, the newest at next - 1 */
	unsigned next;
};

/* The kernel's path is from the root of the whole tree: below the root of
 * tracerd's mount (at root_level), it is that path without as many
 * leading components. NULL: not below it, or unknown. */
static const char *under_root(const struct cgroup_birth *b, int root_level)
{
	const char *p = b->path;

	if (root_level < 0 || (int)b->level < root_level || !b->len || p[b->len - 1] || p[0] != '/')
		return NULL;
	for (int i = 0; i < root_level; i++) {
		p = strchr(p + 1, '/');
		if (!p)
			return NULL;
	}
	return (int)b->level == root_level ? "/" : p;
}

static void keep_birth(struct cgroup_watch *w, const struct cgroup_birth *b)
{
	const char *path = under_root(b, w->root_level);
	struct birth *k = &w->births[w->next];

	if (!path)
		return;
	free(k->path);
	k->path = strdup(path);
	k->id = k->path ? b->id : 0;
	w->next = (w->next + 1) % CGROUP_BIRTHS;
}

static int on_birth(void *ctx, void *data, size_t size)
{
	struct cgroup_watch *w = ctx;
	const struct cgroup_birth *b = data;

	if (size < offsetof(struct cgroup_birth, path) ||
	    b->len > size - offsetof(struct cgroup_birth, path))
		return 0;
	keep_birth(w, b);
	w->fn(w->userdata, b->id);
	return 0;
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

const char *cgroup_watch_birth_path(const struct cgroup_watch *w, uint64_t id)
{
	for (unsigned i = 0; i < CGROUP_BIRTHS; i++) {
		const struct birth *k = &w->births[(w->next + CGROUP_BIRTHS - 1 - i) % CGROUP_BIRTHS];

		if (!k->path)
			break;
		if (k->id == id)
			return k->path;
	}
	return NULL;
}
