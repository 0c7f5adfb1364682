/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup (v2) ids, as bpf_get_current_cgroup_id() gives them, to the
 * cgroup's path and systemd's names for it. On cgroup2 the id is the
 * cgroup directory's inode number. */
#ifndef TRACERD_CGROUP_H
#define TRACERD_CGROUP_H

#include <stdint.h>
#include "kernel-events/unit_path.h"

struct cgroup_info {
	uint64_t id;
	char *path;		/* from the cgroup2 root: "/system.slice/x.service"; NULL: not found */
	struct unit_names names;
	unsigned level;		/* 0 for the root: the kernel's cgroup level */
};

/* A table of ids: the live one below, or a store file's. */
struct cgroup_map;

int cgroup_map_new(struct cgroup_map **ret);
void cgroup_map_free(struct cgroup_map *m);
/* Adds id with path (NULL: known not to exist); an id already there keeps
 * its first path. Returns the entry, NULL without memory. */
const struct cgroup_info *cgroup_map_add(struct cgroup_map *m, uint64_t id, const char *path);
const struct cgroup_info *cgroup_map_get(const struct cgroup_map *m, uint64_t id);
/* Every entry with a path, in no order; stops at fn's nonzero return. */
int cgroup_map_each(const struct cgroup_map *m, int (*fn)(const struct cgroup_info *, void *),
		    void *userdata);
/* Adds every cgroup under the cgroup2 mount. */
int cgroup_map_scan(struct cgroup_map *m);

/* The cgroup2 mount point from /proc/self/mountinfo ("/sys/fs/cgroup", or
 * "/sys/fs/cgroup/unified" on a hybrid layout); -ENOENT without one. */
int cgroup2_mount(const char **ret);

/* The live resolver, shared by every thread: the cache, else the cgroup
 * opened by its id, else a rescan of the tree (at most CGROUP_SCANS_PER_SEC
 * a second). Entries are never freed before exit; a cgroup removed keeps
 * its name. NULL: unknown (removed before it was looked up). */
#define CGROUP_SCANS_PER_SEC 10
const struct cgroup_info *cgroup_lookup(uint64_t id);
/* The same for a cgroup cgroup:cgroup_mkdir just told of, which may not be
 * visible yet (the kernel fires the event before kernfs_activate()): the
 * cache, else by its id; no scan, and a failure is not remembered as gone. */
const struct cgroup_info *cgroup_lookup_new(uint64_t id);
/* The live table itself, for a walk; call under cgroup_lock(). */
struct cgroup_map *cgroup_live(void);
void cgroup_lock(void);
void cgroup_unlock(void);

#endif
