// SPDX-License-Identifier: GPL-2.0
/* Syscall events as the kernel prints them. Their print fmt is not what the
 * kernel's trace shows: kernel/trace/trace_syscalls.c registers its own
 * output functions, print_syscall_enter and print_syscall_exit:
 *   sys_openat(dfd: 0xffffff9c, filename: 0x7f3e99f030b1, flags: 0x80000, mode: 0)
 *   sys_openat -> 0x3
 * An argument below 10 prints as %lu, the rest as 0x%lx; the return value
 * always as 0x%lx of the long (-2 is 0xfffffffffffffffe). The text carries
 * the syscall's name, so the line has no "event_name: " before it. The
 * kernel's "verbose" option (types before the names) is off by default and
 * not followed. A user string argument that the class program read
 * (SyscallStrings=) follows its pointer, quoted and escaped:
 *   sys_openat(dfd: 0xffffff9c, filename: 0x7f3e99f030b1 "/etc/passwd", ...)
 * "..." after it when it filled the buffer, " (unreadable)" when the read
 * failed (the page was not present). */
#include <stdarg.h>
#include <stdio.h>
#include "kernel-events/field_source.h"
#include "render_priv.h"
#include "util.h"

#define PAST "[field past the record]"

struct rsys_arg {
	char *lit;		/* "sys_openat(dfd: ", ", filename: ", or "sys_openat -> 0x" */
	size_t lit_len;
	unsigned off, size;
	bool is_signed;
	bool is_pointer;	/* hashed unless RawPointers=yes, like every pointer */
	int ustr;		/* a user string argument: its index, else -1 */
};

struct rsys {
	bool is_exit;
	struct rsys_arg *args;
	size_t n_args;
	char *tail;		/* "sys_getpid()" has no argument: all of it */
	size_t tail_len;
	unsigned words;		/* where the user strings' words begin */
	unsigned n_ustr;
	const struct tp_field *ustr[TRACERD_MAX_USTR];
};

/* The syscall's name as the kernel's metadata has it: its events are
 * "sys_enter" and "sys_exit" followed by the same "_name". NULL if e is
 * not a syscall event of the kernel's shape. */
static const char *syscall_suffix(const struct tp_event *e, bool *is_exit)
{
	if (!e->system || strcmp(e->system, "syscalls") || !e->name)
		return NULL;
	*is_exit = !strncmp(e->name, "sys_exit_", 9);
	if (*is_exit)
		return e->name[9] ? e->name + 8 : NULL;
	if (!strncmp(e->name, "sys_enter_", 10) && e->name[10])
		return e->name + 9;
	return NULL;
}

/* The fields after __syscall_nr, all scalars; exit has exactly one, ret. */
static const struct tp_field *syscall_args(const struct tp_event *e, bool is_exit, size_t *n)
{
	size_t i = 0;

	while (i < e->n_fields && e->fields[i].is_common)
		i++;
	if (i == e->n_fields || strcmp(e->fields[i].name, "__syscall_nr"))
		return NULL;
	*n = e->n_fields - ++i;
	if (is_exit && *n != 1)
		return NULL;
	for (size_t k = i; k < e->n_fields; k++)
		if (e->fields[k].kind != TP_FIELD_SCALAR || e->fields[k].is_common ||
		    !e->fields[k].size || e->fields[k].size > 8)
			return NULL;
	return e->fields + i;
}

static void rsys_free(struct rsys *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_args; i++)
		free(s->args[i].lit);
	free(s->args);
	free(s->tail);
	free(s);
}

static int _printf_(3, 4) lit_printf(char **ret, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	*len = n;
	return 0;
}

/* The literal before each value: "sys_openat(dfd: ", ", filename: "...,
 * or "sys_openat -> 0x"; then ")", or all of "sys_getpid()". */
static int rsys_build(struct rsys *s, const char *suffix, const struct tp_field *f, size_t n)
{
	int r;

	s->args = calloc(n ? n : 1, sizeof(*s->args));
	if (!s->args)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct rsys_arg *a = &s->args[i];

		r = s->is_exit ? lit_printf(&a->lit, &a->lit_len, "sys%s -> 0x", suffix) :
		    i ? lit_printf(&a->lit, &a->lit_len, ", %s: ", f[i].name) :
		    lit_printf(&a->lit, &a->lit_len, "sys%s(%s: ", suffix, f[i].name);
		if (r < 0)
			return r;
		a->off = f[i].offset;
		a->size = f[i].size;
		a->is_signed = f[i].is_signed;
		a->is_pointer = f[i].is_pointer;
		a->ustr = -1;
		for (unsigned k = 0; k < s->n_ustr; k++)
			if (s->ustr[k] == &f[i])
				a->ustr = k;
		s->n_args++;
	}
	if (s->is_exit)
		return lit_printf(&s->tail, &s->tail_len, "%s", "");
	return n ? lit_printf(&s->tail, &s->tail_len, ")") :
	       lit_printf(&s->tail, &s->tail_len, "sys%s()", suffix);
}

/* 1 and p->mode RM_SYSCALL if e is a syscall event; 0 if it is not. */
int rsys_compile(const struct tp_event *e, struct rprog *p)
{
	const struct tp_field *f;
	const char *suffix;
	struct rsys *s;
	bool is_exit;
	size_t n;
	int r;

	suffix = syscall_suffix(e, &is_exit);
	if (!suffix || !(f = syscall_args(e, is_exit, &n)))
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->is_exit = is_exit;
	s->n_ustr = field_source_user_strings(e, s->ustr);
	s->words = tracerd_ustr_words(e->fixed_size);
	r = rsys_build(s, suffix, f, n);
	if (r < 0) {
		rsys_free(s);
		return r;
	}
	p->sys = s;
	p->mode = RM_SYSCALL;
	return 1;
}

void rsys_release(struct rprog *p)
{
	rsys_free(p->sys);
	p->sys = NULL;
}

/* The argument (unsigned long) or return value (long) as a 64-bit word. */
static uint64_t load_word(const uint8_t *p, const struct rsys_arg *a)
{
	return tracerd_load(p, a->size, a->is_signed);
}

/* The user string k of rec as the class program appended it; false if the
 * record carries none (SyscallStrings=no) or the pointer was NULL. */
static bool ustr_get(const struct rsys *s, unsigned k, const uint8_t *rec, size_t len,
		     struct render_ustr *u)
{
	uint32_t word, off, n;

	if (k >= s->n_ustr || len < s->words + 4 * s->n_ustr)
		return false;
	memcpy(&word, rec + s->words + 4 * k, sizeof(word));
	off = word & 0xffff;
	n = word >> 16;
	*u = (struct render_ustr){ .field = s->ustr[k] };
	if (!n) {
		u->err = off;
		return off != 0;
	}
	if (!tracerd_span_fits(off, n, len) || n > TRACERD_USTR_LEN) {
		u->err = EBADMSG;	/* a damaged record: no string rather than a wrong one */
		return true;
	}
	u->s = (const char *)rec + off;
	u->n = strnlen(u->s, n);
	u->cut = n == TRACERD_USTR_LEN;
	return true;
}

/* ' "escaped"' (with "..." if cut) or " (unreadable)", after the pointer. */
static void put_ustr(const struct render_ustr *u, struct strbuf *out)
{
	if (u->err) {
		sb_puts(out, " (unreadable)");
		return;
	}
	sb_put(out, " \"", 2);
	render_c_escaped(u->s, u->n, out);
	sb_putc(out, '"');
	if (u->cut)
		sb_put(out, "...", 3);
}

void rsys_render(const struct rprog *p, bool raw, const uint8_t *rec, size_t len,
		 struct strbuf *out)
{
	const struct rsys *s = p->sys;
	struct render_ustr u;

	for (size_t i = 0; i < s->n_args; i++) {
		const struct rsys_arg *a = &s->args[i];
		uint64_t v;

		sb_put(out, a->lit, a->lit_len);
		if (a->off + a->size > len) {
			sb_put(out, PAST, sizeof(PAST) - 1);
			continue;
		}
		v = load_word(rec + a->off, a);
		if (a->is_pointer && !raw)
			v = render_hash_pointer(v);
		if (s->is_exit)
			sb_put_hex(out, v);		/* after "-> 0x" */
		else if (v < 10)
			sb_putc(out, '0' + v);
		else {
			sb_put(out, "0x", 2);
			sb_put_hex(out, v);
		}
		if (a->ustr >= 0 && ustr_get(s, a->ustr, rec, len, &u))
			put_ustr(&u, out);
	}
	sb_put(out, s->tail, s->tail_len);
}

void rsys_user_strings(const struct rprog *p, const uint8_t *rec, size_t len,
		       render_ustr_cb cb, void *ctx)
{
	struct render_ustr u;

	for (unsigned k = 0; k < p->sys->n_ustr; k++)
		if (ustr_get(p->sys, k, rec, len, &u))
			cb(ctx, &u);
}
