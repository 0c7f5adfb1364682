/* SPDX-License-Identifier: GPL-2.0 */
/* The running tracer: the stages wired together. The registry knows the
 * events, the loader the BPF side, the consumer the slot table and the
 * ring, the sink the output; the tracer holds the selections and their
 * slots, and applies configs. */
#ifndef TRACERD_TRACER_H
#define TRACERD_TRACER_H

#include <stdint.h>
#include "attach/loader.h"
#include "config/config.h"
#include "consume/consumer.h"
#include "consume/slots.h"
#include "resolve/registry.h"

struct sink;
struct cgroup_watch;

/* What a slot counted before a reload detached it: its selection's changed
 * state (the same Name=) or a removed selection keeps these, so that the
 * summary and the totals count every record once, whatever reloads came
 * between. */
struct slot_past {
	const struct tp_event *event;
	const struct out_slot *out;	/* referenced: queued records count on */
	struct event_stats bpf;		/* the program's, final once detached */
	uint64_t suppressed;
	uint64_t unit_judged, unit_rejected;
	uint64_t vars_expired;
};

struct sel_past {
	char *name;			/* for a removed selection */
	struct slot_past *v;
	size_t n, cap;
};

struct sel_state {
	const struct selection *conf;	/* points into tracer->cfg */
	struct trace_slot **slots;
	size_t n_slots, cap_slots;
	char **refused;			/* glob-matched events the kernel refused */
	size_t n_refused, cap_refused;
	struct rate_limit rl;		/* shared by the slots */
	uint64_t hist_due_usec;		/* the next AggregateIntervalSec= dump, 0: none */
	unsigned hist_interval_sec;	/* what hist_due_usec was set for */
	struct sel_past past;		/* the slots earlier states of this Name= had */
	int *filter_progs;		/* compiled filters its slots run (tracer_emit.c) */
	size_t n_filter_progs;
	unsigned unit_set;		/* Unit=: its set of verdicts (units.c); 0: none */
};

struct tracer {
	struct config cfg;
	struct registry *reg;
	struct loader *ld;
	struct consumer *cons;
	struct sel_state **sels;
	size_t n_sels, cap_sels;
	struct sel_past *removed;	/* selections a reload removed, by name */
	size_t n_removed, cap_removed;
	/* What the last tracer_apply() replaced or removed, still attached
	 * until tracer_retire(), and the config they point into. */
	struct sel_state **retiring;
	size_t n_retiring;
	struct config retiring_cfg;
	struct sink *sink;
	struct hist_maps hist_maps;	/* Aggregate='s maps */
	bool hist_stdout;		/* dumps in the hist file layout on stdout */
	bool metrics;			/* GET /metrics is served: interval dumps are kept */
	bool halted;			/* tracer_halt() ran */
	uint64_t unit_sets;		/* Unit= sets in use, bit set - 1 */
	struct cgroup_watch *cgroup_watch;	/* new cgroups, once a selection has Unit= */
	/* Unit= verdicts the map had no room for (or refused): those cgroups'
	 * events are judged by the daemon, each; and records judged out
	 * because their cgroup, gone, could not be named (units.c). */
	uint64_t unit_unwritten, unit_unnamed;
	struct {			/* the daemon's last Unit= verdict (units.c) */
		bool valid, in;
		unsigned set;
		uint64_t id;
	} unit_last;
	bool synth_written[TRACERD_SYNTH_EVENTS];
	bool trigger_used[TRACERD_HIST_TRIGGERS];	/* hist_triggers' indexes taken */
	uint64_t snap_seen[TRACERD_HIST_TRIGGERS];	/* .snapshot() requests answered */
	uint64_t vars_swept_usec;	/* the last tracer_vars_tick() sweep */	/* synth_subs entries with slots */
	uint64_t *lost_seen;		/* per CPU: the ring buffer's losses passed to the sink */
	size_t n_lost_seen;
	/* task_struct's comm for emitted programs' headers, 0: the helper
	 * (loader_task_comm()); the kernel's answer, asked once. */
	int task_comm_off;
};

/* tracer.c: the tracer's life. tracer_new() returns -ENOMEDIUM if tracefs
 * is not mounted (and cannot be), -EACCES if it may not be read; no other
 * failure returns these. */
int tracer_new(struct tracer **ret, const struct config *cfg, struct diag *d);
/* Where records and messages go from now on; the tracer takes s. def is
 * [Daemon] Output= (records for the store are not rendered); with to_stdout
 * all goes to stdout, histogram dumps too (--foreground). */
void tracer_set_sink(struct tracer *t, struct sink *s, enum output def, bool to_stdout);
void tracer_set_progress(struct tracer *t, loader_progress_fn fn, void *userdata);
/* Stops the programs (from now on an event is not counted), drains what
 * they wrote, writes the histograms' last dumps and lets the sink finish and
 * sync (in bounded time): after this the counters are final, and every
 * event is still attached (but a reload's old ones: tracer_retire() first). */
void tracer_halt(struct tracer *t);
/* tracer_halt() if not yet, then detaches every event: a grace period of
 * the kernel's per event, one after another (tens of ms each). */
void tracer_stop(struct tracer *t);
void tracer_free(struct tracer *t);
/* tracer_drain.c: the ring drained to the sink. Drains up to
 * CONSUMER_DRAIN_BUDGET records, or for CONSUMER_DRAIN_USEC; returns 1 if
 * more may wait. */
int tracer_drain(struct tracer *t);
/* Drains until the ring is empty (at stop, once nothing is attached). */
void tracer_drain_all(struct tracer *t);
/* Drains what was written so far, while events still fire (a reload), and
 * passes the ring's new losses to the sink. */
void tracer_drain_written(struct tracer *t);
int tracer_ring_fd(struct tracer *t);
void tracer_refresh_clock(struct tracer *t);
size_t tracer_attached(struct tracer *t);
int tracer_prog_count(struct tracer *t);

/* report.c: the accounting read across the stages. */
/* Reads the program's per-slot counters for the totals below (one map read,
 * however many slots: see loader_read_stats()). Returns -errno. */
int tracer_read_stats(struct tracer *t);
/* A selection's or slot's accounting: the daemon's counters now, the
 * program's as of the last tracer_read_stats(). A selection's include what
 * its earlier states counted (st->past). */
void tracer_totals(struct tracer *t, const struct sel_state *s, struct sel_totals *tot);
void tracer_slot_totals(struct tracer *t, const struct trace_slot *slot, struct sel_totals *tot);
void sel_past_totals(const struct sel_past *p, struct sel_totals *tot);
/* The daemon-wide sums for STATUS: delivered, suppressed and sink errors
 * of every selection there was, and lost since the start (from BPF, but one
 * element, not the per-slot counters). */
void tracer_all_totals(struct tracer *t, struct sel_totals *sum);
/* One past the highest slot id of the n states. */
unsigned tracer_ids_end(struct sel_state *const *sels, size_t n);
/* Adds the counts of st's slots, detached, to into (their counters are
 * final: read now, slots [0, ids_end), which must hold st's; all slots in
 * use keep the totals above whole). Returns -errno; the counts are not
 * kept then. */
int tracer_keep_counts(struct tracer *t, const struct sel_state *st, unsigned ids_end,
		       struct sel_past *into);
/* Appends from's entries to to (from is empty after). */
int sel_past_move(struct sel_past *to, struct sel_past *from);
void sel_past_free(struct sel_past *p);
/* Events the kernel did not run the program for: see loader_skipped(). */
uint64_t tracer_skipped(struct tracer *t);
const struct record_counts *tracer_record_counts(struct tracer *t);

/* report_hist.c: Aggregate='s dumps. Interval dumps of the selections due at
 * now_usec (CLOCK_MONOTONIC); the last dump of a slot of st once it is
 * detached (why: "final" at stop, "replaced" on reload), then its hist is
 * freed. */
void hist_out_tick(struct tracer *t, uint64_t now_usec);
void hist_out_last(struct tracer *t, const struct sel_state *st, struct trace_slot *slot,
		   const char *why);
void hist_out_stop(struct tracer *t);

/* tracer_emit.c: a selection as emitted BPF programs (with its filter, or
 * none), or the reason the class program runs it (and its interpreter the
 * filter). */
struct sel_emit {
	size_t n;			/* events */
	struct bpf_insn **code;		/* per event, when compiled */
	size_t *n_code;
	int *fd;			/* per event, after sel_emit_load(); -1: none */
	bool filter;			/* the selection has a Filter= */
	bool compiled;			/* false: the class program runs it (why) */
	bool aggregates;		/* Aggregate= counted in the emitted programs */
	bool synthetic;			/* of a synthetic event: its action's program runs it */
	size_t n_shared;		/* compiled, but these events in the class program (why) */
	size_t n_loaded;		/* distinct programs sel_emit_load() loaded */
	uint64_t load_usec;		/* ... in this long */
	char why[400];
};
/* Emits every event's program with m's maps (fds -1 to check only). */
int sel_emit_build(struct sel_emit *se, const struct selection *s, struct tp_event **events,
		   const struct event_desc *descs, struct hist **hists, size_t n,
		   const struct filter_emit_maps *m);
/* Loads each distinct program once; *progs, the fds, to close with
 * loader_filter_close(). A refusal logs the verifier's message and leaves
 * the selection to the interpreter: never an error. */
int sel_emit_load(struct loader *l, struct sel_emit *se, const struct selection *s,
		  int **progs, size_t *n_progs);
/* Says at start, reload and --check-config how the selection runs. */
void sel_emit_log(const struct sel_emit *se, const struct selection *s);
void sel_emit_free(struct sel_emit *se);

/* tracer_apply.c. Resolves every selection and compiles its filters against reg,
 * attaching nothing. */
int tracer_check(struct registry *reg, const struct config *cfg, struct diag *d);
/* Applies cfg (taking ownership of it on success): attaches what is new or
 * changed and switches to it; unchanged selections keep their attachments.
 * What went away stays attached (its records still count) until
 * tracer_retire(). On error nothing changes and d says why; what it
 * attached is detached again, the ring drained meanwhile. */
int tracer_apply(struct tracer *t, struct config *cfg, struct diag *d);
/* Detaches what the last tracer_apply() replaced or removed, calling idle
 * (NULL: none) meanwhile, then keeps their counts and frees them. */
void tracer_apply_finish(struct tracer *t, loader_idle_fn idle, void *userdata);
/* tracer_apply_finish(), draining the ring buffer to the sink meanwhile
 * (seconds for a large selection: the selections that stay fire on). */
void tracer_retire(struct tracer *t);
/* Detaches every slot of st, drains what they already wrote, frees st. */
void sel_state_free(struct tracer *t, struct sel_state *st);

/* tracer_link.c: the inter-event triggers of sels bound (hist_link()) and
 * written, with each synthetic event's selections; tracer_link_check(),
 * the same on what tracer_check() built, without slots. */
int tracer_link(struct tracer *t, struct sel_state **sels, size_t n, struct diag *d);
/* onmax()/onchange().snapshot(): the requests the triggers' program
 * counted since the last poll go to the recorder, named after their
 * selection (the flush timer, after the drain). */
void tracer_snapshot_poll(struct tracer *t);
/* Ages out the triggers' variables (VariableMaxAgeSec=), called each
 * second; due_usec, the timer's time (CLOCK_MONOTONIC). */
void tracer_vars_tick(struct tracer *t, uint64_t due_usec);
int tracer_link_check(struct registry *reg, struct hist ***hists, struct tp_event ***events,
		      const size_t *n_events, size_t n, struct diag *d);

/* Each (selection, event) with its totals as of the last tracer_read_stats():
 * the running slots' with what earlier states of the selection counted for the
 * same event, then the events those states had and the running ones no longer
 * do, and the removed selections' (report_events(), the metrics). */
typedef void (*tracer_event_fn)(void *userdata, const char *selection, const struct tp_event *e,
				const struct sel_totals *tot);
void tracer_each_event(struct tracer *t, tracer_event_fn fn, void *userdata);

#endif
