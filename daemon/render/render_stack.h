/* SPDX-License-Identifier: GPL-2.0 */
/* Stack traces (StackTrace=): the frames the class program appended to a
 * record (tracerd_record.h), as the kernel's trace shows a stacktrace
 * trigger's entry, and as the journal's TRACE_STACK=/TRACE_USER_STACK=. */
#ifndef TRACERD_RENDER_STACK_H
#define TRACERD_RENDER_STACK_H

#include <stdint.h>
#include <sys/types.h>
#include "render/render.h"
#include "tracerd_record.h"

/* Where a kernel frame's symbol comes from when not from this kernel: a
 * store file's KSYMS ("func+0xoff/0xsize", "" for none; NULL: not said). */
typedef const char *(*rec_ksym_fn)(const void *ctx, uint64_t addr);

/* A record's stacks; tail all zero (both TRACERD_STACK_NONE) when it has none. */
struct rec_stacks {
	struct trace_stack_tail tail;
	const uint8_t *frames;		/* n_kern kernel frames, then n_user user frames */
	/* The user frames resolved as the record was read, a line each
	 * (render/ustack_text.h); NULL: not resolved, printed as addresses. */
	const char *user_text;
	size_t user_text_len;
	rec_ksym_fn ksym;		/* NULL: this kernel's symbols */
	const void *ksym_ctx;
};

/* Loads this kernel's symbols now (kallsyms, ~150k of them), at start, not
 * with the first stack's records. */
void render_stacks_prepare(void);

/* A kernel address's symbol as %pS prints it ("func+0xoff/0xsize"), from
 * this kernel (kallsyms, or its own printf without CAP_SYSLOG); false if no
 * symbol holds it. */
bool render_kernel_symbol(uint64_t addr, struct strbuf *out);

/* Splits a record of len bytes with hdr flags into the record proper,
 * whose length it returns, and its stacks (with their user frames' text
 * under TRACERD_REC_USTACK_TEXT). A record whose tail does not fit is
 * taken whole, without stacks. */
size_t rec_stacks_split(uint32_t flags, const uint8_t *rec, size_t len, struct rec_stacks *s);

/* Frame i of the kernel's (user: false) or the user's stack. */
uint64_t rec_stack_frame(const struct rec_stacks *s, bool user, unsigned i);
/* A kernel frame's symbol, from the record's source (s->ksym) or this
 * kernel: "func+0xoff/0xsize" with_offset, else "func"; false if none. */
bool rec_stack_symbol(const struct rec_stacks *s, uint64_t addr, bool with_offset, struct strbuf *out);

/* The first kernel frame shown: the tracepoint's caller (stack_skip(),
 * kernel-events/stack_skip.c, applied with the record's symbols). */
unsigned rec_stack_first_kernel(const struct rec_stacks *s);


/* The blocks the kernel's trace prints after an event's line: "<stack
 * trace>" and " => func" lines, then "<user stack trace>" and " => frame"
 * lines; prefix is the line's own "comm-tid [cpu] secs.usecs: ". */
void render_stacks_text(const struct rec_stacks *s, const struct render_opts *o,
			const char *prefix, size_t prefix_len, struct strbuf *out);

/* The journal's and --json's fields: TRACE_STACK= and TRACE_USER_STACK=,
 * one frame a line ("func+0xoff/0xsize"), and TRACE_STACK_CUT=1 or
 * TRACE_STACK_LOST=<errno> (and the TRACE_USER_STACK_ twins). */
typedef void (*render_kv_fn)(void *ctx, const char *key, const char *value, size_t n);
void render_stacks_fields(const struct rec_stacks *s, const struct render_opts *o,
			  render_kv_fn kv, void *ctx);


#endif
