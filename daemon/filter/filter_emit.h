/* SPDX-License-Identifier: GPL-2.0 */
/* The filter emitter: one event's compiled filter (event_desc.insns, from
 * filter_compile.c) and histogram to a BPF tracepoint program that decides
 * at constant offsets of the record, attached in the class program's
 * place. */
#ifndef TRACERD_FILTER_EMIT_H
#define TRACERD_FILTER_EMIT_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracerd_record.h"

/* Instructions of an emitted program, at most. */
#define FILTER_EMIT_MAX 4096

/* The class program's maps that the emitted program uses: the per-slot
 * counters (a rejected record is `filtered`) and the program array (a
 * kept one goes to its TRACERD_ACCEPT_PROG). -1 when only checking
 * (FILTER_EMIT_NO_MAPS). */
struct filter_emit_maps {
	int stats_fd;
	int accept_fd;
	/* The class program's .bss, for its `stopped` at stopped_off, and
	 * the daemon's tgid: the head it shares with the class program. */
	int bss_fd;
	uint32_t stopped_off;
	uint32_t self_tgid;
	/* Where a kept record of fixed size is written (filter_emit_frame.c):
	 * the ring (-1: always the accept program), lost_total, WakeupBytes. */
	int rb_fd;
	int lost_total_fd;
	/* A record with __data_loc strings is built here before it is
	 * written (emit_rec; -1: the accept program writes it). */
	int rec_fd;
	uint64_t wakeup_bytes;
	/* task_struct's comm in the running kernel's BTF, for the record's
	 * header (tp_classes_task_comm()); 0: bpf_get_current_comm(). */
	int task_comm_off;
	/* The selection has Unit=: the accept program checks it. */
	bool unit;
	/* Aggregate= (filter_emit_frame.c): the event's histogram, NULL:
	 * none, and the maps of its descriptors, keys (by enum agg_map) and
	 * stack ids (-1: always the accept program). */
	const struct agg_desc *agg;
	int agg_descs_fd;
	int agg_keys_fd[AGG_MAPS];
	int agg_stacks_fd;
	/* The decision alone: return 1 kept, 0 rejected, touching no map.
	 * For the tests and the fuzzer, which run the code as a
	 * BPF_PROG_TYPE_SYSCALL program on records of their own. */
	bool verdict;
};

/* No map: the code is built to be checked or compared, not loaded. */
#define FILTER_EMIT_NO_MAPS								\
	((struct filter_emit_maps){ .stats_fd = -1, .accept_fd = -1, .bss_fd = -1,	\
				    .rb_fd = -1, .lost_total_fd = -1, .rec_fd = -1,	\
				    .agg_descs_fd = -1, .agg_keys_fd = { -1, -1, -1 },	\
				    .agg_stacks_fd = -1 })

/* Every map there, none opened: the code built as the daemon would build it
 * (the maps' presence decides what the program does itself), to be checked,
 * never loaded: --check-config says what tracerd would do. */
#define FILTER_EMIT_UNOPENED INT32_MAX
#define FILTER_EMIT_CHECK_MAPS								\
	((struct filter_emit_maps){							\
		.stats_fd = FILTER_EMIT_UNOPENED, .accept_fd = FILTER_EMIT_UNOPENED,	\
		.bss_fd = FILTER_EMIT_UNOPENED, .rb_fd = FILTER_EMIT_UNOPENED,		\
		.lost_total_fd = FILTER_EMIT_UNOPENED, .rec_fd = FILTER_EMIT_UNOPENED,	\
		.agg_descs_fd = FILTER_EMIT_UNOPENED,					\
		.agg_keys_fd = { FILTER_EMIT_UNOPENED, FILTER_EMIT_UNOPENED,		\
				 FILTER_EMIT_UNOPENED },				\
		.agg_stacks_fd = FILTER_EMIT_UNOPENED })

/* Why a record the emitted program keeps goes to the accept half, which
 * writes it (a phrase for the log); NULL: the program writes it itself. */
const char *filter_emit_hands_on(const struct event_desc *d, const struct filter_emit_maps *m);

/* Whether m->agg is counted in the emitted program itself. */
bool filter_emit_aggregates(const struct filter_emit_maps *m);

/* Emits d's program into out[FILTER_EMIT_MAX] (no filter, d->n_insns == 0:
 * every event kept); returns the number of instructions, or -EOPNOTSUPP
 * with why (a sentence for the log: why the class program runs instead)
 * filled. */
int filter_emit(const struct event_desc *d, const struct filter_emit_maps *m,
		struct bpf_insn *out, char *why, size_t why_size);

#endif
