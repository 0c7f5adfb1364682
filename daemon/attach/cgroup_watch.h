/* SPDX-License-Identifier: GPL-2.0 */
/* New cgroups as the kernel makes them (bpf/cgroup_watch.bpf.c on
 * cgroup:cgroup_mkdir), for Unit=. */
#ifndef TRACERD_CGROUP_WATCH_H
#define TRACERD_CGROUP_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct cgroup_watch;
typedef void (*cgroup_new_fn)(void *userdata, uint64_t id);

int cgroup_watch_new(struct cgroup_watch **ret, cgroup_new_fn fn, void *userdata);
void cgroup_watch_free(struct cgroup_watch *w);
/* Readable when new ids wait. */
int cgroup_watch_fd(const struct cgroup_watch *w);
/* Calls fn for each new id; returns the number of ids the ring had no
 * room for since the last call (the caller then looks at the whole tree). */
uint64_t cgroup_watch_read(struct cgroup_watch *w);

#endif
