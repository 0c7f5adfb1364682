/* SPDX-License-Identifier: GPL-2.0 */
/* A small BPF assembler for the filter emitter: an instruction buffer,
 * labels that jumps name before they are placed, and the first error, kept
 * with the reason (a program it cannot build falls back to the class
 * program, and the user is told why). */
#ifndef TRACERD_EMIT_ASM_H
#define TRACERD_EMIT_ASM_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/bpf.h>
#include "filter_emit.h"

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R4 BPF_REG_4
#define R5 BPF_REG_5
#define R_FP BPF_REG_10

/* Two labels per node of a filter's tree (filter_emit.c), and the frame's. */
#define ASM_MAX_LABELS (4 * TRACERD_FILTER_INSNS + 2)

struct emit_asm {
	struct bpf_insn *out;
	int n;
	int label_at[ASM_MAX_LABELS];	/* instruction index, -1: not placed */
	int n_labels;
	int jump_label[FILTER_EMIT_MAX];	/* the label a jump goes to, -1: none */
	char *why;
	size_t why_size;
	int err;
};

/* The first failure wins: its reason stays in why; returns -EOPNOTSUPP. */
static inline int asm_fail(struct emit_asm *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int asm_fail(struct emit_asm *a, const char *fmt, ...)
{
	va_list ap;

	if (a->err)
		return a->err;
	va_start(ap, fmt);
	vsnprintf(a->why, a->why_size, fmt, ap);
	va_end(ap);
	return a->err = -EOPNOTSUPP;
}

static inline void put(struct emit_asm *a, struct bpf_insn in, int label)
{
	if (a->n >= FILTER_EMIT_MAX) {
		asm_fail(a, "the filter needs more than %d BPF instructions", FILTER_EMIT_MAX);
		return;
	}
	a->jump_label[a->n] = label;
	a->out[a->n++] = in;
}

static inline struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				  .imm = imm };
}

static inline void mov_reg(struct emit_asm *a, int dst, int src)
{
	put(a, insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0), -1);
}

static inline void mov_imm(struct emit_asm *a, int dst, int32_t imm)
{
	put(a, insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm), -1);
}

static inline void alu_imm(struct emit_asm *a, int op, int dst, int32_t imm)
{
	put(a, insn(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm), -1);
}

static inline void alu_reg(struct emit_asm *a, int op, int dst, int src)
{
	put(a, insn(BPF_ALU64 | op | BPF_X, dst, src, 0, 0), -1);
}

/* dst = imm, 64 bits: two instruction slots. */
static inline void ld_imm64(struct emit_asm *a, int dst, int src, uint64_t imm)
{
	put(a, insn(BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, (int32_t)(uint32_t)imm), -1);
	put(a, insn(0, 0, 0, 0, (int32_t)(uint32_t)(imm >> 32)), -1);
}

static inline void ldx(struct emit_asm *a, int size, int dst, int src, int16_t off)
{
	put(a, insn(BPF_LDX | BPF_MEM | size, dst, src, off, 0), -1);
}

static inline void call(struct emit_asm *a, int helper)
{
	put(a, insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper), -1);
}

static inline void jmp_imm(struct emit_asm *a, int op, int dst, int32_t imm, int label)
{
	put(a, insn(BPF_JMP | op | BPF_K, dst, 0, 0, imm), label);
}

static inline void jmp_reg(struct emit_asm *a, int op, int dst, int src, int label)
{
	put(a, insn(BPF_JMP | op | BPF_X, dst, src, 0, 0), label);
}

static inline void jump(struct emit_asm *a, int label)
{
	put(a, insn(BPF_JMP | BPF_JA, 0, 0, 0, 0), label);
}

/* A decision known here, made at run time all the same: the verifier
 * refuses code that no jump reaches, and a plain jump would leave the
 * other side of an && or || unreached. */
static inline void const_branch(struct emit_asm *a, bool v, int t, int f)
{
	mov_imm(a, R0, 0);
	jmp_imm(a, BPF_JEQ, R0, 0, v ? t : f);
	jump(a, v ? f : t);
}

static inline void ret1(struct emit_asm *a)
{
	mov_imm(a, R0, 1);
	put(a, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), -1);
}

static inline int label_new(struct emit_asm *a)
{
	if (a->n_labels >= ASM_MAX_LABELS) {
		asm_fail(a, "the filter has too many branches");
		return 0;
	}
	a->label_at[a->n_labels] = -1;
	return a->n_labels++;
}

static inline void label_place(struct emit_asm *a, int label)
{
	a->label_at[label] = a->n;
}

/* Every jump's offset, now that every label is placed. */
static inline int resolve_jumps(struct emit_asm *a)
{
	for (int i = 0; i < a->n; i++) {
		int l = a->jump_label[i], to;

		if (l < 0)
			continue;
		to = a->label_at[l];
		if (to < 0 || to - (i + 1) > INT16_MAX)
			return asm_fail(a, "a jump of the filter's code is out of range");
		a->out[i].off = to - (i + 1);
	}
	return 0;
}

#endif
