/* SPDX-License-Identifier: GPL-2.0 */
/* Rendering a record as the kernel's trace output does: the text after
 * "event_name: ", and one value per field for structured sinks. */
#ifndef TRACERD_RENDER_H
#define TRACERD_RENDER_H

#include <stdint.h>
#include <stdio.h>
#include "diag.h"
#include "kernel-events/events.h"
#include "strbuf.h"

/* How a record is rendered: [Daemon] RawPointers=. Each call takes it (NULL:
 * pointers hashed), not the compiled print fmt, which never changes once
 * made: a reload may change it while another thread renders. */
struct render_opts {
	bool raw_pointers;	/* %p prints the address instead of a hash */
};

/* Compiles e's print fmt once, into e->render. Never fails for a print
 * fmt it cannot handle: that event falls back to field=value pairs. */
int render_prepare(struct tp_event *e);
void render_release(struct tp_event *e);

/* The text the kernel prints after "event_name: " (or in place of it, see
 * render_names_itself), appended to out; it holds no NUL, so out->len is
 * its end. */
void render_event(const struct tp_event *e, const struct render_opts *o, const uint8_t *rec,
		  size_t len, struct strbuf *out);

/* The text render_event gives is the whole of what the kernel prints after
 * the timestamp, the event's own name included ("sys_openat(dfd: 3, ...)"
 * and "sys_openat -> 0x3" of syscall events): no "event_name: " before it. */
bool render_names_itself(const struct tp_event *e);

/* value: as the print fmt shows it (symbolized); raw: the number, only for
 * flag and symbolic fields, else NULL. */
typedef void (*render_field_cb)(void *ctx, const struct tp_field *f, const char *value,
				const char *raw);
void render_fields(const struct tp_event *e, const struct render_opts *o, const uint8_t *rec,
		   size_t len, render_field_cb cb, void *ctx);

/* A syscall's user string argument as the class program read it
 * (SyscallStrings=): n bytes at s (no NUL), cut when it filled the
 * TRACERD_USTR_LEN bytes read; or, if it could not be read, err (an
 * errno: EFAULT, the page was not present) and no string. */
struct render_ustr {
	const struct tp_field *field;	/* the pointer argument */
	const char *s;
	size_t n;
	bool cut;
	int err;
};
typedef void (*render_ustr_cb)(void *ctx, const struct render_ustr *u);
/* Calls cb for each user string rec carries, in argument order; none for a
 * NULL pointer, nor for a record without them. */
void render_user_strings(const struct tp_event *e, const uint8_t *rec, size_t len,
			 render_ustr_cb cb, void *ctx);

/* v, a value of the flag or symbolic field f, as the event's line shows it
 * (the print fmt's masks and conditions applied to a record that holds v
 * in f and zeros elsewhere); the number when f has no table. */
void render_field_shown(const struct tp_event *e, const struct render_opts *o,
			const struct tp_field *f, uint64_t v, struct strbuf *out);

/* Prints e's flag and symbol tables, for --describe. */
void render_describe(const struct tp_event *e, FILE *out);

/* One field's value as a plain number, string or array: the fallback form.
 * A pointer field (f->is_pointer) prints "0x" and its hash unless raw_pointers. */
void render_field_plain(const struct tp_field *f, const uint8_t *rec, size_t len,
			bool raw_pointers, struct strbuf *out);

/* Where /proc/kallsyms shows no addresses, symbols come from fn (the
 * kernel's own printf, attach/ksym.c), remembered per address; NULL:
 * none (a hash is printed). */
typedef bool (*kallsyms_fallback_fn)(uint64_t addr, bool with_offset, struct strbuf *out);
void kallsyms_set_fallback(kallsyms_fallback_fn fn);

#endif
