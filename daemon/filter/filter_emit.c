// SPDX-License-Identifier: GPL-2.0
/* The filter emitter: an event's filter as BPF instructions.
 *
 * filter_compile.c resolves a Filter= against one event (fields to source,
 * offset, size and sign through kernel-events/field_source.c; values read by
 * the field's type) and writes postfix bytecode, which bpf/filter.bpf.h
 * interprets: a bpf_loop() step per instruction, over a copy of the record.
 * This file turns the same bytecode into straight BPF code for the event's
 * layout, so that the values and the resolving are the interpreter's, and
 * only the running differs:
 *
 *  1. The postfix code becomes a tree again: a compare is a leaf, NOT wraps
 *     the top, ANDSC/ORSC (a short-circuit over the next imm instructions)
 *     joins the top with what those instructions push.
 *  2. The tree becomes jumps, as a C compiler does for && and ||: each node
 *     is emitted with a label to go to when it is true and one for false;
 *     a && b is "a, false: to F; b", a || b "a, true: to T; b", !a swaps.
 *  3. A numeric leaf loads its field from ctx at the field's constant
 *     offset and compares with one conditional jump. The kernel lets a
 *     tracepoint program read its ctx only at offsets >= 8 and aligned to
 *     the access size (tp_prog_is_valid_access), so an unaligned field is
 *     read a byte at a time. Bytes 0-7 (common_type, common_pid...) are
 *     overwritten before the program runs: common_type is the event's id,
 *     a constant here (loaded, still compared: the verifier refuses code
 *     that no jump reaches); common_pid, cpu and comm come from helpers, called
 *     once in the prologue when a leaf needs them.
 *  4. A string leaf (filter_emit_str.c) splits its glob as the kernel's
 *     filter does (filter_parse_regex()): `==` and a glob without
 *     metacharacters compare the whole string, `abc*` its start, both in
 *     straight-line code, a byte per compare: a char array read from ctx,
 *     comm from the stack, a __data_loc string with bpf_probe_read_kernel()
 *     (its offset is in the record, not constant). `*abc` (the end) and
 *     `*abc*` (anywhere) need where the string ends, which only a search
 *     finds, and compare at offsets no constant gives, which ctx does not
 *     allow: the string is read to a window on the stack with
 *     bpf_probe_read_kernel_str() (it stops at the NUL and says where),
 *     256 bytes at a time (a __data_loc string in as many windows as it
 *     takes, each overlapping the last by the pattern's length), and
 *     searched in a loop that may_goto bounds, so that the verifier goes
 *     through its body a few times, not once per byte (worked example
 *     below). The end is the string's, at its NUL, as the interpreter has
 *     it; the kernel's filter takes a char array's end instead. Other
 *     globs (`a?c`, classes, a `*` inside) and a syscall's user strings
 *     (appended by the class program, not in ctx) are not emitted: the
 *     selection stays with the interpreter, and filter_emit() says why.
 *  5. The program is attached in the class program's place, so it begins
 *     with the class program's head (the stop flag, the daemon's own tgid,
 *     the hit counted in stats[cookie]). Rejected, it counts the slot's
 *     `filtered`. Kept, a record of fixed size, or with __data_loc strings,
 *     is written by this program itself, reserved in the ring and copied
 *     from ctx, and a histogram's event whose key already has an entry is
 *     counted here (filter_emit_frame.c); anything else (user strings,
 *     stacks, Unit=, a new key) it tail-calls the class program's accept
 *     half with, at a constant key (a direct jump once JITed), which does
 *     what the class program would have. Without a filter the program is
 *     the head and the keep: every event kept.
 *
 * The emitted code depends on the layout only (offsets, sizes) and on the
 * filter's values, so the events of one class with one Filter= emit the
 * same code, and the loader loads it once (attach/filter_prog.c).
 *
 * Worked example: sched_process_wait's "pid == 1 || comm ~ "sys*"" (pid
 * is an int at offset 24). Bytecode: CMP(pid EQ 1) ORSC(+1)
 * STRCMP(comm GLOB "sys*"): the tree OR(pid == 1, comm ~ "sys*"):
 *
 *	r6 = r1				ctx; the head:
 *	r1 = *(u32 *)&stopped; if r1 != 0 goto pass
 *	call bpf_get_current_pid_tgid; r7 = r0
 *	if r7 >> 32 == <daemon's tgid> goto pass
 *	r9 = &stats[cookie]; r9->hits++
 *	r1 = r10 - 24; r2 = 16		comm, for the glob
 *	call bpf_get_current_comm
 *	r0 = *(s32 *)(r6 + 24)		the leaf pid == 1:
 *	r0 <<= 32; r0 s>>= 32		  int, widened as the interpreter does
 *	if r0 == 1 goto accept		  true: the || is true
 *	goto L1
 *  L1:	r1 = *(u8 *)(r10 - 24)		the leaf comm ~ "sys*", a prefix:
 *	if r1 != 's' goto reject
 *	... 'y', 's'
 *	goto accept
 *  reject: r9->filtered++; goto pass
 *  accept: tail call accept_prog[TRACERD_ACCEPT_PROG]; (failed) r9->lost++
 *  pass:   return 1
 *
 * And a middle glob, comm ~ "*sh*" (comm at r10 - 24, from the prologue):
 *
 *	r2 = 16; r2 += 1		the window: comm's 16 bytes and a NUL
 *	r3 = -24; r3 += r10
 *	r1 = r10; r1 += -424
 *	call bpf_probe_read_kernel_str
 *	if r0 s< 1 goto reject; if r0 s> 17 goto reject	 (the verifier's bounds)
 *	r0 -= 1				r0 = the string's length
 *	if r0 < 2 goto reject
 *	r4 = r0; r4 -= 2		the last place "sh" can start
 *	r5 = r4; r5 -= r4		i = 0, a value the verifier does not know
 *  L2:	may_goto reject
 *	if r5 > r4 goto reject
 *	r1 = r5; r1 &= 255; r1 += r10	the window's byte i
 *	r2 = *(u8 *)(r1 - 424); if r2 != 's' goto L3
 *	r2 = *(u8 *)(r1 - 423); if r2 != 'h' goto L3
 *	goto accept
 *  L3:	r5 += 1; goto L2
 *
 * "*sh" instead: no loop, r1 = r0 - 2 and the same two compares.
 */
#include <errno.h>
#include <string.h>
#include "filter_emit_priv.h"
/* ---- the tree ---- */

static int node_new(struct emitter *e, enum enode_kind k, int insn_idx, int l, int r)
{
	if (e->n_nodes >= MAX_NODES)
		return asm_fail(&e->a, "the filter has too many terms");
	e->nodes[e->n_nodes] = (struct enode){ .kind = k, .insn = insn_idx, .l = l, .r = r };
	return e->n_nodes++;
}

/* Postfix bytecode to a tree; returns the root's index. A pending
 * short-circuit joins the top two entries once its right side ends. */
static int build_tree(struct emitter *e)
{
	const struct event_desc *d = e->d;
	int stack[TRACERD_FILTER_INSNS + 1], sp = 0;
	struct { uint8_t op; uint32_t end; } pend[TRACERD_FILTER_INSNS];
	int np = 0, x;

	for (uint32_t pc = 0; pc <= d->n_insns && !e->a.err; pc++) {
		while (np && pend[np - 1].end == pc && sp >= 2) {
			np--;
			x = node_new(e, pend[np].op == FOP_ANDSC ? EN_AND : EN_OR, -1,
				     stack[sp - 2], stack[sp - 1]);
			stack[sp-- - 2] = x;
		}
		if (pc == d->n_insns)
			break;
		const struct filter_insn *in = &d->insns[pc];

		switch (in->op) {
		case FOP_CMP:
		case FOP_STRCMP:
		case FOP_TRUE:
			if (sp > TRACERD_FILTER_INSNS)
				return asm_fail(&e->a, "malformed filter code");
			stack[sp++] = node_new(e, in->op == FOP_TRUE ? EN_TRUE : EN_LEAF, pc, -1, -1);
			break;
		case FOP_NOT:
			if (sp < 1)
				return asm_fail(&e->a, "malformed filter code");
			stack[sp - 1] = node_new(e, EN_NOT, -1, stack[sp - 1], -1);
			break;
		case FOP_AND:
		case FOP_OR:
			if (sp < 2)
				return asm_fail(&e->a, "malformed filter code");
			x = node_new(e, in->op == FOP_AND ? EN_AND : EN_OR, -1, stack[sp - 2],
				     stack[sp - 1]);
			stack[sp-- - 2] = x;
			break;
		case FOP_ANDSC:
		case FOP_ORSC:
			if (np && pc + 1 + in->imm > pend[np - 1].end)
				return asm_fail(&e->a, "malformed filter code");
			pend[np].op = in->op == FOP_ANDSC ? FOP_ANDSC : FOP_ORSC;
			pend[np++].end = pc + 1 + in->imm;
			break;
		default:
			return asm_fail(&e->a, "unknown filter instruction %u", in->op);
		}
	}
	if (e->a.err)
		return e->a.err;
	if (sp != 1 || np)
		return asm_fail(&e->a, "malformed filter code");
	return stack[0];
}

/* ---- leaves ---- */

static bool fits_imm32(uint64_t v)
{
	return (uint64_t)(int64_t)(int32_t)(uint32_t)v == v;
}

/* The value of bytes [off, off + size) of the rebuilt common fields,
 * which the interpreter reads from its copy: common_type is the id. */
static int common_constant(struct emitter *e, const struct filter_insn *in, uint64_t *v)
{
	uint8_t hdr[8] = { 0 };
	uint64_t x = 0;

	if (in->off + in->size > 4)
		return asm_fail(&e->a, "the filter reads bytes %u-%u of the common fields, "
				   "which only the interpreter rebuilds", in->off,
				   in->off + in->size - 1);
	memcpy(hdr, &e->d->id, sizeof(e->d->id));
	memcpy(&x, hdr + in->off, in->size);
	if (in->is_signed && in->size < 8 && (x >> (in->size * 8 - 1)) & 1)
		x |= ~0ULL << (in->size * 8);
	*v = x;
	return 0;
}

static int jmp_op(const struct filter_insn *in)
{
	bool s = in->is_signed;

	switch (in->cmp) {
	case FCMP_EQ: return BPF_JEQ;
	case FCMP_NE: return BPF_JNE;
	case FCMP_LT: return s ? BPF_JSLT : BPF_JLT;
	case FCMP_LE: return s ? BPF_JSLE : BPF_JLE;
	case FCMP_GT: return s ? BPF_JSGT : BPF_JGT;
	case FCMP_GE: return s ? BPF_JSGE : BPF_JGE;
	case FCMP_BAND: return BPF_JSET;
	}
	return -1;
}

static int emit_number(struct emitter *e, const struct filter_insn *in, int t, int f)
{
	uint64_t v = 0;
	int op;

	switch (in->src) {
	case SRC_PID:
		put(&e->a, insn(BPF_ALU | BPF_MOV | BPF_X, R0, R_PIDTGID, 0, 0), -1);
		break;
	case SRC_TGID:
		mov_reg(&e->a, R0, R_PIDTGID);
		alu_imm(&e->a, BPF_RSH, R0, 32);
		break;
	case SRC_CPU:
		mov_reg(&e->a, R0, R_CPU);
		break;
	case SRC_RECORD:
		if (in->size != 1 && in->size != 2 && in->size != 4 && in->size != 8)
			return asm_fail(&e->a, "a number of %u bytes", in->size);
		if (in->off < 8) {
			/* A constant, compared at run time all the same: the
			 * verifier refuses code that no jump reaches. */
			if (common_constant(e, in, &v) < 0)
				return e->a.err;
			ld_imm64(&e->a, R0, 0, v);
			break;
		}
		load_ctx_number(e, in->off, in->size, in->is_signed);
		break;
	default:
		return asm_fail(&e->a, "a number from source %u", in->src);
	}
	if (in->cmp == FCMP_BALL) {	/* (v & imm) == imm */
		if (fits_imm32(in->imm)) {
			alu_imm(&e->a, BPF_AND, R0, (int32_t)in->imm);
			jmp_imm(&e->a, BPF_JEQ, R0, (int32_t)in->imm, t);
		} else {
			ld_imm64(&e->a, R1, 0, in->imm);
			alu_reg(&e->a, BPF_AND, R0, R1);
			jmp_reg(&e->a, BPF_JEQ, R0, R1, t);
		}
		jump(&e->a, f);
		return 0;
	}
	op = jmp_op(in);
	if (op < 0)
		return asm_fail(&e->a, "compare %u on a number", in->cmp);
	if (fits_imm32(in->imm)) {
		jmp_imm(&e->a, op, R0, (int32_t)in->imm, t);
	} else {
		ld_imm64(&e->a, R1, 0, in->imm);
		jmp_reg(&e->a, op, R0, R1, t);
	}
	jump(&e->a, f);
	return 0;
}

/* ---- the program ---- */

static int emit_node(struct emitter *e, int x, int t, int f)
{
	const struct enode *nd = &e->nodes[x];
	int mid;

	if (e->a.err)
		return e->a.err;
	switch (nd->kind) {
	case EN_TRUE:
		const_branch(&e->a, true, t, f);
		return 0;
	case EN_NOT:
		return emit_node(e, nd->l, f, t);
	case EN_AND:
	case EN_OR:
		mid = label_new(&e->a);
		if (nd->kind == EN_AND)
			emit_node(e, nd->l, mid, f);
		else
			emit_node(e, nd->l, t, mid);
		label_place(&e->a, mid);
		return emit_node(e, nd->r, t, f);
	case EN_LEAF:
		if (e->d->insns[nd->insn].op == FOP_CMP)
			return emit_number(e, &e->d->insns[nd->insn], t, f);
		return emit_string(e, &e->d->insns[nd->insn], t, f);
	}
	return asm_fail(&e->a, "malformed filter tree");
}

/* The helpers a leaf needs, called once before the first. */
static void prologue(struct emitter *e)
{
	bool pid = false, cpu = false, comm = false;

	for (uint32_t i = 0; i < e->d->n_insns; i++) {
		const struct filter_insn *in = &e->d->insns[i];

		if (in->op != FOP_CMP && in->op != FOP_STRCMP)
			continue;
		pid |= in->src == SRC_PID || in->src == SRC_TGID;
		cpu |= in->src == SRC_CPU;
		comm |= in->src == SRC_COMM;
	}
	if (e->m->verdict)
		mov_reg(&e->a, R_CTX, R1);
	if (pid && e->m->verdict) {
		call(&e->a, BPF_FUNC_get_current_pid_tgid);
		mov_reg(&e->a, R_PIDTGID, R0);
	}
	if (cpu) {
		call(&e->a, BPF_FUNC_get_smp_processor_id);
		mov_reg(&e->a, R_CPU, R0);
	}
	if (comm) {
		mov_reg(&e->a, R1, R_FP);
		alu_imm(&e->a, BPF_ADD, R1, FP_COMM);
		mov_imm(&e->a, R2, TRACERD_COMM_LEN);
		call(&e->a, BPF_FUNC_get_current_comm);
	}
}

int filter_emit(const struct event_desc *d, const struct filter_emit_maps *m,
		struct bpf_insn *out, char *why, size_t why_size)
{
	static __thread struct emitter e;
	int root, accept, reject, pass;

	e = (struct emitter){ .d = d, .m = m,
			      .a = { .out = out, .why = why, .why_size = why_size } };
	if (d->n_insns > TRACERD_FILTER_INSNS)
		return asm_fail(&e.a, "malformed filter code");
	accept = label_new(&e.a);
	reject = label_new(&e.a);
	pass = label_new(&e.a);
	if (!m->verdict)
		emit_head(&e, pass);
	/* No filter: every event kept, nothing decided, no reject path (the
	 * verifier refuses code that no jump reaches). */
	if (d->n_insns) {
		root = build_tree(&e);
		if (root < 0)
			return root;
		prologue(&e);
		emit_node(&e, root, accept, reject);
		label_place(&e.a, reject);
		if (m->verdict) {
			mov_imm(&e.a, R0, 0);
			put(&e.a, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), -1);
		} else {
			emit_reject(&e, pass);
		}
	}
	label_place(&e.a, accept);
	if (!m->verdict) {
		emit_keep(&e, pass);
		label_place(&e.a, pass);
	}
	ret1(&e.a);
	if (!e.a.err)
		resolve_jumps(&e.a);
	return e.a.err ? e.a.err : e.a.n;
}
