// SPDX-License-Identifier: GPL-2.0
/* What the class program (bpf/tracerd.bpf.c) does around its filter, for an
 * emitted filter attached in its place: the head before the decision, the
 * count of a rejected event, and what becomes of a kept one. A record of
 * fixed size is written to the ring buffer here, reserved at its size (a
 * constant in this program, which the shared program cannot have) and
 * copied once, straight from the tracepoint into the ring; anything more
 * (aggregation, a dynamic payload, user strings, stacks, Unit=) goes to the
 * class program's accept half. */
#include <stddef.h>
#include "filter_emit_priv.h"

/* (this CPU's) stats[cookie].<counter>++ */
static void count(struct emitter *e, size_t counter)
{
	ldx(e, BPF_DW, R1, R_STATS, counter);
	alu_imm(e, BPF_ADD, R1, 1);
	put(e, insn(BPF_STX | BPF_MEM | BPF_DW, R_STATS, R1, counter, 0), -1);
}

/* class_head(): not after the daemon stopped, not for the daemon's own
 * events, then the hit, in this CPU's stats[cookie], which R_STATS keeps. */
void emit_head(struct emitter *e, int pass)
{
	mov_reg(e, R_CTX, R1);
	ld_imm64(e, R1, BPF_PSEUDO_MAP_VALUE,
		 (uint64_t)e->m->stopped_off << 32 | (uint32_t)e->m->bss_fd);
	ldx(e, BPF_W, R1, R1, 0);
	jmp_imm(e, BPF_JNE, R1, 0, pass);
	call(e, BPF_FUNC_get_current_pid_tgid);
	mov_reg(e, R_PIDTGID, R0);
	mov_reg(e, R1, R0);
	alu_imm(e, BPF_RSH, R1, 32);
	jmp_imm(e, BPF_JEQ, R1, (int32_t)e->m->self_tgid, pass);
	mov_reg(e, R1, R_CTX);
	call(e, BPF_FUNC_get_attach_cookie);	/* event id << 32 | slot */
	put(e, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_COOKIE, 0), -1);
	ld_imm64(e, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->stats_fd);
	mov_reg(e, R2, R_FP);
	alu_imm(e, BPF_ADD, R2, FP_COOKIE);
	call(e, BPF_FUNC_map_lookup_elem);
	jmp_imm(e, BPF_JEQ, R0, 0, pass);
	mov_reg(e, R_STATS, R0);
	count(e, offsetof(struct event_stats, hits));
}

void emit_reject(struct emitter *e, int pass)
{
	count(e, offsetof(struct event_stats, filtered));
	jump(e, pass);
}

/* Whether this program writes what it keeps: a record whose size the
 * layout fixes, and nothing for the accept half to add or check. */
static bool writes_here(const struct emitter *e)
{
	const struct event_desc *d = e->d;

	return e->m->rb_fd >= 0 && !e->m->unit && !d->agg && !d->n_dyn && !d->ustr_off[0] &&
	       !d->stack && d->fixed_size > 8 && d->fixed_size <= TRACERD_MAX_RECORD;
}

#define HDR(field) ((int16_t)offsetof(struct trace_rec_hdr, field))
#define REC ((int32_t)sizeof(struct trace_rec_hdr))

static void store_reg(struct emitter *e, int size, int16_t off, int src)
{
	put(e, insn(BPF_STX | BPF_MEM | size, R_REC, src, off, 0), -1);
}

/* class_accept()'s header, in the reserved record (R_REC). */
static void write_header(struct emitter *e)
{
	call(e, BPF_FUNC_ktime_get_ns);
	store_reg(e, BPF_DW, HDR(ts_ns), R0);
	ldx(e, BPF_W, R1, R_FP, FP_COOKIE);
	store_reg(e, BPF_W, HDR(slot), R1);
	call(e, BPF_FUNC_get_smp_processor_id);
	store_reg(e, BPF_W, HDR(cpu), R0);
	mov_reg(e, R1, R_PIDTGID);
	alu_imm(e, BPF_RSH, R1, 32);
	store_reg(e, BPF_W, HDR(pid), R1);
	store_reg(e, BPF_W, HDR(tid), R_PIDTGID);
	put(e, insn(BPF_ST | BPF_MEM | BPF_W, R_REC, 0, HDR(len), e->d->fixed_size), -1);
	put(e, insn(BPF_ST | BPF_MEM | BPF_W, R_REC, 0, HDR(flags), 0), -1);
	mov_reg(e, R1, R_REC);
	alu_imm(e, BPF_ADD, R1, HDR(comm));
	mov_imm(e, R2, TRACERD_COMM_LEN);
	call(e, BPF_FUNC_get_current_comm);
	call(e, BPF_FUNC_get_current_cgroup_id);
	store_reg(e, BPF_DW, HDR(cgroup_id), R0);
}

/* The record itself: copied from the tracepoint, common fields rebuilt (the
 * kernel overwrote them before we ran), as class_copy() does. */
static void write_record(struct emitter *e)
{
	mov_reg(e, R1, R_REC);
	alu_imm(e, BPF_ADD, R1, REC);
	mov_imm(e, R2, e->d->fixed_size);
	mov_reg(e, R3, R_CTX);
	call(e, BPF_FUNC_probe_read_kernel);
	mov_reg(e, R1, R_PIDTGID);
	alu_imm(e, BPF_LSH, R1, 32);
	ldx(e, BPF_DW, R2, R_FP, FP_COOKIE);
	alu_imm(e, BPF_RSH, R2, 32);	/* the event's id, from the cookie */
	alu_reg(e, BPF_OR, R1, R2);
	store_reg(e, BPF_DW, REC, R1);
}

/* Ring full: the record is lost, counted per slot and in lost_total. */
static void write_lost(struct emitter *e, int pass)
{
	count(e, offsetof(struct event_stats, lost));
	put(e, insn(BPF_ST | BPF_MEM | BPF_W, R_FP, 0, FP_AVAIL, 0), -1);
	ld_imm64(e, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->lost_total_fd);
	mov_reg(e, R2, R_FP);
	alu_imm(e, BPF_ADD, R2, FP_AVAIL);
	call(e, BPF_FUNC_map_lookup_elem);
	jmp_imm(e, BPF_JEQ, R0, 0, pass);
	ldx(e, BPF_DW, R1, R0, 0);
	alu_imm(e, BPF_ADD, R1, 1);
	put(e, insn(BPF_STX | BPF_MEM | BPF_DW, R0, R1, 0, 0), -1);
	jump(e, pass);
}

/* class_accept() for a record of fixed size: reserve, fill, submit, and
 * wake the consumer only when this record carries the ring across
 * WakeupBytes, as the class program does. */
static void write_here(struct emitter *e, int pass)
{
	int32_t size = REC + e->d->fixed_size;
	int lost = label_new(e), submit = label_new(e);

	ld_imm64(e, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rb_fd);
	mov_imm(e, R2, BPF_RB_AVAIL_DATA);
	call(e, BPF_FUNC_ringbuf_query);
	put(e, insn(BPF_STX | BPF_MEM | BPF_DW, R_FP, R0, FP_AVAIL, 0), -1);
	ld_imm64(e, R1, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->rb_fd);
	mov_imm(e, R2, size);
	mov_imm(e, R3, 0);
	call(e, BPF_FUNC_ringbuf_reserve);
	jmp_imm(e, BPF_JEQ, R0, 0, lost);
	mov_reg(e, R_REC, R0);
	write_record(e);
	write_header(e);
	mov_imm(e, R2, BPF_RB_NO_WAKEUP);
	ld_imm64(e, R3, 0, e->m->wakeup_bytes);
	ldx(e, BPF_DW, R1, R_FP, FP_AVAIL);
	jmp_reg(e, BPF_JGE, R1, R3, submit);
	alu_imm(e, BPF_ADD, R1, size);
	jmp_reg(e, BPF_JLT, R1, R3, submit);
	mov_imm(e, R2, BPF_RB_FORCE_WAKEUP);
	label_place(e, submit);
	mov_reg(e, R1, R_REC);
	call(e, BPF_FUNC_ringbuf_submit);
	jump(e, pass);
	label_place(e, lost);
	write_lost(e, pass);
}

void emit_keep(struct emitter *e, int pass)
{
	if (writes_here(e)) {
		write_here(e, pass);
		return;
	}
	/* A constant key: the JIT makes this a direct jump. */
	mov_reg(e, R1, R_CTX);
	ld_imm64(e, R2, BPF_PSEUDO_MAP_FD, (uint32_t)e->m->filters_fd);
	mov_imm(e, R3, TRACERD_ACCEPT_PROG);
	call(e, BPF_FUNC_tail_call);
	/* Only if the accept program is missing: a hit neither filtered nor
	 * written, so counted lost. */
	count(e, offsetof(struct event_stats, lost));
	jump(e, pass);
}
