// SPDX-License-Identifier: GPL-2.0
/* A string leaf of the emitted filter (point 4 of filter_emit.c's design):
 * `==`, `!=` and the globs that the kernel's filter splits from the rest
 * (filter_parse_regex(): full "abc", front "abc*", end "*abc", middle
 * "*abc*"), over a char array of the record, comm (on the stack) or a
 * __data_loc/__rel_loc string. The interpreter (bpf/filter.bpf.h) is the
 * reference: a string is its bytes up to the first NUL or its size, so
 * "*abc" is the end of that string, where the kernel's own filter looks at
 * the end of a char array's whole buffer. Other globs are not emitted. */
#include <string.h>
#include "filter_emit_priv.h"

/* may_goto (Linux 6.9): taken only once the program has looped
 * BPF_MAX_LOOPS times, which these loops never do. The verifier checks a
 * loop's body a few times, widening the counters it need not know, instead
 * of once per iteration: a __data_loc string of up to 8 KiB costs it a few
 * hundred instructions (test_filter_emit shows them). */
#define EMIT_MAY_GOTO (BPF_JMP | 0xe0)

/* How a pattern compares: the whole string, its start, its end, or
 * anywhere in it. */
enum str_match { SM_WHOLE, SM_PREFIX, SM_SUFFIX, SM_SUBSTR };

/* The literal part of pat: *lit, *len bytes, and where it must be. */
static int classify(struct emitter *e, const struct filter_insn *in, const char *pat,
		    enum str_match *how, const char **lit, size_t *len)
{
	size_t n = strlen(pat), meta;

	*how = SM_WHOLE;
	*lit = pat;
	*len = n;
	if (in->cmp == FCMP_EQ || in->cmp == FCMP_NE)
		return 0;
	meta = strcspn(pat, "*?[\\");
	if (meta == n)
		return 0;
	if (meta == n - 1 && pat[meta] == '*') {
		*how = SM_PREFIX;
		*len = n - 1;
		return 0;
	}
	if (meta == 0 && pat[0] == '*') {
		meta = 1 + strcspn(pat + 1, "*?[\\");
		*lit = pat + 1;
		*len = meta - 1;
		if (meta == n) {
			*how = SM_SUFFIX;
			return 0;
		}
		if (meta == n - 1 && pat[meta] == '*') {
			*how = SM_SUBSTR;
			return 0;
		}
	}
	return asm_fail(&e->a, "the glob \"%s\" (only \"abc\", \"abc*\", \"*abc\" and \"*abc*\" "
			   "are compiled)", pat);
}

/* Byte i of the string against c: for a byte at base + i of base_reg. */
static void byte_ne(struct emitter *e, int base_reg, int off, uint8_t c, int f)
{
	ldx(&e->a, BPF_B, R1, base_reg, off);
	jmp_imm(&e->a, BPF_JNE, R1, c, f);
}

/* A string of n bytes at a constant place (a char array in ctx, comm on
 * the stack): bytes past n are NUL, as str_byte() reads them. */
static void str_fixed(struct emitter *e, int base_reg, int off, unsigned n, const char *pat,
		      size_t len, enum str_match how, int t, int f)
{
	if (len > n) {		/* a pattern byte against the NUL past the end */
		const_branch(&e->a, false, t, f);
		return;
	}
	if (!len && how == SM_PREFIX) {	/* "*": any string */
		const_branch(&e->a, true, t, f);
		return;
	}
	for (size_t i = 0; i < len; i++)
		byte_ne(e, base_reg, off + i, (uint8_t)pat[i], f);
	if (how == SM_WHOLE && len < n)
		byte_ne(e, base_reg, off + len, 0, f);
	jump(&e->a, t);
}

/* A __data_loc string, (len << 16 | offset) at in->off: r3 = its offset
 * in ctx, r0 = its bytes, cut at TRACERD_MAX_RECORD as the interpreter's
 * copy is; to f when it has fewer than min. */
static void data_loc_place(struct emitter *e, const struct filter_insn *in, size_t min, int f)
{
	int have_all = label_new(&e->a), done = label_new(&e->a);

	load_ctx_number(e, in->off, 4, false);
	mov_reg(&e->a, R3, R0);
	alu_imm(&e->a, BPF_AND, R3, 0xffff);		/* r3 = offset */
	if (in->src == SRC_REL_LOC)
		alu_imm(&e->a, BPF_ADD, R3, in->off + 4);
	alu_imm(&e->a, BPF_RSH, R0, 16);			/* r0 = length */
	mov_imm(&e->a, R2, TRACERD_MAX_RECORD);
	jmp_reg(&e->a, BPF_JGT, R2, R3, have_all);
	mov_imm(&e->a, R0, 0);
	jump(&e->a, done);
	label_place(&e->a, have_all);
	alu_reg(&e->a, BPF_SUB, R2, R3);			/* r2 = room left */
	jmp_reg(&e->a, BPF_JGE, R2, R0, done);
	mov_reg(&e->a, R0, R2);
	label_place(&e->a, done);
	jmp_imm(&e->a, BPF_JLT, R0, min, f);
}

/* A __data_loc string, "abc" or "abc*": its bytes read to the stack, only
 * those the string has. */
static void str_data_loc(struct emitter *e, const struct filter_insn *in, const char *pat,
			 size_t len, enum str_match how, int t, int f)
{
	size_t want = len + (how == SM_WHOLE);
	int capped = label_new(&e->a);

	data_loc_place(e, in, len, f);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_KEY, 0), -1);	/* n */
	/* Read min(n, want) bytes: none past the string. */
	mov_reg(&e->a, R2, R0);
	jmp_imm(&e->a, BPF_JLE, R2, want, capped);
	mov_imm(&e->a, R2, want);
	label_place(&e->a, capped);
	mov_reg(&e->a, R1, R_FP);
	alu_imm(&e->a, BPF_ADD, R1, FP_STR);
	alu_reg(&e->a, BPF_ADD, R3, R_CTX);
	call(&e->a, BPF_FUNC_probe_read_kernel);
	for (size_t i = 0; i < len; i++)
		byte_ne(e, R_FP, FP_STR + i, (uint8_t)pat[i], f);
	if (how == SM_WHOLE) {
		/* n == len: the string ends with the pattern; longer: a NUL next. */
		ldx(&e->a, BPF_DW, R0, R_FP, FP_KEY);
		jmp_imm(&e->a, BPF_JEQ, R0, len, t);
		byte_ne(e, R_FP, FP_STR + len, 0, f);
	}
	jump(&e->a, t);
}

/* ---- "*abc" and "*abc*": the string through a window on the stack ----
 *
 * The string is read STR_WIN bytes at a time to FP_WIN with
 * bpf_probe_read_kernel_str(), which stops at its first NUL and says where
 * that is: a char array and comm in one read, a __data_loc string in as
 * many as it takes, each window overlapping the last by the pattern's
 * length, so that no match straddles two unseen. The bytes are compared at
 * a variable offset into the window (the verifier allows that on the stack,
 * never in ctx). */

/* Where a glob's string is: a constant place of n bytes (var false), or
 * FP_SPOS from base and FP_SLEFT bytes, set at run time. */
struct str_src {
	int base;		/* R_CTX or R_FP */
	int off;
	unsigned n;
	bool var;
};

/* r0 = the window's bytes before its first NUL (at most STR_WIN), read to
 * FP_WIN; to f when it cannot be read (never: ctx and the stack). */
static void read_window(struct emitter *e, const struct str_src *s, int f)
{
	if (s->var) {
		int capped = label_new(&e->a);

		ldx(&e->a, BPF_DW, R2, R_FP, FP_SLEFT);
		jmp_imm(&e->a, BPF_JLE, R2, STR_WIN, capped);
		mov_imm(&e->a, R2, STR_WIN);
		label_place(&e->a, capped);
		ldx(&e->a, BPF_DW, R3, R_FP, FP_SPOS);
	} else {
		mov_imm(&e->a, R2, s->n);
		mov_imm(&e->a, R3, s->off);
	}
	/* n + 1 bytes: the helper copies up to n and a NUL; n + 1 back is no
	 * NUL among the first n (the one after them, if read, is not looked at). */
	alu_imm(&e->a, BPF_ADD, R2, 1);
	alu_reg(&e->a, BPF_ADD, R3, s->base);
	mov_reg(&e->a, R1, R_FP);
	alu_imm(&e->a, BPF_ADD, R1, FP_WIN);
	call(&e->a, BPF_FUNC_probe_read_kernel_str);
	/* (bounds the verifier needs: it reads the window at r0) */
	jmp_imm(&e->a, BPF_JSLT, R0, 1, f);
	jmp_imm(&e->a, BPF_JSGT, R0, (s->var ? STR_WIN : s->n) + 1, f);
	alu_imm(&e->a, BPF_SUB, R0, 1);
}

/* The pattern's bytes against the window's from byte r1 on: to f at the
 * first that differs, else to t. r1 < STR_WIN; the mask, which changes
 * nothing, is the verifier's bound where it has widened r1's. */
static void window_equals(struct emitter *e, const char *lit, size_t len, int t, int f)
{
	alu_imm(&e->a, BPF_AND, R1, STR_WIN - 1);
	alu_reg(&e->a, BPF_ADD, R1, R_FP);
	for (size_t j = 0; j < len; j++) {
		ldx(&e->a, BPF_B, R2, R1, FP_WIN + j);
		jmp_imm(&e->a, BPF_JNE, R2, (uint8_t)lit[j], f);
	}
	jump(&e->a, t);
}

/* "*abc": the string ends at r0 in the window. */
static void window_ends_with(struct emitter *e, const char *lit, size_t len, int t, int f)
{
	jmp_imm(&e->a, BPF_JLT, R0, len, f);
	mov_reg(&e->a, R1, R0);
	alu_imm(&e->a, BPF_SUB, R1, len);
	window_equals(e, lit, len, t, f);
}

/* "*abc*": the pattern at some start i <= r0 - len of the window, to t;
 * else on to the next instruction, r0 kept. */
static void window_contains(struct emitter *e, const char *lit, size_t len, int t)
{
	int loop = label_new(&e->a), next = label_new(&e->a), done = label_new(&e->a);

	jmp_imm(&e->a, BPF_JLT, R0, len, done);
	mov_reg(&e->a, R4, R0);
	alu_imm(&e->a, BPF_SUB, R4, len);			/* r4 = the last start */
	/* r5 = i = 0, which the verifier does not know: a first bound check
	 * it could decide would make r5 precise, and the loop unrolled. */
	mov_reg(&e->a, R5, R4);
	alu_reg(&e->a, BPF_SUB, R5, R4);
	label_place(&e->a, loop);
	put(&e->a, insn(EMIT_MAY_GOTO, 0, 0, 0, 0), done);
	jmp_reg(&e->a, BPF_JGT, R5, R4, done);
	mov_reg(&e->a, R1, R5);
	window_equals(e, lit, len, t, next);
	label_place(&e->a, next);
	alu_imm(&e->a, BPF_ADD, R5, 1);
	jump(&e->a, loop);
	label_place(&e->a, done);
}

/* To more when the string goes on past this window (r0): the window was
 * full and had no NUL; FP_SPOS and FP_SLEFT moved on, keeping the last len
 * bytes in the next window. */
static void window_advance(struct emitter *e, size_t len, int more)
{
	int end = label_new(&e->a);

	ldx(&e->a, BPF_DW, R1, R_FP, FP_SLEFT);
	jmp_imm(&e->a, BPF_JLE, R1, STR_WIN, end);
	jmp_imm(&e->a, BPF_JNE, R0, STR_WIN, end);
	alu_imm(&e->a, BPF_SUB, R1, STR_WIN - len);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R1, FP_SLEFT, 0), -1);
	ldx(&e->a, BPF_DW, R1, R_FP, FP_SPOS);
	alu_imm(&e->a, BPF_ADD, R1, STR_WIN - len);
	/* Below TRACERD_MAX_RECORD (a window starts inside the string, which
	 * data_loc_place() cut there): the mask changes nothing but lets the
	 * verifier see that every round starts within the first's bounds. */
	alu_imm(&e->a, BPF_AND, R1, TRACERD_MAX_RECORD - 1);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R1, FP_SPOS, 0), -1);
	jump(&e->a, more);
	label_place(&e->a, end);
}

static void str_glob(struct emitter *e, const struct str_src *s, const char *lit, size_t len,
		     enum str_match how, int t, int f)
{
	int win = label_new(&e->a);

	label_place(&e->a, win);
	if (s->var)
		put(&e->a, insn(EMIT_MAY_GOTO, 0, 0, 0, 0), f);
	read_window(e, s, f);
	if (how == SM_SUBSTR)
		window_contains(e, lit, len, t);
	if (s->var)
		window_advance(e, len, win);
	if (how == SM_SUFFIX)
		window_ends_with(e, lit, len, t, f);
	else
		jump(&e->a, f);
}

/* A glob's string, at a constant place of n bytes. */
static int glob_fixed(struct emitter *e, int base, int off, unsigned n, const char *lit,
		      size_t len, enum str_match how, int t, int f)
{
	struct str_src s = { .base = base, .off = off, .n = n, .var = n > STR_WIN };

	if (len > n) {
		const_branch(&e->a, false, t, f);
		return 0;
	}
	if (s.var && (base != R_CTX || off + n > TRACERD_MAX_RECORD))
		return asm_fail(&e->a, "a glob on a char array past TRACERD_MAX_RECORD");
	if (s.var) {
		mov_imm(&e->a, R1, off);
		put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R1, FP_SPOS, 0), -1);
		mov_imm(&e->a, R1, n);
		put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R1, FP_SLEFT, 0), -1);
	}
	str_glob(e, &s, lit, len, how, t, f);
	return 0;
}

static void glob_data_loc(struct emitter *e, const struct filter_insn *in, const char *lit,
			  size_t len, enum str_match how, int t, int f)
{
	struct str_src s = { .base = R_CTX, .var = true };

	data_loc_place(e, in, len, f);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R3, FP_SPOS, 0), -1);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_SLEFT, 0), -1);
	str_glob(e, &s, lit, len, how, t, f);
}

/* ---- the leaf ---- */

int emit_string(struct emitter *e, const struct filter_insn *in, int t, int f)
{
	const char *pat = e->d->strs[in->str % TRACERD_FILTER_STRS], *lit;
	enum str_match how;
	size_t len;
	bool glob;

	if (strnlen(pat, TRACERD_FILTER_STR) == TRACERD_FILTER_STR)
		return asm_fail(&e->a, "malformed filter string");
	if (classify(e, in, pat, &how, &lit, &len) < 0)
		return e->a.err;
	if (in->cmp == FCMP_NE || in->cmp == FCMP_NGLOB) {
		int x = t;

		t = f;
		f = x;
	}
	if (in->src == SRC_STR && in->off < 8)
		return asm_fail(&e->a, "a string in the common fields");
	glob = how == SM_SUFFIX || how == SM_SUBSTR;
	if (glob && !len) {	/* "**": any string */
		const_branch(&e->a, true, t, f);
		return 0;
	}
	switch (in->src) {
	case SRC_STR:
		if (glob)
			return glob_fixed(e, R_CTX, in->off, in->imm, lit, len, how, t, f);
		str_fixed(e, R_CTX, in->off, in->imm, lit, len, how, t, f);
		return 0;
	case SRC_COMM:
		if (glob)
			return glob_fixed(e, R_FP, FP_COMM, TRACERD_COMM_LEN, lit, len, how, t, f);
		str_fixed(e, R_FP, FP_COMM, TRACERD_COMM_LEN, lit, len, how, t, f);
		return 0;
	case SRC_DATA_LOC:
	case SRC_REL_LOC:
		if (glob)
			glob_data_loc(e, in, lit, len, how, t, f);
		else
			str_data_loc(e, in, lit, len, how, t, f);
		return 0;
	case SRC_USER_STR:
		return asm_fail(&e->a, "a syscall's user string (the class program reads it, "
				   "after the filter)");
	}
	return asm_fail(&e->a, "a string from source %u", in->src);
}
