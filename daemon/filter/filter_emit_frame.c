// SPDX-License-Identifier: GPL-2.0
/* What the class program (bpf/tracerd.bpf.c) does around its filter, for an
 * emitted filter attached in its place: the head before the decision, the
 * count of a rejected event, and what becomes of a kept one. A record of
 * fixed size is written to the ring buffer here, reserved at its size (a
 * constant in this program, which the shared program cannot have) and
 * copied once, straight from the tracepoint into the ring; one with
 * __data_loc strings is built in emit_rec and written from there; anything
 * more (aggregation, user strings, stacks, Unit=) goes to the class
 * program's accept half. */
#include <stddef.h>
#include "filter_emit_priv.h"

/* (this CPU's) stats[cookie].<counter>++ */
static void count(struct emitter *e, size_t counter)
{
	ldx(&e->a, BPF_DW, R1, R_STATS, counter);
	alu_imm(&e->a, BPF_ADD, R1, 1);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_STATS, R1, counter, 0), -1);
}

/* class_head(): not after the daemon stopped, not for the daemon's own
 * events, then the hit, in this CPU's stats[cookie], which R_STATS keeps. */
void emit_head(struct emitter *e, int pass)
{
	mov_reg(&e->a, R_CTX, R1);
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_VALUE,
		 (uint64_t)e->m->stopped_off << 32 | (uint32_t)e->m->bss_fd);
	ldx(&e->a, BPF_W, R1, R1, 0);
	jmp_imm(&e->a, BPF_JNE, R1, 0, pass);
	call(&e->a, BPF_FUNC_get_current_pid_tgid);
	mov_reg(&e->a, R_PIDTGID, R0);
	mov_reg(&e->a, R1, R0);
	alu_imm(&e->a, BPF_RSH, R1, 32);
	jmp_imm(&e->a, BPF_JEQ, R1, (int32_t)e->m->self_tgid, pass);
	mov_reg(&e->a, R1, R_CTX);
	call(&e->a, BPF_FUNC_get_attach_cookie);	/* event id << 32 | slot */
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_COOKIE, 0), -1);
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->stats_fd);
	mov_reg(&e->a, R2, R_FP);
	alu_imm(&e->a, BPF_ADD, R2, FP_COOKIE);
	call(&e->a, BPF_FUNC_map_lookup_elem);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, pass);
	mov_reg(&e->a, R_STATS, R0);
	count(e, offsetof(struct event_stats, hits));
}

void emit_reject(struct emitter *e, int pass)
{
	count(e, offsetof(struct event_stats, filtered));
	jump(&e->a, pass);
}

/* The __data_loc words, which the program reads from ctx: aligned, after
 * the common fields, within the fixed part. */
static bool dyn_words_here(const struct event_desc *d)
{
	for (uint32_t i = 0; i < d->n_dyn && i < TRACERD_MAX_DYN; i++)
		if (d->dyn_off[i] < 8 || d->dyn_off[i] % 4 || d->dyn_off[i] + 4u > d->fixed_size)
			return false;
	return true;
}

const char *filter_emit_hands_on(const struct event_desc *d, const struct filter_emit_maps *m)
{
	if (m->unit)
		return "Unit= is checked in the accept half";
	if (d->agg || m->agg)
		return "Aggregate= is counted in the accept half";
	if (d->n_dyn && !dyn_words_here(d))
		return "the record has a __data_loc word the program cannot read (unaligned)";
	if (d->ustr_off[0])
		return "the record has a syscall's user strings (SyscallStrings=)";
	if (d->stack)
		return "StackTrace= is taken in the accept half";
	if (d->fixed_size <= 8 || d->fixed_size > TRACERD_MAX_RECORD)
		return "the record has no field, or is larger than the largest";
	return NULL;
}

/* Whether this program writes what it keeps: a record of fixed size or
 * with __data_loc strings, and nothing for the accept half to add or check. */
static bool writes_here(const struct emitter *e)
{
	return e->m->rb_fd >= 0 && (!e->d->n_dyn || e->m->rec_fd >= 0) &&
	       !filter_emit_hands_on(e->d, e->m);
}

#define HDR(field) ((int16_t)offsetof(struct trace_rec_hdr, field))
/* Records up to this size are copied with loads and stores (copy_record()). */
#define EMIT_COPY_MAX 512
#define REC ((int32_t)sizeof(struct trace_rec_hdr))

static void store_reg(struct emitter *e, int size, int16_t off, int src)
{
	put(&e->a, insn(BPF_STX | BPF_MEM | size, R_REC, src, off, 0), -1);
}

/* The task's comm, as bpf_get_current_comm() gives it: two loads from
 * the task_struct (its comm is NUL-padded, __set_task_comm()), where the
 * helper copies it byte by byte. Without the kernel's BTF, the helper. */
static void write_comm(struct emitter *e)
{
	int off = e->m->task_comm_off;

	if (off <= 0 || off > INT16_MAX - 8) {
		mov_reg(&e->a, R1, R_REC);
		alu_imm(&e->a, BPF_ADD, R1, HDR(comm));
		mov_imm(&e->a, R2, TRACERD_COMM_LEN);
		call(&e->a, BPF_FUNC_get_current_comm);
		return;
	}
	call(&e->a, BPF_FUNC_get_current_task_btf);
	ldx(&e->a, BPF_DW, R1, R0, off);
	store_reg(e, BPF_DW, HDR(comm), R1);
	ldx(&e->a, BPF_DW, R1, R0, off + 8);
	store_reg(e, BPF_DW, HDR(comm) + 8, R1);
}

/* class_accept()'s header, in the reserved record (R_REC). */
static void write_header(struct emitter *e)
{
	call(&e->a, BPF_FUNC_ktime_get_ns);
	store_reg(e, BPF_DW, HDR(ts_ns), R0);
	ldx(&e->a, BPF_W, R1, R_FP, FP_COOKIE);
	store_reg(e, BPF_W, HDR(slot), R1);
	call(&e->a, BPF_FUNC_get_smp_processor_id);
	store_reg(e, BPF_W, HDR(cpu), R0);
	mov_reg(&e->a, R1, R_PIDTGID);
	alu_imm(&e->a, BPF_RSH, R1, 32);
	store_reg(e, BPF_W, HDR(pid), R1);
	store_reg(e, BPF_W, HDR(tid), R_PIDTGID);
	put(&e->a, insn(BPF_ST | BPF_MEM | BPF_W, R_REC, 0, HDR(len), e->d->fixed_size), -1);
	put(&e->a, insn(BPF_ST | BPF_MEM | BPF_W, R_REC, 0, HDR(flags), 0), -1);
	write_comm(e);
	call(&e->a, BPF_FUNC_get_current_cgroup_id);
	store_reg(e, BPF_DW, HDR(cgroup_id), R0);
}

/* The record's bytes after the common fields, from the tracepoint into the
 * ring: loads at constant offsets, each aligned to its size (the only ctx
 * reads a tracepoint program may make), 8 bytes at a time, then the tail
 * in 4, 2 and 1. None passes the record's end, the kernel's limit: the
 * program is this layout's. A large record goes through the helper: two
 * instructions per 8 bytes would crowd out the filter's. */
static void copy_record(struct emitter *e)
{
	static const uint8_t bpf_size[] = { BPF_DW, BPF_W, BPF_H, BPF_B };
	unsigned off = 8, end = e->d->fixed_size;

	if (end > EMIT_COPY_MAX) {
		mov_reg(&e->a, R1, R_REC);
		alu_imm(&e->a, BPF_ADD, R1, REC);
		mov_imm(&e->a, R2, end);
		mov_reg(&e->a, R3, R_CTX);
		call(&e->a, BPF_FUNC_probe_read_kernel);
		return;
	}
	for (unsigned i = 0, size = 8; i < 4; i++, size /= 2)
		for (; off + size <= end; off += size) {
			ldx(&e->a, bpf_size[i], R1, R_CTX, off);
			store_reg(e, bpf_size[i], REC + off, R1);
		}
}

/* The record itself: copied from the tracepoint, common fields rebuilt (the
 * kernel overwrote them before we ran), as class_copy() does. */
static void write_record(struct emitter *e)
{
	copy_record(e);
	mov_reg(&e->a, R1, R_PIDTGID);
	alu_imm(&e->a, BPF_LSH, R1, 32);
	ldx(&e->a, BPF_DW, R2, R_FP, FP_COOKIE);
	alu_imm(&e->a, BPF_RSH, R2, 32);	/* the event's id, from the cookie */
	alu_reg(&e->a, BPF_OR, R1, R2);
	store_reg(e, BPF_DW, REC, R1);
}

/* Ring full: the record is lost, counted per slot and in lost_total. */
static void write_lost(struct emitter *e, int pass)
{
	count(e, offsetof(struct event_stats, lost));
	put(&e->a, insn(BPF_ST | BPF_MEM | BPF_W, R_FP, 0, FP_AVAIL, 0), -1);
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->lost_total_fd);
	mov_reg(&e->a, R2, R_FP);
	alu_imm(&e->a, BPF_ADD, R2, FP_AVAIL);
	call(&e->a, BPF_FUNC_map_lookup_elem);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, pass);
	ldx(&e->a, BPF_DW, R1, R0, 0);
	alu_imm(&e->a, BPF_ADD, R1, 1);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R0, R1, 0, 0), -1);
	jump(&e->a, pass);
}

/* flags = BPF_RB_FORCE_WAKEUP when the record, size bytes (in a register),
 * carries the ring's unread bytes (FP_AVAIL, read before the write) across
 * WakeupBytes, else BPF_RB_NO_WAKEUP, as the class program decides; then
 * to submit. Clobbers R1 and thresh. */
static void wake_flags(struct emitter *e, int flags, int thresh, int size, int submit)
{
	mov_imm(&e->a, flags, BPF_RB_NO_WAKEUP);
	ld_imm64(&e->a, thresh, 0, e->m->wakeup_bytes);
	ldx(&e->a, BPF_DW, R1, R_FP, FP_AVAIL);
	jmp_reg(&e->a, BPF_JGE, R1, thresh, submit);
	alu_reg(&e->a, BPF_ADD, R1, size);
	jmp_reg(&e->a, BPF_JLT, R1, thresh, submit);
	mov_imm(&e->a, flags, BPF_RB_FORCE_WAKEUP);
	label_place(&e->a, submit);
}

/* class_accept() for a record of fixed size: reserve, fill, submit, and
 * wake the consumer only when this record carries the ring across
 * WakeupBytes, as the class program does. */
static void write_here(struct emitter *e, int pass)
{
	int32_t size = REC + e->d->fixed_size;
	int lost = label_new(&e->a), submit = label_new(&e->a);

	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rb_fd);
	mov_imm(&e->a, R2, BPF_RB_AVAIL_DATA);
	call(&e->a, BPF_FUNC_ringbuf_query);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_AVAIL, 0), -1);
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rb_fd);
	mov_imm(&e->a, R2, size);
	mov_imm(&e->a, R3, 0);
	call(&e->a, BPF_FUNC_ringbuf_reserve);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, lost);
	mov_reg(&e->a, R_REC, R0);
	write_record(e);
	write_header(e);
	mov_imm(&e->a, R4, size);
	wake_flags(e, R2, R3, R4, submit);
	mov_reg(&e->a, R1, R_REC);
	call(&e->a, BPF_FUNC_ringbuf_submit);
	jump(&e->a, pass);
	label_place(&e->a, lost);
	write_lost(e, pass);
}

/* r0 = where the record ends: after its fixed part or its furthest
 * __data_loc string (record_end()), at most TRACERD_MAX_RECORD; r3 = its
 * flags (TRACERD_REC_TRUNCATED past that, counted). */
static void dyn_end(struct emitter *e)
{
	const struct event_desc *d = e->d;
	int fits = label_new(&e->a);

	mov_imm(&e->a, R0, d->fixed_size);
	mov_imm(&e->a, R3, 0);
	for (uint32_t i = 0; i < d->n_dyn && i < TRACERD_MAX_DYN; i++) {
		int next = label_new(&e->a);

		ldx(&e->a, BPF_W, R1, R_CTX, d->dyn_off[i]);
		mov_reg(&e->a, R2, R1);
		alu_imm(&e->a, BPF_RSH, R2, 16);		/* the length */
		alu_imm(&e->a, BPF_AND, R1, 0xffff);	/* the offset */
		if (d->dyn_rel & (1u << i))		/* __rel_loc: from after the word */
			alu_imm(&e->a, BPF_ADD, R1, d->dyn_off[i] + 4);
		alu_reg(&e->a, BPF_ADD, R1, R2);
		jmp_reg(&e->a, BPF_JLE, R1, R0, next);
		mov_reg(&e->a, R0, R1);
		label_place(&e->a, next);
	}
	jmp_imm(&e->a, BPF_JLE, R0, TRACERD_MAX_RECORD, fits);
	mov_imm(&e->a, R0, TRACERD_MAX_RECORD);
	mov_imm(&e->a, R3, TRACERD_REC_TRUNCATED);
	count(e, offsetof(struct event_stats, truncated));
	label_place(&e->a, fits);
}

/* class_accept() for a record with __data_loc strings: its size is known
 * only here, and bpf_ringbuf_reserve() takes a constant, so the record is
 * built in this CPU's emit_rec and written with bpf_ringbuf_output(), as the
 * class program does: the fixed part from ctx, the strings after it with
 * bpf_probe_read_kernel(). */
static void write_dyn(struct emitter *e, int pass)
{
	unsigned fixed = e->d->fixed_size;
	int lost = label_new(&e->a), copied = label_new(&e->a), submit = label_new(&e->a);

	put(&e->a, insn(BPF_ST | BPF_MEM | BPF_W, R_FP, 0, FP_AVAIL, 0), -1);	/* key 0 */
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rec_fd);
	mov_reg(&e->a, R2, R_FP);
	alu_imm(&e->a, BPF_ADD, R2, FP_AVAIL);
	call(&e->a, BPF_FUNC_map_lookup_elem);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, lost);
	mov_reg(&e->a, R_REC, R0);
	write_record(e);
	write_header(e);
	dyn_end(e);
	store_reg(e, BPF_W, HDR(len), R0);
	store_reg(e, BPF_W, HDR(flags), R3);
	jmp_imm(&e->a, BPF_JLE, R0, fixed, copied);
	mov_reg(&e->a, R2, R0);
	alu_imm(&e->a, BPF_SUB, R2, fixed);
	mov_reg(&e->a, R1, R_REC);
	alu_imm(&e->a, BPF_ADD, R1, REC + fixed);
	mov_reg(&e->a, R3, R_CTX);
	alu_imm(&e->a, BPF_ADD, R3, fixed);
	call(&e->a, BPF_FUNC_probe_read_kernel);
	label_place(&e->a, copied);
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rb_fd);
	mov_imm(&e->a, R2, BPF_RB_AVAIL_DATA);
	call(&e->a, BPF_FUNC_ringbuf_query);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_AVAIL, 0), -1);
	ldx(&e->a, BPF_W, R3, R_REC, HDR(len));
	jmp_imm(&e->a, BPF_JGT, R3, TRACERD_MAX_RECORD, lost);	/* for the verifier */
	alu_imm(&e->a, BPF_ADD, R3, REC);
	wake_flags(e, R4, R5, R3, submit);
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rb_fd);
	mov_reg(&e->a, R2, R_REC);
	call(&e->a, BPF_FUNC_ringbuf_output);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, pass);
	label_place(&e->a, lost);
	write_lost(e, pass);
}

/* ---- Aggregate= ---- */

static bool agg_number(uint16_t off, uint8_t size)
{
	return off >= 8 && (size == 1 || size == 2 || size == 4 || size == 8);
}

/* A key part's offset in the key this program builds for the map to
 * (enum agg_map): a large key's compact layout (its strings short) in the
 * small map puts it at its short_off. */
static unsigned agg_part_off(const struct agg_desc *a, const struct agg_key_src *k, uint32_t to)
{
	return a->map != AGG_MAP_SMALL && to == AGG_MAP_SMALL ? k->short_off : k->key_off;
}

static bool agg_part_here(const struct agg_key_src *k)
{
	if (k->key_off + k->width > TRACERD_AGG_LARGE)
		return false;
	switch (k->src) {
	case SRC_PID:
	case SRC_CPU:
	case SRC_PID_COMM:
	case SRC_COMM:
	case SRC_CGROUP:
	case SRC_UNIT:
	case SRC_STACKTRACE:
		return true;
	case SRC_RECORD:
		return agg_number(k->off, k->size);
	case SRC_STR:
		return k->off >= 8;
	case SRC_DATA_LOC:	/* the loc word, read whole from ctx */
	case SRC_REL_LOC:
		return k->off >= 8 && k->off % 4 == 0;
	}
	return false;
}

/* Sums of numbers, which agg_add() loads from ctx. */
static bool agg_sums_here(const struct agg_desc *a)
{
	for (uint32_t i = 0; i < a->n_vals; i++)
		if (a->vals[i].ts || !agg_number(a->vals[i].off, a->vals[i].size))
			return false;
	return true;
}

/* A histogram this program counts itself: keys of the record's numbers
 * (also .log2 and .buckets=N), char arrays, __data_loc and __rel_loc
 * strings, common_pid (also .execname), cpu, comm, cgroup, unit and the
 * stack; sums of numbers. Its key is built as aggregate() builds it, for
 * the small map (a small key, or a large one whose compact layout fits it,
 * agg_desc.short_size, while its strings are short), or else the large.
 * The first event of a key (an insert, which keeps to size=) goes to the
 * accept program's aggregate(), as do a stack the kernel does not give
 * and a stack id not found. */
bool filter_emit_aggregates(const struct filter_emit_maps *m)
{
	const struct agg_desc *a = m->agg;

	/* A trigger's variables and action: the accept program's. */
	if (!a || a->trigger || m->verdict || m->unit)
		return false;
	if (a->stack_ids)	/* by the stack's id: aggregate_by_stack_id() */
		return agg_sums_here(a);
	if (m->agg_keys_fd[a->map % AGG_MAPS] < 0)
		return false;
	for (uint32_t i = 0; i < a->n_keys; i++)
		if (!agg_part_here(&a->keys[i]))
			return false;
	return agg_sums_here(a);
}

/* A __data_loc or __rel_loc string, into the key at off, as agg_key_str()
 * reads it: in the small key's compact layout a short one, a long one to
 * lng (the large key); in the large key its first k->width bytes. */
static void agg_key_data_loc(struct emitter *e, const struct agg_key_src *k, unsigned off,
			     uint32_t to, int lng)
{
	int empty = label_new(&e->a), capped = label_new(&e->a);

	ldx(&e->a, BPF_W, R3, R_CTX, k->off);
	mov_reg(&e->a, R2, R3);
	alu_imm(&e->a, BPF_RSH, R2, 16);		/* r2 = length, NUL included */
	if (to == AGG_MAP_SMALL)
		jmp_imm(&e->a, BPF_JGT, R2, TRACERD_AGG_STR_SHORT, lng);
	jmp_imm(&e->a, BPF_JEQ, R2, 0, empty);
	jmp_imm(&e->a, BPF_JLE, R2, k->width, capped);
	mov_imm(&e->a, R2, k->width);
	label_place(&e->a, capped);
	alu_imm(&e->a, BPF_AND, R3, 0xffff);	/* r3 = offset in the record */
	if (k->src == SRC_REL_LOC)		/* __rel_loc: from after the word */
		alu_imm(&e->a, BPF_ADD, R3, k->off + 4);
	alu_reg(&e->a, BPF_ADD, R3, R_CTX);
	mov_reg(&e->a, R1, R_FP);
	alu_imm(&e->a, BPF_ADD, R1, FP_AGGKEY + 8 + off);
	call(&e->a, BPF_FUNC_probe_read_kernel_str);
	label_place(&e->a, empty);
}

/* The key's header at FP_AGGKEY: the slot, the generation the daemon set
 * (agg_descs[slot].gen); then its bytes zeroed, the map's key size. */
static void agg_key_head(struct emitter *e, uint32_t to, int slow)
{
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->agg_descs_fd);
	mov_reg(&e->a, R2, R_FP);
	alu_imm(&e->a, BPF_ADD, R2, FP_COOKIE);	/* its low half: the slot */
	call(&e->a, BPF_FUNC_map_lookup_elem);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, slow);
	ldx(&e->a, BPF_W, R1, R0, offsetof(struct agg_desc, gen));
	alu_imm(&e->a, BPF_AND, R1, 1);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_W, R_FP, R1, FP_AGGKEY + 4, 0), -1);
	ldx(&e->a, BPF_W, R1, R_FP, FP_COOKIE);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_W, R_FP, R1, FP_AGGKEY, 0), -1);
	for (uint32_t i = 0; i < tracerd_agg_map_bytes(to); i += 8)
		put(&e->a, insn(BPF_ST | BPF_MEM | BPF_DW, R_FP, 0, FP_AGGKEY + 8 + i, 0), -1);
}

/* agg_log2() on r0: the kernel's ilog2(roundup_pow_of_two(v)), a binary
 * search in straight-line code. */
static void agg_log2(struct emitter *e)
{
	int small = label_new(&e->a), done = label_new(&e->a);

	jmp_imm(&e->a, BPF_JLT, R0, 2, small);
	alu_imm(&e->a, BPF_SUB, R0, 1);
	mov_imm(&e->a, R1, 1);
	for (int bits = 32; bits; bits /= 2) {
		int next = label_new(&e->a);

		mov_reg(&e->a, R2, R0);
		alu_imm(&e->a, BPF_RSH, R2, bits);
		jmp_imm(&e->a, BPF_JEQ, R2, 0, next);
		alu_imm(&e->a, BPF_ADD, R1, bits);
		mov_reg(&e->a, R0, R2);
		label_place(&e->a, next);
	}
	mov_reg(&e->a, R0, R1);
	jump(&e->a, done);
	label_place(&e->a, small);
	mov_imm(&e->a, R0, 0);
	label_place(&e->a, done);
}

/* .log2 and .buckets=N on the number in r0, as agg_key_part() applies them. */
static void agg_xform(struct emitter *e, const struct agg_key_src *k)
{
	if (k->xform == AGG_X_LOG2) {
		agg_log2(e);
	} else if (k->xform == AGG_X_BUCKETS && k->buckets) {
		ld_imm64(&e->a, R1, 0, k->buckets);
		alu_reg(&e->a, BPF_DIV, R0, R1);	/* unsigned, as the u64 in C */
		alu_reg(&e->a, BPF_MUL, R0, R1);
	}
}

/* The current task's comm into the key at off, NUL-padded to its 16 bytes. */
static void agg_key_comm(struct emitter *e, unsigned off)
{
	mov_reg(&e->a, R1, R_FP);
	alu_imm(&e->a, BPF_ADD, R1, FP_AGGKEY + 8 + off);
	mov_imm(&e->a, R2, TRACERD_COMM_LEN);
	call(&e->a, BPF_FUNC_get_current_comm);
}

/* A string part: bytes up to the NUL, zeros after (the key was zeroed). */
static void agg_key_string(struct emitter *e, const struct agg_key_src *k, unsigned off,
			   uint32_t to, int lng)
{
	if (k->src == SRC_STR) {		/* as agg_key_str() */
		mov_reg(&e->a, R1, R_FP);
		alu_imm(&e->a, BPF_ADD, R1, FP_AGGKEY + 8 + off);
		mov_imm(&e->a, R2, k->width);
		mov_reg(&e->a, R3, R_CTX);
		alu_imm(&e->a, BPF_ADD, R3, k->off);
		call(&e->a, BPF_FUNC_probe_read_kernel_str);
	} else if (k->src == SRC_COMM) {
		agg_key_comm(e, off);
	} else {
		agg_key_data_loc(e, k, off, to, lng);
	}
}

/* agg_key_stack(): the frames, zeros after; no stack: to slow, where
 * aggregate() finds none either and counts it Dropped. */
static void agg_key_stack(struct emitter *e, unsigned off, int slow)
{
	mov_reg(&e->a, R1, R_CTX);
	mov_reg(&e->a, R2, R_FP);
	alu_imm(&e->a, BPF_ADD, R2, FP_AGGKEY + 8 + off);
	mov_imm(&e->a, R3, TRACERD_HIST_STACK_FRAMES * 8);
	mov_imm(&e->a, R4, 0);
	call(&e->a, BPF_FUNC_get_stack);
	jmp_imm(&e->a, BPF_JSLE, R0, 0, slow);
}

/* One part of agg_key_part()'s key, at its offset in the key to. */
static void agg_key_one(struct emitter *e, const struct agg_key_src *k, uint32_t to,
			int lng, int slow)
{
	unsigned off = agg_part_off(e->m->agg, k, to);

	switch (k->src) {
	case SRC_STR:
	case SRC_COMM:
	case SRC_DATA_LOC:
	case SRC_REL_LOC:
		agg_key_string(e, k, off, to, lng);
		return;
	case SRC_STACKTRACE:
		agg_key_stack(e, off, slow);
		return;
	case SRC_PID_COMM:	/* .execname: the comm beside the pid */
		agg_key_comm(e, off + 8);
		/* fall through */
	case SRC_PID:
		put(&e->a, insn(BPF_ALU | BPF_MOV | BPF_X, R0, R_PIDTGID, 0, 0), -1);
		break;
	case SRC_CPU:
		call(&e->a, BPF_FUNC_get_smp_processor_id);
		break;
	case SRC_CGROUP:
	case SRC_UNIT:
		call(&e->a, BPF_FUNC_get_current_cgroup_id);
		break;
	default:
		load_ctx_number(e, k->off, k->size, k->is_signed);
	}
	agg_xform(e, k);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_AGGKEY + 8 + off, 0), -1);
}

/* The key of aggregate(), at FP_AGGKEY, for the map to: the header, then
 * each part. A long string in a compact key: to lng. */
static void agg_key(struct emitter *e, uint32_t to, int lng, int slow)
{
	const struct agg_desc *a = e->m->agg;

	agg_key_head(e, to, slow);
	for (uint32_t i = 0; i < a->n_keys; i++)
		agg_key_one(e, &a->keys[i], to, lng, slow);
}

/* agg_add(): hitcount and sums, atomically (the map's values are shared). */
static void agg_add(struct emitter *e)
{
	const struct agg_desc *a = e->m->agg;

	mov_reg(&e->a, R_REC, R0);
	mov_imm(&e->a, R1, 1);
	put(&e->a, insn(BPF_STX | BPF_ATOMIC | BPF_DW, R_REC, R1,
		    offsetof(struct agg_value, hitcount), BPF_ADD), -1);
	for (uint32_t i = 0; i < a->n_vals; i++) {
		load_ctx_number(e, a->vals[i].off, a->vals[i].size, a->vals[i].is_signed);
		put(&e->a, insn(BPF_STX | BPF_ATOMIC | BPF_DW, R_REC, R0,
			    offsetof(struct agg_value, sums) + 8 * i, BPF_ADD), -1);
	}
}

/* The entry of the key at FP_AGGKEY in the map to counted here, or, when
 * it has none yet, to slow. */
static void agg_count(struct emitter *e, uint32_t to, int pass, int slow)
{
	ld_imm64(&e->a, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->agg_keys_fd[to % AGG_MAPS]);
	mov_reg(&e->a, R2, R_FP);
	alu_imm(&e->a, BPF_ADD, R2, FP_AGGKEY);
	call(&e->a, BPF_FUNC_map_lookup_elem);
	jmp_imm(&e->a, BPF_JEQ, R0, 0, slow);
	agg_add(e);
	count(e, offsetof(struct event_stats, aggregated));
	count(e, offsetof(struct event_stats, agg_compiled));
	jump(&e->a, pass);
}

/* agg_by_stack_id(): the key is the id bpf_get_stackid() gives the stack in
 * agg_stacks, as its first u64. Any error (no stack, no id) goes to the
 * accept program, whose aggregate() asks again and gets the same answer:
 * the map is never cleared and, without BPF_F_REUSE_STACKID, a bucket once
 * taken keeps its stack, so an id found here is the one it finds there, and
 * an error here (a bucket another stack holds, the map full, no stack) is
 * the error there, which it counts as today (the frames as the key, or
 * Dropped). */
static void aggregate_by_stack_id(struct emitter *e, int pass, int slow)
{
	agg_key_head(e, AGG_MAP_SMALL, slow);
	mov_reg(&e->a, R1, R_CTX);
	ld_imm64(&e->a, R2, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->agg_stacks_fd);
	mov_imm(&e->a, R3, 0);
	call(&e->a, BPF_FUNC_get_stackid);
	jmp_imm(&e->a, BPF_JSLT, R0, 0, slow);
	put(&e->a, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_AGGKEY + 8, 0), -1);
	agg_count(e, AGG_MAP_SMALL, pass, slow);
}

/* An existing entry is counted here; a new key goes to the accept program. */
static void aggregate_here(struct emitter *e, int pass, int slow)
{
	const struct agg_desc *a = e->m->agg;
	int lng;

	if (a->stack_ids) {
		aggregate_by_stack_id(e, pass, slow);
		return;
	}
	if (a->short_size) {	/* agg_compact(): its strings short */
		lng = label_new(&e->a);
		agg_key(e, AGG_MAP_SMALL, lng, slow);
		agg_count(e, AGG_MAP_SMALL, pass, slow);
		label_place(&e->a, lng);
	}
	agg_key(e, a->map, slow, slow);
	agg_count(e, a->map, pass, slow);
}

void emit_keep(struct emitter *e, int pass)
{
	if (writes_here(e)) {
		if (e->d->n_dyn)
			write_dyn(e, pass);
		else
			write_here(e, pass);
		return;
	}
	if (filter_emit_aggregates(e->m)) {
		int slow = label_new(&e->a);

		aggregate_here(e, pass, slow);
		label_place(&e->a, slow);
	}
	/* A constant key: the JIT makes this a direct jump. */
	mov_reg(&e->a, R1, R_CTX);
	ld_imm64(&e->a, R2, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->accept_fd);
	/* A trigger's event: straight to the triggers' program. */
	mov_imm(&e->a, R3, e->m->agg && e->m->agg->trigger ? TRACERD_TRIGGER_PROG :
			   TRACERD_ACCEPT_PROG);
	call(&e->a, BPF_FUNC_tail_call);
	/* Only if the accept program is missing: a hit neither filtered nor
	 * written, so counted lost. */
	count(e, offsetof(struct event_stats, lost));
	jump(&e->a, pass);
}
