// SPDX-License-Identifier: GPL-2.0
/* A record's stacks as the kernel's own stack-trace entries, right after
 * the record on its CPU at its time, as the kernel's stacktrace option
 * writes them: ftrace:kernel_stack (int size, then the frames) and
 * ftrace:user_stack (tgid, then the frames), which trace-cmd prints as
 * "<stack trace >" blocks. The kernel frames start where --read's do (the
 * tracing machinery left out), and each frame's function goes into the
 * file's kallsyms, named as the store's writer named it. */
#include "export/trace_dat.h"
#include "export/trace_dat_priv.h"
#include "strbuf.h"
#include "util.h"

#define TD_ID_KERNEL_STACK	4	/* the ftrace formats' IDs (trace_dat_file.c) */
#define TD_ID_USER_STACK	13
#define TD_STACK_HDR		16	/* common fields, size or tgid, padding */

/* The function holding addr, from "func+0xoff/0xsize". */
static int add_symbol(struct trace_dat *t, const struct rec_stacks *s, uint64_t addr, struct strbuf *sb)
{
	const char *plus;
	unsigned long long off, size;

	sb_reset(sb);
	if (!rec_stack_symbol(s, addr, true, sb))
		return 0;
	plus = strchr(sb_str(sb), '+');
	if (!plus || sscanf(plus, "+0x%llx/0x%llx", &off, &size) != 2 || off > addr)
		return 0;
	return td_add_symbol(t, addr - off, size, sb_str(sb), plus - sb_str(sb));
}

static int put_stack(struct trace_dat *t, const struct trace_rec_hdr *h, uint16_t id,
		     uint32_t word, const struct rec_stacks *s, bool user, unsigned from, unsigned n)
{
	uint8_t rec[TD_STACK_HDR + 8 * TRACERD_STACK_DEPTH] = { 0 };
	int32_t pid = h->tid;
	unsigned k = 0;
	int r;

	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &word, 4);
	for (unsigned i = from; i < n && k < TRACERD_STACK_DEPTH; i++, k++) {
		uint64_t a = rec_stack_frame(s, user, i);

		memcpy(rec + TD_STACK_HDR + 8 * k, &a, 8);
	}
	if (id == TD_ID_KERNEL_STACK) {
		uint32_t size = k;	/* the kernel's stack_entry.size: frames */

		memcpy(rec + 8, &size, 4);
	}
	r = td_add(t, id, h, rec, TD_STACK_HDR + 8 * k);
	t->stacks += r == 1;
	return r < 0 ? r : 0;
}

int trace_dat_add_stacks(struct trace_dat *t, const struct trace_rec_hdr *h, const struct rec_stacks *s)
{
	const struct trace_stack_tail *tail = &s->tail;
	struct strbuf sb = { 0 };
	int r = 0;

	/* A stack taken, even of no frame (cut to nothing, lost), is an entry,
	 * as --read shows a block for it. */
	if (tail->kern != TRACERD_STACK_NONE) {
		unsigned first = rec_stack_first_kernel(s);

		for (unsigned i = first; i < tail->n_kern && r >= 0; i++)
			r = add_symbol(t, s, rec_stack_frame(s, false, i), &sb);
		if (r >= 0)
			r = put_stack(t, h, TD_ID_KERNEL_STACK, 0, s, false, first, tail->n_kern);
	}
	if (r >= 0 && tail->user != TRACERD_STACK_NONE)
		r = put_stack(t, h, TD_ID_USER_STACK, h->pid, s, true, 0, tail->n_user);
	sb_free(&sb);
	return r;
}
