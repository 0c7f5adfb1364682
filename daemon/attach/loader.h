/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF side: the class program loaded (with copies of it, see
 * loader_priv.h), attached once per selected event with the event's slot as
 * the BPF cookie, its per-slot maps, and its ring buffer. The only stage
 * that knows the BPF skeleton. */
#ifndef TRACERD_LOADER_H
#define TRACERD_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include "diag.h"
#include "kernel-events/events.h"
#include "tracerd_record.h"
#include "aggregate/hist_map.h"
#include "filter/filter_emit.h"

struct bpf_link;
struct loader;

/* One event's attachment: its BPF link and perf event, and through which
 * copy of the class program: 1 + its index, 0 for an emitted filter. */
struct attachment {
	int link_fd, perf_fd;
	bool attached;
	unsigned instance;
};

/* Called about once a second while attaching or detaching blocks the
 * caller (detaching 1500 events takes a minute or more: the kernel waits
 * for RCU grace periods, one event at a time), with how many of how many
 * are done, so that the service manager hears that it progresses. */
typedef void (*loader_progress_fn)(void *userdata, size_t done, size_t total);

/* loader.c */
int loader_new(struct loader **ret, uint64_t ring_size, uint64_t wakeup_bytes, struct diag *d);
void loader_free(struct loader *l);
int loader_ring_fd(const struct loader *l);
void loader_set_progress(struct loader *l, loader_progress_fn fn, void *userdata);
/* Calls the progress callback, at most once a second. */
void loader_progress(struct loader *l, size_t done, size_t total);
/* Zeroes slot id's counters and writes its descriptor: a slot about to be
 * attached starts from nothing. Returns -errno. */
int loader_set_slot(struct loader *l, unsigned id, const struct event_desc *desc);
/* Aggregate='s maps, for hist_map.c. */
int loader_hist_maps(struct loader *l, struct hist_maps *m);
/* Inter-event triggers (bpf/hist_trigger.bpf.h): slot's trigger at index
 * (agg_desc.trigger - 1; NULL: none any more, the slot's variables deleted:
 * returns the starts not read); the slots of the selections of
 * synthetic event index. */
int loader_set_trigger(struct loader *l, unsigned index, unsigned slot,
		       const struct hist_trigger *t);
/* onmax()/onchange().snapshot() of the trigger at index: how many times
 * it asked for a snapshot since it was set. */
int loader_snapshot_requests(struct loader *l, unsigned index, uint64_t *requests);
/* Loads the triggers' program (once), before the first trigger is bound. */
int loader_trigger_init(struct loader *l);
int loader_set_synth_subs(struct loader *l, unsigned index, const struct synth_subs *subs);
/* Deletes the variables not set for max_age_ns: starts whose end never
 * came (*expired, by slot via cb) and read ones no longer used. */
int loader_vars_sweep(struct loader *l, uint64_t now_ns, uint64_t max_age_ns,
		      void (*expired)(void *userdata, unsigned slot), void *userdata);
/* Reads the program's counters of slots [0, n) (one map read per report,
 * not per slot: see loader.c). Returns -errno. */
int loader_read_stats(struct loader *l, unsigned n);
/* Adds what the program counted for slot id, over every CPU, to sum, as of
 * the last loader_read_stats(). */
void loader_slot_stats(struct loader *l, unsigned id, struct event_stats *sum);
/* Records lost (ring buffer full) since the start, every slot that ever
 * was: one element, read at once. */
uint64_t loader_lost_total(struct loader *l);
/* The same per CPU, into v[0..n); returns how many CPUs it filled, or -errno. */
int loader_lost_by_cpu(struct loader *l, uint64_t *v, size_t n);
/* From now on the class program returns at once, before it counts a hit:
 * what fires is neither a record nor a loss. Programs already running
 * finish as they started; wait for them (hist_wait_programs()). Events stay
 * attached: detaching is the slow part, and comes after. */
void loader_stop_programs(struct loader *l);
/* Programs loaded: the class program and its copies, however many events. */
int loader_prog_count(struct loader *l);
/* Events the kernel did not run the program for (bpf_prog_info.recursion_misses,
 * summed over every copy, freed ones too): a BPF program already ran on that CPU. */
uint64_t loader_skipped(struct loader *l);

/* filter_prog.c: compiled filters. The maps an emitted program uses. */
void loader_filter_maps(struct loader *l, struct filter_emit_maps *m);
/* Loads emitted code; returns the program's fd, or -errno with why (the
 * verifier's message) filled. */
int loader_filter_load(struct loader *l, const struct bpf_insn *code, size_t n, char *why,
		       size_t why_size);
/* off (task_struct's comm in the kernel's BTF, 0: unknown) if the kernel
 * lets a tracepoint program read it through bpf_get_current_task_btf()
 * (a probe program: the verifier, and CAP_PERFMON, decide), else 0. */
int loader_task_comm(int off);
/* A program of loader_filter_load() no event is attached to now. */
void loader_filter_close(struct loader *l, int fd);

/* attach.c: attaches prog_fd (an emitted filter), or the class program
 * when -1, to e with cookie id. Returns -errno: the kernel (or loading a
 * copy) refused. */
int loader_attach(struct loader *l, const struct tp_event *e, unsigned id, int prog_fd,
		  struct attachment *a);
void loader_detach(struct loader *l, struct attachment *a);
/* Closes a's link and perf event, nothing else (detach.c's threads). */
void attachment_close(struct attachment *a);

/* detach.c: detaches many at once, from threads, calling the progress
 * callback while the caller waits, and idle (NULL: none) every few ms on
 * the caller's thread: what else must go on meanwhile (a reload drains the
 * ring buffer). */
typedef void (*loader_idle_fn)(void *userdata);
void loader_detach_many(struct loader *l, struct attachment **a, size_t n,
			loader_idle_fn idle, void *userdata);

/* Unit=: the verdict (UNIT_ACCEPT, UNIT_REJECT) on a cgroup for a set of
 * units; forget drops a set's verdicts. */
int loader_unit_verdict(struct loader *l, unsigned set, uint64_t cgroup_id, unsigned verdict);
void loader_unit_forget(struct loader *l, unsigned set);
/* After writing or forgetting verdicts: the program's remembered answers go. */
void loader_unit_changed(struct loader *l);
/* The level, in the whole cgroup2 tree, of the root of tracerd's cgroup2
 * mount (0 on a host; deeper in a container's cgroup namespace); -1:
 * unknown. */
int loader_unit_root_level(const struct loader *l);

#endif
