/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the filter emitter: the emitter's state and its instruction
 * buffer (instructions, labels, jumps), shared by filter_emit.c (the
 * decision), filter_emit_str.c (its string leaves) and filter_emit_frame.c
 * (what the class program does around it: the head, and what becomes of a
 * kept record). */
#ifndef TRACERD_FILTER_EMIT_PRIV_H
#define TRACERD_FILTER_EMIT_PRIV_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "filter_emit.h"

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

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R4 BPF_REG_4
#define R5 BPF_REG_5
#define R_CTX BPF_REG_6
#define R_PIDTGID BPF_REG_7
#define R_CPU BPF_REG_8
#define R_REC BPF_REG_8		/* the record reserved in the ring: the filter is done */
#define R_STATS BPF_REG_9	/* this CPU's stats[cookie] (the program's head) */
#define R_FP BPF_REG_10

#define MAX_NODES (2 * TRACERD_FILTER_INSNS)
#define MAX_LABELS (2 * MAX_NODES + 2)

enum enode_kind { EN_LEAF, EN_TRUE, EN_NOT, EN_AND, EN_OR };

struct enode {
	enum enode_kind kind;
	int insn;		/* EN_LEAF: index into d->insns */
	int l, r;		/* children, node indices */
};

struct emitter {
	const struct event_desc *d;
	const struct filter_emit_maps *m;
	struct bpf_insn *out;
	int n;
	struct enode nodes[MAX_NODES];
	int n_nodes;
	int label_at[MAX_LABELS];	/* instruction index, -1: not placed */
	int n_labels;
	int jump_label[FILTER_EMIT_MAX];	/* the label a jump goes to, -1: none */
	char *why;
	size_t why_size;
	int err;
};

static inline int unsupported(struct emitter *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int unsupported(struct emitter *e, const char *fmt, ...)
{
	va_list ap;

	if (e->err)
		return e->err;
	va_start(ap, fmt);
	vsnprintf(e->why, e->why_size, fmt, ap);
	va_end(ap);
	return e->err = -EOPNOTSUPP;
}

/* ---- instructions ---- */

static inline void put(struct emitter *e, struct bpf_insn in, int label)
{
	if (e->n >= FILTER_EMIT_MAX) {
		unsupported(e, "the filter needs more than %d BPF instructions", FILTER_EMIT_MAX);
		return;
	}
	e->jump_label[e->n] = label;
	e->out[e->n++] = in;
}

static inline struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				  .imm = imm };
}

static inline void mov_reg(struct emitter *e, int dst, int src)
{
	put(e, insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0), -1);
}

static inline void mov_imm(struct emitter *e, int dst, int32_t imm)
{
	put(e, insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm), -1);
}

static inline void alu_imm(struct emitter *e, int op, int dst, int32_t imm)
{
	put(e, insn(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm), -1);
}

static inline void alu_reg(struct emitter *e, int op, int dst, int src)
{
	put(e, insn(BPF_ALU64 | op | BPF_X, dst, src, 0, 0), -1);
}

/* dst = imm, 64 bits: two instruction slots. */
static inline void ld_imm64(struct emitter *e, int dst, int src, uint64_t imm)
{
	put(e, insn(BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, (int32_t)(uint32_t)imm), -1);
	put(e, insn(0, 0, 0, 0, (int32_t)(uint32_t)(imm >> 32)), -1);
}

static inline void ldx(struct emitter *e, int size, int dst, int src, int16_t off)
{
	put(e, insn(BPF_LDX | BPF_MEM | size, dst, src, off, 0), -1);
}

static inline void call(struct emitter *e, int helper)
{
	put(e, insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper), -1);
}

static inline void jmp_imm(struct emitter *e, int op, int dst, int32_t imm, int label)
{
	put(e, insn(BPF_JMP | op | BPF_K, dst, 0, 0, imm), label);
}

static inline void jmp_reg(struct emitter *e, int op, int dst, int src, int label)
{
	put(e, insn(BPF_JMP | op | BPF_X, dst, src, 0, 0), label);
}

static inline void jump(struct emitter *e, int label)
{
	put(e, insn(BPF_JMP | BPF_JA, 0, 0, 0, 0), label);
}

/* A decision known here, made at run time all the same: the verifier
 * refuses code that no jump reaches, and a plain jump would leave the
 * other side of an && or || unreached. */
static inline void const_branch(struct emitter *e, bool v, int t, int f)
{
	mov_imm(e, R0, 0);
	jmp_imm(e, BPF_JEQ, R0, 0, v ? t : f);
	jump(e, v ? f : t);
}

static inline void ret1(struct emitter *e)
{
	mov_imm(e, R0, 1);
	put(e, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), -1);
}

static inline int label_new(struct emitter *e)
{
	if (e->n_labels >= MAX_LABELS) {
		unsupported(e, "the filter has too many branches");
		return 0;
	}
	e->label_at[e->n_labels] = -1;
	return e->n_labels++;
}

static inline void label_place(struct emitter *e, int label)
{
	e->label_at[label] = e->n;
}

/* Every jump's offset, now that every label is placed. */
static inline int resolve_jumps(struct emitter *e)
{
	for (int i = 0; i < e->n; i++) {
		int l = e->jump_label[i], to;

		if (l < 0)
			continue;
		to = e->label_at[l];
		if (to < 0 || to - (i + 1) > INT16_MAX)
			return unsupported(e, "a jump of the filter's code is out of range");
		e->out[i].off = to - (i + 1);
	}
	return 0;
}

/* r0 = the record's number at off, widened to 64 bits as tracerd_load()
 * does. Unaligned: byte by byte, little endian. */
static inline void load_ctx_number(struct emitter *e, unsigned off, unsigned size, bool is_signed)
{
	static const int bpf_size[9] = { [1] = BPF_B, [2] = BPF_H, [4] = BPF_W, [8] = BPF_DW };

	if (off % size == 0) {
		ldx(e, bpf_size[size], R0, R_CTX, off);
	} else {
		ldx(e, BPF_B, R0, R_CTX, off);
		for (unsigned i = 1; i < size; i++) {
			ldx(e, BPF_B, R1, R_CTX, off + i);
			alu_imm(e, BPF_LSH, R1, 8 * i);
			alu_reg(e, BPF_OR, R0, R1);
		}
	}
	if (is_signed && size < 8) {
		alu_imm(e, BPF_LSH, R0, 64 - 8 * size);
		alu_imm(e, BPF_ARSH, R0, 64 - 8 * size);
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
