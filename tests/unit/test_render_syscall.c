// SPDX-License-Identifier: GPL-2.0
/* Syscall events render as the kernel's print_syscall_enter/exit print them
 * (kernel/trace/trace_syscalls.c), not as their format's print fmt:
 * "sys_openat(dfd: 0xffffff9c, ..., mode: 0)" and "sys_openat -> 0x3".
 * Expected lines are copied from this machine's trace (kernel 6.18). */
#include <stdlib.h>
#include "fixtures.h"
#include "render/render.h"
#include "test.h"

static const struct render_opts raw = { .raw_pointers = true }, hashed = { .raw_pointers = false };

static struct tp_event *event(const char *name)
{
	struct tp_event *e = fx_find("syscalls", name);

	EXPECT(e, "no fixture syscalls:%s", name);
	if (e)
		EXPECT(render_prepare(e) == 0, "render_prepare %s", name);
	return e;
}

/* A record of e with its syscall's arguments (or return value) in order,
 * rendered with policy o. */
static char *render_args_as(const struct tp_event *e, const struct render_opts *o,
			    const uint64_t *args, size_t n, size_t len)
{
	struct strbuf sb = { 0 };
	uint8_t *rec = calloc(1, e->fixed_size);
	size_t k = 0;
	char *s;

	for (size_t i = 0; rec && i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		if (f->is_common || !strcmp(f->name, "__syscall_nr"))
			continue;
		EXPECT(f->size == 8, "%s: %s is %u bytes", e->name, f->name, f->size);
		if (k < n && f->size == 8)
			memcpy(rec + f->offset, &args[k], 8);
		k++;
	}
	EXPECT(k == n, "%s has %zu arguments, the test gave %zu", e->name, k, n);
	/* An exact-size copy: the SANITIZE=1 build sees any read past len. */
	if (rec && len < e->fixed_size)
		rec = realloc(rec, len ? len : 1);
	if (rec)
		render_event(e, o, rec, len, &sb);
	free(rec);
	s = strdup(sb_str(&sb));
	sb_free(&sb);
	return s;
}

static char *render_args(const struct tp_event *e, const uint64_t *args, size_t n, size_t len)
{
	return render_args_as(e, &raw, args, n, len);
}

#define CHECK_LINE(name, want, ...)                                                     \
	do {                                                                            \
		const struct tp_event *_e = event(name);                                \
		const uint64_t _a[] = { __VA_ARGS__ };                                  \
		char *_s = _e ? render_args(_e, _a, ARRAY_SIZE(_a), _e->fixed_size) : NULL; \
		EXPECT_STREQ(_s, want);                                                 \
		free(_s);                                                               \
	} while (0)

/* A pointer-typed argument (a user address: ASLR) is hashed unless
 * RawPointers=yes, like every pointer tracerd prints. */
static void pointer_arguments_are_hashed(void)
{
	struct tp_event *e = event("sys_enter_openat");
	const uint64_t args[] = { 0xffffff9c, 0x7ff5b736aa90, 0x80000, 0 }, null[] = { 3, 0, 0, 0 };
	char *s, *z;

	if (!e)
		return;
	s = render_args_as(e, &hashed, args, 4, e->fixed_size);
	z = render_args_as(e, &hashed, null, 4, e->fixed_size);
	EXPECT(s && !strstr(s, "7ff5b736aa90") && strstr(s, "sys_openat(dfd: 0xffffff9c, filename: 0x") &&
	       strstr(s, ", flags: 0x80000, mode: 0)"), "hashed: %s", s);
	EXPECT_STREQ(z, "sys_openat(dfd: 3, filename: 0, flags: 0, mode: 0)");
	free(s);
	free(z);
}

static void enter_as_the_kernel_prints_it(void)
{
	CHECK_LINE("sys_enter_openat",
		   "sys_openat(dfd: 0xffffff9c, filename: 0x7ff5b736aa90, flags: 0x80000, mode: 0)",
		   0xffffff9c, 0x7ff5b736aa90, 0x80000, 0);
	CHECK_LINE("sys_enter_read", "sys_read(fd: 3, buf: 0x7fff24b92438, count: 0x340)",
		   3, 0x7fff24b92438, 0x340);
	CHECK_LINE("sys_enter_close", "sys_close(fd: 3)", 3);
	CHECK_LINE("sys_enter_mmap",
		   "sys_mmap(addr: 0x7ff5b733e000, len: 0x2f0, prot: 3, flags: 0x32, fd: 0xffffffff, off: 0)",
		   0x7ff5b733e000, 0x2f0, 3, 0x32, 0xffffffff, 0);
}

/* Below 10 in decimal, from 10 on as 0x%lx of the unsigned long. */
static void small_values_decimal_large_hex(void)
{
	CHECK_LINE("sys_enter_mmap",
		   "sys_mmap(addr: 9, len: 0xa, prot: 0, flags: 0xf, fd: 0xffffffffffffffff, off: 0x10)",
		   9, 10, 0, 15, UINT64_MAX, 16);
	CHECK_LINE("sys_enter_kill", "sys_kill(pid: 1, sig: 0)", 1, 0);
	CHECK_LINE("sys_enter_kill", "sys_kill(pid: 0x8000000000000000, sig: 0x7fffffff)",
		   1ULL << 63, 0x7fffffff);
}

static void no_arguments(void)
{
	CHECK_LINE("sys_enter_getpid", "sys_getpid()");
	CHECK_LINE("sys_enter_rt_sigreturn", "sys_rt_sigreturn()");
	CHECK_LINE("sys_enter_sched_yield", "sys_sched_yield()");
}

/* The return value is always 0x%lx of the long: negative errnos too. */
static void exit_returns(void)
{
	CHECK_LINE("sys_exit_openat", "sys_openat -> 0x3", 3);
	CHECK_LINE("sys_exit_close", "sys_close -> 0x0", 0);
	CHECK_LINE("sys_exit_openat", "sys_openat -> 0xfffffffffffffffe", (uint64_t)-2);
	CHECK_LINE("sys_exit_read", "sys_read -> 0xffffffffffffffea", (uint64_t)-22);
	CHECK_LINE("sys_exit_mmap", "sys_mmap -> 0x7ff5b7349000", 0x7ff5b7349000);
	CHECK_LINE("sys_exit_getpid", "sys_getpid -> 0x1f4", 500);
}

/* All 720 syscalls events of the captured formats: "sys_X(a: 0, b: 0...)"
 * from the event's name and its fields after __syscall_nr. */
static void every_syscall_event(void)
{
	struct strbuf want = { 0 };
	size_t n = 0, bad = 0;

	fx_load();
	for (size_t i = 0; i < fx_n; i++) {
		struct tp_event *e = fx_events[i];
		bool enter = !strncmp(e->name, "sys_enter_", 10);
		uint64_t zero[8] = { 0 };
		size_t nargs = 0;
		char *s;

		if (strcmp(e->system, "syscalls"))
			continue;
		n++;
		EXPECT(render_prepare(e) == 0, "render_prepare %s", e->name);
		sb_reset(&want);
		sb_printf(&want, "sys_%s%s", e->name + (enter ? 10 : 9), enter ? "(" : " -> 0x0");
		for (size_t k = 0; k < e->n_fields; k++) {
			const struct tp_field *f = &e->fields[k];

			if (f->is_common || !strcmp(f->name, "__syscall_nr"))
				continue;
			if (enter)
				sb_printf(&want, "%s%s: 0", nargs ? ", " : "", f->name);
			nargs++;
		}
		if (enter)
			sb_putc(&want, ')');
		s = render_args(e, zero, nargs, e->fixed_size);
		if (strcmp(s, sb_str(&want)) && bad++ < 5)
			EXPECT(0, "%s: got '%s', want '%s'", e->name, s, sb_str(&want));
		free(s);
	}
	sb_free(&want);
	EXPECT(n == 720, "%zu syscalls events", n);
	EXPECT(!bad, "%zu of %zu render otherwise", bad, n);
}

/* A record shorter than the format (never from the kernel): no read past
 * it, a marker where an argument would be. */
static void short_record(void)
{
	const struct tp_event *e = event("sys_enter_openat");
	const uint64_t a[] = { 1, 2, 3, 4 };
	char *s;

	if (!e)
		return;
	s = render_args(e, a, 4, 28);
	EXPECT_STREQ(s, "sys_openat(dfd: 1, filename: [field past the record], flags: [field past the record], mode: [field past the record])");
	free(s);
	s = render_args(e, a, 4, 0);
	EXPECT(s && !strncmp(s, "sys_openat(dfd: [field past the record]", 39), "got '%s'", s);
	free(s);
}

/* Only the kernel's syscall events: "syscalls", sys_enter_/sys_exit_, and
 * __syscall_nr first. The same format elsewhere prints its print fmt. */
static void names_itself_only_syscalls(void)
{
	struct tp_event *e = event("sys_enter_openat"), *x = event("sys_exit_openat");
	struct tp_event *other = NULL;
	const uint64_t a[] = { 3, 0x10, 0x80000, 0 };
	char *saved, *s;

	EXPECT(e && render_names_itself(e), "sys_enter_openat names itself");
	EXPECT(x && render_names_itself(x), "sys_exit_openat names itself");
	for (size_t i = 0; i < fx_n; i++)
		if (!strcmp(fx_events[i]->name, "sched_switch"))
			other = fx_events[i];
	EXPECT(other && render_prepare(other) == 0 && !render_names_itself(other),
	       "sched_switch does not");
	if (!e || !e->render)
		return;
	saved = e->system;
	e->system = (char *)"notsyscalls";
	render_release(e);
	EXPECT(render_prepare(e) == 0 && !render_names_itself(e), "other system");
	s = render_args(e, a, 4, e->fixed_size);
	EXPECT_STREQ(s, "dfd: 0x00000003, filename: 0x00000010, flags: 0x00080000, mode: 0x00000000");
	free(s);
	e->system = saved;
	render_release(e);
}

int main(void)
{
	RUN(enter_as_the_kernel_prints_it);
	RUN(pointer_arguments_are_hashed);
	RUN(small_values_decimal_large_hex);
	RUN(no_arguments);
	RUN(exit_returns);
	RUN(every_syscall_event);
	RUN(short_record);
	RUN(names_itself_only_syscalls);
	for (size_t i = 0; i < fx_n; i++) {
		render_release(fx_events[i]);
		tp_event_free(fx_events[i]);
	}
	free(fx_events);
	return TEST_EXIT();
}
