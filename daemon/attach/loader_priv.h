/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the loader: shared by loader.c, attach.c and detach.c. */
#ifndef TRACERD_LOADER_PRIV_H
#define TRACERD_LOADER_PRIV_H

#include "attach/loader.h"
#include "tracerd.skel.h"

/* The kernel lets one program attach to a tracepoint only once (EEXIST), so
 * an event that two selections share, or that a changed selection re-attaches
 * before its old attachment goes, uses another copy of the class program:
 * same code, same maps. Copies are loaded on demand and freed when unused,
 * the first one too: with every selection emitted, none is needed, and its
 * verification is most of a start's time (1.2 s of the kernel's CPU, the
 * aggregation paths' states; the accept program's takes 0.09 s). */
#define TRACERD_PROG_INSTANCES 8

struct loader {
	struct tracerd_bpf *skel;	/* the maps and the accept program */
	struct tracerd_bpf *extra[TRACERD_PROG_INSTANCES];	/* the class program's copies */
	struct tracerd_bpf *trigger;	/* inter-event triggers' program, once needed */
	unsigned extra_users[TRACERD_PROG_INSTANCES];
	int *filter_fds;		/* emitted filters loaded (filter_prog.c) */
	size_t n_filter_progs, cap_filter_fds;
	uint64_t skipped_retired;	/* kernel skips of program copies since freed */
	struct event_stats *snap;	/* the last loader_read_stats(): [slot][cpu] */
	unsigned snap_n, snap_cap;	/* slots read, slots allocated */
	loader_progress_fn progress;
	void *progress_userdata;
	uint64_t progress_last_usec;
	uint32_t unit_gen;		/* the last generation of Unit= verdicts written */
};

/* Puts the accept program in the filters array (filter_prog.c). */
int loader_accept_init(struct loader *l);

/* Events the kernel did not run program fd for (recursion_misses). */
uint64_t prog_fd_skipped(int fd);

/* Copy k (>= 1) of the class program, loaded on first use. */
struct bpf_program *loader_instance(struct loader *l, unsigned k, int *err);
/* Frees copy k (>= 1), keeping its count of skips. */
void loader_instance_destroy(struct loader *l, unsigned k);
/* One link of copy k went; the copy goes with its last. */
void loader_instance_unuse(struct loader *l, unsigned k);

#endif
