// SPDX-License-Identifier: GPL-2.0
/* User stack frames to text: see ustack.h. Two bounded caches:
 *  - processes: /proc/TGID/maps per tgid, USTACK_PROCS of them, the least
 *    recently used evicted. An IP in no mapping re-reads the maps (the
 *    process may have mapped new code since), at most once per
 *    USTACK_REREAD_NS per process, so that garbage IPs of a frame-pointer
 *    walk through code without frame pointers cannot cost a read each. A
 *    process found exited keeps its last copy: it still names the frames
 *    of its events from before it exited.
 *  - symbol tables: per file, by device, inode and mtime (a file rewritten
 *    in place is read again), USTACK_FILES of them, least recently used
 *    evicted; a mapping holds a reference to its file's table.
 * Files are opened through /proc/TGID/map_files/START-END (the mapped file
 * itself, in any mount namespace, also when deleted; needs CAP_SYS_ADMIN),
 * else /proc/TGID/root/PATH (the path in the process's own root: a
 * container's), accepted only if its device and inode are the mapping's. */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include "clock.h"
#include "render/ustack.h"
#include "render/ustack_elf.h"
#include "render/ustack_maps.h"
#include "util.h"

#define USTACK_REREAD_NS 1000000ULL

struct proc {
	pid_t tgid;			/* 0: free */
	struct ustack_maps *maps;	/* NULL: never read */
	int err;			/* the last read's: -ESRCH exited, -EACCES, ... */
	uint64_t read_ns, used;
};

struct file {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct ustack_elf *elf;		/* NULL: free */
	uint64_t used;
};

struct ustack_syms {
	struct proc procs[USTACK_PROCS];
	struct proc *last;		/* the frames of one stack share a process */
	struct file files[USTACK_FILES];
	uint64_t tick;
	struct ustack_stats stats;
};

int ustack_syms_new(struct ustack_syms **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

struct ustack_syms *ustack_syms_free(struct ustack_syms *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < USTACK_PROCS; i++)
		ustack_maps_free(s->procs[i].maps);
	for (size_t i = 0; i < USTACK_FILES; i++)
		ustack_elf_unref(s->files[i].elf);
	free(s);
	return NULL;
}

void ustack_syms_stats(const struct ustack_syms *s, struct ustack_stats *st)
{
	*st = s->stats;
}

/* The process's entry: found, else a free one, else the least recently used. */
static struct proc *proc_slot(struct ustack_syms *s, pid_t tgid)
{
	struct proc *victim = &s->procs[0];

	if (s->last && s->last->tgid == tgid)
		return s->last;
	for (size_t i = 0; i < USTACK_PROCS; i++) {
		struct proc *p = &s->procs[i];

		if (p->tgid == tgid)
			return s->last = p;
		if (victim->tgid && (!p->tgid || p->used < victim->used))
			victim = p;
	}
	if (victim->tgid)
		s->stats.procs_evicted++;
	ustack_maps_free(victim->maps);
	*victim = (struct proc){ .tgid = tgid };
	return s->last = victim;
}

static void proc_read(struct ustack_syms *s, struct proc *p)
{
	struct ustack_maps *m;
	int r;

	s->stats.maps_reads++;
	p->read_ns = now_ns(CLOCK_MONOTONIC);
	r = ustack_maps_read(p->tgid, &m);
	p->err = r < 0 ? r : 0;
	if (r < 0)
		return;
	ustack_maps_free(p->maps);
	p->maps = m;
}

/* The mapping of ip, reading the maps for the first time or again on a
 * miss; NULL with p->err saying why when there is none. */
static struct ustack_map *find_map(struct ustack_syms *s, struct proc *p, uint64_t ip)
{
	struct ustack_map *m = p->maps ? ustack_maps_find(p->maps, ip) : NULL;

	if (m)
		return m;
	if (p->read_ns && now_ns(CLOCK_MONOTONIC) - p->read_ns < USTACK_REREAD_NS)
		return NULL;
	proc_read(s, p);
	return p->maps ? ustack_maps_find(p->maps, ip) : NULL;
}

static int open_mapped(pid_t tgid, const struct ustack_map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)tgid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (m->path[0] != '/')
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)tgid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Not the mapped file: replaced, deleted, or another one by that name. */
	if (fstat(fd, &st) < 0 || st.st_dev != m->dev || st.st_ino != m->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static struct file *file_slot(struct ustack_syms *s, const struct stat *st, bool *found)
{
	struct file *victim = &s->files[0];

	for (size_t i = 0; i < USTACK_FILES; i++) {
		struct file *f = &s->files[i];

		if (f->elf && f->dev == st->st_dev && f->ino == st->st_ino &&
		    f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec) {
			*found = true;
			return f;
		}
		if (victim->elf && (!f->elf || f->used < victim->used))
			victim = f;
	}
	if (victim->elf)
		s->stats.files_evicted++;
	ustack_elf_unref(victim->elf);
	*victim = (struct file){ .dev = st->st_dev, .ino = st->st_ino, .mtime = st->st_mtim };
	*found = false;
	return victim;
}

/* The symbol table of a mapping's file, looked up once per mapping. */
static int map_elf(struct ustack_syms *s, pid_t tgid, struct ustack_map *m)
{
	_cleanup_close_ int fd = -1;
	struct file *f;
	struct stat st;
	bool found;
	int r;

	if (m->elf || m->elf_err)
		return m->elf_err;
	fd = open_mapped(tgid, m);
	if (fd < 0 || fstat(fd, &st) < 0)
		return m->elf_err = fd < 0 ? fd : -errno;
	f = file_slot(s, &st, &found);
	if (!found) {
		r = ustack_elf_load(fd, &f->elf);
		if (r < 0)
			return r;	/* -ENOMEM: not remembered, tried again */
		s->stats.files_loaded++;
	}
	f->used = ++s->tick;
	m->elf = ustack_elf_ref(f->elf);
	return 0;
}

static void put_raw(struct strbuf *out, uint64_t ip, const char *why)
{
	sb_printf(out, "<%016llx>%s", (unsigned long long)ip, why);
}

static void put_unresolved(struct ustack_syms *s, const struct proc *p, uint64_t ip,
			   struct strbuf *out)
{
	if (p->err == -ESRCH) {
		s->stats.exited++;
		put_raw(out, ip, " (process exited)");
	} else if (p->err < 0) {
		s->stats.unreadable++;
		sb_printf(out, "<%016llx> (maps unreadable: %s)", (unsigned long long)ip,
			  strerror(-p->err));
	} else {
		s->stats.unmapped++;
		put_raw(out, ip, " (not mapped)");
	}
}

int ustack_format_frame(struct ustack_syms *s, pid_t tgid, __u64 ip, struct strbuf *out)
{
	struct proc *p;
	struct ustack_map *m;
	const char *sym;
	uint64_t off;

	if (!s) {
		put_raw(out, ip, "");
		return 0;
	}
	s->stats.frames++;
	if (tgid == TRACERD_NS_TGID_NONE) {
		s->stats.other_pidns++;
		put_raw(out, ip, " (process not in tracerd's PID namespace)");
		return 0;
	}
	p = proc_slot(s, tgid);
	p->used = ++s->tick;
	m = find_map(s, p, ip);
	if (!m) {
		put_unresolved(s, p, ip, out);
		return 0;
	}
	if (!m->path) {
		s->stats.no_file++;
		put_raw(out, ip, "");
		return 0;
	}
	sb_puts(out, m->path);
	sb_printf(out, "[+0x%llx]", (unsigned long long)(ip - m->start));
	if (map_elf(s, tgid, m) < 0 || !m->elf ||
	    !(sym = ustack_elf_symbol(m->elf, ip - m->start + m->pgoff, &off))) {
		s->stats.file_only++;
		return 0;
	}
	s->stats.named++;
	sb_printf(out, " %s+0x%llx", sym, (unsigned long long)off);
	return 0;
}
