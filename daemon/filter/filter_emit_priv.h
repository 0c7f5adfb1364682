/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the filter emitter: its frame (the stack slots, and the registers
 * that hold one value throughout) and its state, shared by filter_emit.c
 * (the decision), filter_emit_str.c (its string leaves) and filter_emit_frame.c
 * (what the class program does around it: the head, and what becomes of a
 * kept record). */
#ifndef TRACERD_FILTER_EMIT_PRIV_H
#define TRACERD_FILTER_EMIT_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include "emit_asm.h"

/* The stack: a __data_loc string's length, comm, a string's bytes, and the
 * head's and the write's own; below them a glob's window on its string
 * (filter_emit_str.c). */
#define FP_KEY		(-8)	/* a __data_loc string's length */
#define FP_COMM		(-24)
#define FP_STR		(-96)	/* TRACERD_FILTER_STR + 8 bytes, up to FP_COMM */
#define FP_AVAIL	(-104)	/* the ring's unread bytes, before a record is written */
#define FP_COOKIE	(-112)	/* the head's cookie: event id << 32 | slot */
#define STR_WIN		256	/* bytes of a string a glob looks at per read */
#define FP_SPOS		(-152)	/* the glob's next window: its offset from ctx or r10 */
#define FP_SLEFT	(-160)	/* the string's bytes from there */
#define FP_WIN		(-424)	/* STR_WIN + 1 bytes, up to FP_SLEFT */
/* A histogram's key: agg_key_hdr, then its map's key bytes (up to
 * TRACERD_AGG_LARGE). It shares the glob's room: the filter is done when
 * the key is built. */
#define FP_AGGKEY	(FP_COOKIE - 8 - TRACERD_AGG_LARGE)

#define R_CTX BPF_REG_6
#define R_PIDTGID BPF_REG_7
#define R_CPU BPF_REG_8
#define R_REC BPF_REG_8		/* the record reserved in the ring: the filter is done */
#define R_STATS BPF_REG_9	/* this CPU's stats[cookie] (the program's head) */

#define MAX_NODES (2 * TRACERD_FILTER_INSNS)

enum enode_kind { EN_LEAF, EN_TRUE, EN_NOT, EN_AND, EN_OR };

struct enode {
	enum enode_kind kind;
	int insn;		/* EN_LEAF: index into d->insns */
	int l, r;		/* children, node indices */
};

struct emitter {
	const struct event_desc *d;
	const struct filter_emit_maps *m;
	struct emit_asm a;	/* the code being written */
	struct enode nodes[MAX_NODES];
	int n_nodes;
};

/* r0 = the record's number at off, widened to 64 bits as tracerd_load()
 * does. Unaligned: byte by byte, little endian. */
static inline void load_ctx_number(struct emitter *e, unsigned off, unsigned size, bool is_signed)
{
	static const int bpf_size[9] = { [1] = BPF_B, [2] = BPF_H, [4] = BPF_W, [8] = BPF_DW };

	if (off % size == 0) {
		ldx(&e->a, bpf_size[size], R0, R_CTX, off);
	} else {
		ldx(&e->a, BPF_B, R0, R_CTX, off);
		for (unsigned i = 1; i < size; i++) {
			ldx(&e->a, BPF_B, R1, R_CTX, off + i);
			alu_imm(&e->a, BPF_LSH, R1, 8 * i);
			alu_reg(&e->a, BPF_OR, R0, R1);
		}
	}
	if (is_signed && size < 8) {
		alu_imm(&e->a, BPF_LSH, R0, 64 - 8 * size);
		alu_imm(&e->a, BPF_ARSH, R0, 64 - 8 * size);
	}
}

/* filter_emit_str.c: a string leaf (FOP_STRCMP), to t when it holds. */
int emit_string(struct emitter *e, const struct filter_insn *in, int t, int f);

/* filter_emit_frame.c. The head: the class program's checks before its
 * filter, the hit counted; to pass when the event is not this program's. */
void emit_head(struct emitter *e, int pass);
/* Rejected: filtered counted, then to pass. */
void emit_reject(struct emitter *e, int pass);
/* Kept: written to the ring buffer here, or handed to the accept program. */
void emit_keep(struct emitter *e, int pass);

#endif
