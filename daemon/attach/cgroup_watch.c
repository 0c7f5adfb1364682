// SPDX-License-Identifier: GPL-2.0
/* New cgroups: see cgroup_watch.h. */
#include <bpf/libbpf.h>
#include "attach/cgroup_watch.h"
#include "cgroup_watch.skel.h"
#include "util.h"

struct cgroup_watch {
	struct cgroup_watch_bpf *skel;
	struct ring_buffer *rb;
	cgroup_new_fn fn;
	void *userdata;
	uint64_t lost_seen;
};

static int on_id(void *ctx, void *data, size_t size)
{
	struct cgroup_watch *w = ctx;
	uint64_t id;

	if (size < sizeof(id))
		return 0;
	memcpy(&id, data, sizeof(id));
	w->fn(w->userdata, id);
	return 0;
}

int cgroup_watch_new(struct cgroup_watch **ret, cgroup_new_fn fn, void *userdata)
{
	struct cgroup_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->userdata = userdata;
	w->skel = cgroup_watch_bpf__open_and_load();
	if (!w->skel || cgroup_watch_bpf__attach(w->skel) < 0)
		goto fail;
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.cgroup_ring), on_id, w, NULL);
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
