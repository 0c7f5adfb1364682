// SPDX-License-Identifier: GPL-2.0
/* Stack traces: see render_stack.h. Kernel frames are symbolized as %pS
 * is (render_kallsyms.c: /proc/kallsyms, or the kernel's own printf where
 * it shows no addresses); one that no symbol holds prints as a hashed
 * pointer unless RawPointers=yes. */
#include <string.h>
#include "kernel-events/stack_skip.h"
#include "render/render_stack.h"
#include "render/ustack_text.h"
#include "render_priv.h"
#include "util.h"

size_t rec_stacks_split(uint32_t flags, const uint8_t *rec, size_t len, struct rec_stacks *s)
{
	uint32_t off;

	memset(s, 0, sizeof(*s));
	if ((flags & TRACERD_REC_USTACK_TEXT) && (flags & TRACERD_REC_STACKS) &&
	    !ustack_text_split(rec, len, &len, &s->user_text, &s->user_text_len))
		return len;
	if (!(flags & TRACERD_REC_STACKS) || len > UINT32_MAX ||
	    !tracerd_stacks_split(rec, len, &s->tail, &off)) {
		memset(s, 0, sizeof(*s));
		return len;
	}
	s->frames = rec + off;
	return off;
}

uint64_t rec_stack_frame(const struct rec_stacks *s, bool user, unsigned i)
{
	uint64_t v;

	memcpy(&v, s->frames + 8 * (i + (user ? s->tail.n_kern : 0)), sizeof(v));
	return v;
}

void render_stacks_prepare(void)
{
	struct strbuf sb = { 0 };

	(void)kallsyms_lookup_print(0, false, &sb);	/* loads them; 0 is in no symbol */
	sb_free(&sb);
}

bool render_kernel_symbol(uint64_t addr, struct strbuf *out)
{
	return kallsyms_lookup_print(addr, true, out);
}

/* addr's symbol, from the record's source (a store file) or this kernel. */
bool rec_stack_symbol(const struct rec_stacks *s, uint64_t addr, bool with_offset,
			 struct strbuf *out)
{
	const char *t = s->ksym ? s->ksym(s->ksym_ctx, addr) : NULL;

	if (!t)
		return kallsyms_lookup_print(addr, with_offset, out);
	if (!*t)
		return false;
	sb_put(out, t, with_offset ? strlen(t) : strcspn(t, "+ "));
	return true;
}

/* stack_skip()'s symbolizer: the function alone, from the record's source. */
static bool frame_function(uint64_t addr, struct strbuf *out, void *ctx)
{
	return rec_stack_symbol(ctx, addr, false, out);
}

unsigned rec_stack_first_kernel(const struct rec_stacks *s)
{
	uint64_t f[TRACERD_STACK_DEPTH];
	unsigned n = s->tail.n_kern < TRACERD_STACK_DEPTH ? s->tail.n_kern : TRACERD_STACK_DEPTH, i;

	for (i = 0; i < n; i++)
		f[i] = rec_stack_frame(s, false, i);
	return stack_skip(f, n, frame_function, (void *)s);
}

/* User frame i: as it was resolved when the record was read, else (the
 * record had no room for its line, or came without) its address, marked. */
static void user_frame(const struct rec_stacks *s, unsigned i, struct strbuf *out)
{
	size_t n;
	const char *t = s->user_text ? ustack_text_line(s->user_text, s->user_text_len, i, &n) : NULL;

	if (t) {
		sb_put(out, t, n);
		return;
	}
	ustack_format_frame(NULL, 0, rec_stack_frame(s, true, i), out);
	sb_puts(out, " (not resolved)");
}

static void kernel_frame(const struct rec_stacks *s, uint64_t addr, bool with_offset,
			 const struct render_opts *o, struct strbuf *out)
{
	if (!rec_stack_symbol(s, addr, with_offset, out))
		render_plain_pointer(addr, o && o->raw_pointers, out);
}

static const char *errname(int err, char *buf, size_t size)
{
	const char *n = strerrorname_np(err);

	if (n)
		return n;
	snprintf(buf, size, "%d", err);
	return buf;
}

/* After a block's frames: why it is not the whole stack. */
static void text_state(unsigned state, unsigned n, unsigned err, struct strbuf *out)
{
	char num[16];

	if (state == TRACERD_STACK_CUT)
		sb_printf(out, " => ... (cut at %u frames)\n", n);
	else if (state == TRACERD_STACK_LOST)
		sb_printf(out, " => ... (lost: %s)\n", errname(err, num, sizeof(num)));
}

void render_stacks_text(const struct rec_stacks *s, const struct render_opts *o,
			const char *prefix, size_t prefix_len, struct strbuf *out)
{
	const struct trace_stack_tail *t = &s->tail;

	if (t->kern != TRACERD_STACK_NONE) {
		sb_put(out, prefix, prefix_len);
		sb_puts(out, "<stack trace>\n");
		for (unsigned i = rec_stack_first_kernel(s); i < t->n_kern; i++) {
			sb_put(out, " => ", 4);
			kernel_frame(s, rec_stack_frame(s, false, i), false, o, out);
			sb_putc(out, '\n');
		}
		text_state(t->kern, t->n_kern, t->kern_err, out);
	}
	if (t->user != TRACERD_STACK_NONE) {
		sb_put(out, prefix, prefix_len);
		sb_puts(out, "<user stack trace>\n");
		for (unsigned i = 0; i < t->n_user && rec_stack_frame(s, true, i); i++) {
			sb_put(out, " => ", 4);
			user_frame(s, i, out);
			sb_putc(out, '\n');
		}
		text_state(t->user, t->n_user, t->user_err, out);
	}
}

/* One stack's fields: NAME= the frames, one a line; NAME_CUT=1 or NAME_LOST=errno. */
static void stack_fields(const struct rec_stacks *s, const struct render_opts *o, bool user,
			 render_kv_fn kv, void *ctx)
{
	const char *name = user ? "TRACE_USER_STACK" : "TRACE_STACK";
	unsigned state = user ? s->tail.user : s->tail.kern;
	unsigned n = user ? s->tail.n_user : s->tail.n_kern;
	struct strbuf sb = { 0 };
	char key[32], num[16];

	if (state == TRACERD_STACK_NONE)
		return;
	for (unsigned i = user ? 0 : rec_stack_first_kernel(s); i < n; i++) {
		uint64_t ip = rec_stack_frame(s, user, i);

		if (user && !ip)	/* the walk's end, as ftrace takes it */
			break;
		if (sb.len)
			sb_putc(&sb, '\n');
		if (user)
			user_frame(s, i, &sb);
		else
			kernel_frame(s, ip, true, o, &sb);
	}
	if (state != TRACERD_STACK_LOST)
		kv(ctx, name, sb_str(&sb), sb.len);
	if (state == TRACERD_STACK_CUT) {
		snprintf(key, sizeof(key), "%s_CUT", name);
		kv(ctx, key, "1", 1);
	} else if (state == TRACERD_STACK_LOST) {
		const char *e = errname(user ? s->tail.user_err : s->tail.kern_err, num, sizeof(num));

		snprintf(key, sizeof(key), "%s_LOST", name);
		kv(ctx, key, e, strlen(e));
	}
	sb_free(&sb);
}

void render_stacks_fields(const struct rec_stacks *s, const struct render_opts *o,
			  render_kv_fn kv, void *ctx)
{
	stack_fields(s, o, false, kv, ctx);
	stack_fields(s, o, true, kv, ctx);
}
