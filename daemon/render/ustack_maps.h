/* SPDX-License-Identifier: GPL-2.0 */
/* A process's mappings as /proc/PID/maps lists them, for naming user stack
 * frames. */
#ifndef TRACERD_USTACK_MAPS_H
#define TRACERD_USTACK_MAPS_H

#include <stdint.h>
#include <sys/types.h>

struct ustack_elf;

struct ustack_map {
	uint64_t start, end, pgoff;
	dev_t dev;
	ino_t ino;
	char *path;		/* NULL: no file (anonymous, [heap], [vdso], ...) */
	struct ustack_elf *elf;	/* its symbols, once looked up (ustack.c) */
	int elf_err;		/* < 0: the file could not be opened */
};

struct ustack_maps {
	pid_t tgid;
	struct ustack_map *maps;	/* sorted by start, as the kernel lists them */
	size_t n, cap;
};

/* Reads /proc/TGID/maps. -ESRCH: the process is gone; -EACCES/-EPERM:
 * not ours to read (another user's process, without CAP_SYS_PTRACE). */
int ustack_maps_read(pid_t tgid, struct ustack_maps **ret);
void ustack_maps_free(struct ustack_maps *m);
/* The mapping that holds ip, or NULL. */
struct ustack_map *ustack_maps_find(struct ustack_maps *m, uint64_t ip);
/* Parses one line of a maps file into *map (path allocated). -EINVAL when
 * it is not one. */
int ustack_map_parse(const char *line, struct ustack_map *map);

#endif
