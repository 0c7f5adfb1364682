/* SPDX-License-Identifier: GPL-2.0 */
/* New cgroups as the kernel makes them (bpf/cgroup_watch.bpf.c on
 * cgroup:cgroup_mkdir), for Unit=. */
#ifndef TRACERD_CGROUP_WATCH_H
#define TRACERD_CGROUP_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct cgroup_watch;
typedef void (*cgroup_new_fn)(void *userdata, uint64_t id);

/* root_level: the level of tracerd's cgroup2 mount root in the whole tree
 * (loader_unit_root_level()), -1: unknown, and births keep no path. */
int cgroup_watch_new(struct cgroup_watch **ret, int root_level, cgroup_new_fn fn, void *userdata);
void cgroup_watch_free(struct cgroup_watch *w);
/* Readable when new ids wait. */
int cgroup_watch_fd(const struct cgroup_watch *w);
/* Calls fn for each new id; returns the number of ids the ring had no
 * room for since the last call (the caller then looks at the whole tree). */
uint64_t cgroup_watch_read(struct cgroup_watch *w);
/* The path (under tracerd's cgroup2 mount) the kernel gave cgroup id at
 * its birth, if it is one of the last 1024 read, or NULL. The cgroup may be
 * gone since. The kernel's path is from the root of the whole tree: the
 * levels above the mount's root are cut off. below_root: the caller knows
 * that the cgroup is below that root (the class program checked, see
 * bpf/unit.bpf.h), and the root's own path is learned from it; else a
 * path is given only once that is known (at once on a host), and only
 * for a cgroup below it. */
const char *cgroup_watch_birth_path(struct cgroup_watch *w, uint64_t id, bool below_root);

#endif
