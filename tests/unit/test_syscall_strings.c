// SPDX-License-Identifier: GPL-2.0
/* Syscall user string arguments (SyscallStrings=): which arguments are
 * strings (kernel-events/field_source.c), how a record carrying them renders
 * (the string after its pointer, "(unreadable)", "..." when cut), the
 * journal's fields for them, and Filter= on them run by the BPF interpreter
 * itself (bpf/filter.bpf.h built for userspace, store_filter.c). Records
 * are built in the layout bpf/user_str.bpf.h writes (tracerd_ustr_words). */
#include <linux/types.h>
#include <stdbool.h>
#include <stdlib.h>
#include "filter/filter.h"
#include "kernel-events/field_source.h"
#include "render/render.h"
#include "sink/sink.h"
#include "store/store_filter.h"
#include "fixtures.h"
#include "test.h"

static const struct render_opts raw = { .raw_pointers = true };

static struct tp_event *event(const char *name)
{
	struct tp_event *e = fx_find("syscalls", name);

	EXPECT(e, "no fixture syscalls:%s", name);
	if (e)
		EXPECT(render_prepare(e) == 0, "render_prepare %s", name);
	return e;
}

/* A record as the class program leaves it: fixed part, then a word per
 * user string argument, then the strings. strs[i] NULL: a NULL pointer;
 * errs[i]: that read failed with errs[i]. */
struct rec {
	__u8 data[2 * TRACERD_MAX_RECORD] __attribute__((aligned(8)));
	size_t len;
};

static void build(struct rec *r, const struct tp_event *e, const char *const *strs,
		  const int *errs, size_t n)
{
	const struct tp_field *u[TRACERD_MAX_USTR];
	size_t nu = field_source_user_strings(e, u), pos;
	__u32 words = tracerd_ustr_words(e->fixed_size);

	memset(r, 0, sizeof(*r));
	EXPECT(nu == n, "%s: %zu user strings, the test gave %zu", e->name, nu, n);
	pos = words + 4 * nu;
	for (size_t i = 0; i < nu && i < n; i++) {
		__u64 ptr = strs[i] || errs[i] ? 0x7ffd5a3c0000ull + i * 0x100 : 0;
		__u32 word = errs[i];

		memcpy(r->data + u[i]->offset, &ptr, 8);
		if (strs[i]) {
			size_t k = strlen(strs[i]) + 1;

			if (k > TRACERD_USTR_LEN)	/* as bpf_probe_read_user_str cuts */
				k = TRACERD_USTR_LEN;
			memcpy(r->data + pos, strs[i], k - 1);
			word = k << 16 | pos;
			pos += k;
		}
		memcpy(r->data + words + 4 * i, &word, 4);
	}
	r->len = pos;
}

static char *render(const struct tp_event *e, const struct rec *r, size_t len)
{
	struct strbuf sb = { 0 };
	char *s;

	render_event(e, &raw, r->data, len, &sb);
	s = strdup(sb_str(&sb));
	sb_free(&sb);
	return s;
}

/* The rule: const char * arguments of sys_enter events, not a buffer
 * followed by its size_t length. */
static void which_arguments(void)
{
	static const struct {
		const char *event;
		const char *names;
	} want[] = {
		{ "sys_enter_openat", "filename" },
		{ "sys_enter_renameat2", "oldname newname" },
		{ "sys_enter_request_key", "_type _description _callout_info" },
		{ "sys_enter_execve", "filename" },
		{ "sys_enter_write", "" },		/* buf, count */
		{ "sys_enter_pwrite64", "" },
		{ "sys_enter_mq_timedsend", "" },	/* u_msg_ptr, msg_len */
		{ "sys_exit_openat", "" },
		{ "sys_enter_read", "" },		/* char *buf: written, not read */
	};
	size_t total = 0;

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct tp_event *e = event(want[i].event);
		const struct tp_field *u[TRACERD_MAX_USTR];
		char got[200] = "";
		size_t n;

		if (!e)
			continue;
		n = field_source_user_strings(e, u);
		for (size_t k = 0; k < n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? " " : "",
				 u[k]->name);
		EXPECT(!strcmp(got, want[i].names), "%s: '%s', want '%s'", want[i].event, got,
		       want[i].names);
	}
	for (size_t i = 0; i < fx_n; i++) {
		const struct tp_field *u[TRACERD_MAX_USTR];

		total += field_source_user_strings(fx_events[i], u);
	}
	printf("# %zu user string arguments in the captured syscall events\n", total);
	EXPECT(total == 99, "%zu user string arguments, want 99", total);
}

static void renders_after_the_pointer(void)
{
	const struct tp_event *e = event("sys_enter_openat"), *r2 = event("sys_enter_renameat2");
	static struct rec r;
	static const int none[4];
	char long_path[400], *s;

	if (!e || !r2)
		return;
	build(&r, e, (const char *[]){ "/etc/passwd" }, none, 1);
	s = render(e, &r, r.len);
	EXPECT_STREQ(s, "sys_openat(dfd: 0, filename: 0x7ffd5a3c0000 \"/etc/passwd\", flags: 0, mode: 0)");
	free(s);
	/* No strings carried (SyscallStrings=no): the pointer alone. */
	s = render(e, &r, e->fixed_size);
	EXPECT_STREQ(s, "sys_openat(dfd: 0, filename: 0x7ffd5a3c0000, flags: 0, mode: 0)");
	free(s);
	build(&r, e, (const char *[]){ NULL }, (const int[]){ 14 }, 1);
	s = render(e, &r, r.len);
	EXPECT_STREQ(s, "sys_openat(dfd: 0, filename: 0x7ffd5a3c0000 (unreadable), flags: 0, mode: 0)");
	free(s);
	build(&r, e, (const char *[]){ NULL }, none, 1);	/* NULL: nothing read */
	s = render(e, &r, r.len);
	EXPECT_STREQ(s, "sys_openat(dfd: 0, filename: 0, flags: 0, mode: 0)");
	free(s);
	build(&r, e, (const char *[]){ "a \"b\"\\\n\t\x01\xc3\xa9" }, none, 1);
	s = render(e, &r, r.len);
	EXPECT_STREQ(s, "sys_openat(dfd: 0, filename: 0x7ffd5a3c0000 \"a \\\"b\\\"\\\\\\n\\t\\x01\\xc3\\xa9\", flags: 0, mode: 0)");
	free(s);
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = 0;
	build(&r, e, (const char *[]){ long_path }, none, 1);
	s = render(e, &r, r.len);
	EXPECT(s && strstr(s, "\"...") && strlen(s) > TRACERD_USTR_LEN, "cut: %s", s);
	free(s);
	build(&r, r2, (const char *[]){ "/a", "/b" }, none, 2);
	s = render(r2, &r, r.len);
	EXPECT(s && strstr(s, "oldname: 0x7ffd5a3c0000 \"/a\", newdfd: 0, newname: 0x7ffd5a3c0100 \"/b\", "),
	       "two: %s", s);
	free(s);
}

/* A damaged word never shows bytes that are not the string. */
static void damaged_words(void)
{
	const struct tp_event *e = event("sys_enter_openat");
	static struct rec r;
	__u32 words, bad = 20u << 16 | 2000;	/* past the record */
	char *s;

	if (!e)
		return;
	build(&r, e, (const char *[]){ "/etc/passwd" }, (const int[]){ 0 }, 1);
	words = tracerd_ustr_words(e->fixed_size);
	memcpy(r.data + words, &bad, 4);
	s = render(e, &r, r.len);
	EXPECT(s && strstr(s, "(unreadable)"), "past the record: %s", s);
	free(s);
	s = render(e, &r, words + 2);	/* the word itself cut */
	EXPECT_STREQ(s, "sys_openat(dfd: 0, filename: 0x7ffd5a3c0000, flags: 0, mode: 0)");
	free(s);
}

static void kv(void *ctx, const char *key, const char *value, size_t n)
{
	struct strbuf *sb = ctx;

	sb_printf(sb, "%s=%.*s;", key, (int)n, value);
}

static void journal_cb(void *ctx, const struct render_ustr *u)
{
	journal_user_string("TRACE_FILENAME", u, kv, ctx);
}

static void journal_fields(void)
{
	const struct tp_event *e = event("sys_enter_openat");
	static struct rec r;
	struct strbuf sb = { 0 };
	char long_path[400];

	if (!e)
		return;
	build(&r, e, (const char *[]){ "/etc/pass\nwd" }, (const int[]){ 0 }, 1);
	render_user_strings(e, r.data, r.len, journal_cb, &sb);
	EXPECT_STREQ(sb_str(&sb), "TRACE_FILENAME_STR=/etc/pass\nwd;");
	sb_reset(&sb);
	build(&r, e, (const char *[]){ NULL }, (const int[]){ 14 }, 1);
	render_user_strings(e, r.data, r.len, journal_cb, &sb);
	EXPECT_STREQ(sb_str(&sb), "TRACE_FILENAME_STR_UNREADABLE=EFAULT;");
	sb_reset(&sb);
	memset(long_path, 'y', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = 0;
	build(&r, e, (const char *[]){ long_path }, (const int[]){ 0 }, 1);
	render_user_strings(e, r.data, r.len, journal_cb, &sb);
	EXPECT(strstr(sb_str(&sb), ";TRACE_FILENAME_STR_CUT=1;") &&
	       sb.len == strlen("TRACE_FILENAME_STR=;TRACE_FILENAME_STR_CUT=1;") + TRACERD_USTR_LEN - 1,
	       "cut: %s", sb_str(&sb));
	sb_reset(&sb);
	render_user_strings(e, r.data, e->fixed_size, journal_cb, &sb);
	EXPECT(sb.len == 0, "no strings carried: %s", sb_str(&sb));
	sb_free(&sb);
}

/* 1 if the record passes, 0 if not, -1 if expr does not compile. */
static int eval(const struct tp_event *e, const struct rec *r, const char *expr, bool strings)
{
	static const struct conf_pos pos = { .file = "t.conf", .line = 1, .col = 8 };
	static const struct trace_rec_hdr task;
	struct event_desc d = { 0 };
	struct diag dg = { 0 };

	if (strings)
		event_desc_user_strings(e, &d);
	if (filter_compile(expr, e, &pos, &d, &dg) < 0) {
		printf("#   '%s': %s\n", expr, dg.msg);
		return -1;
	}
	EXPECT(!d.filter_span || !strstr(expr, "\""), "'%s': filter_span %u", expr, d.filter_span);
	return store_filter_run(&d, &task, r->data, r->len);
}

static void filters(void)
{
	const struct tp_event *e = event("sys_enter_openat");
	static struct rec r;

	if (!e)
		return;
	build(&r, e, (const char *[]){ "/etc/passwd" }, (const int[]){ 0 }, 1);
	EXPECT(eval(e, &r, "filename ~ \"/etc/*\"", true) == 1, "glob");
	EXPECT(eval(e, &r, "filename ~ \"/usr/*\"", true) == 0, "other glob");
	EXPECT(eval(e, &r, "filename == \"/etc/passwd\"", true) == 1, "==");
	EXPECT(eval(e, &r, "filename == \"/etc/passw\"", true) == 0, "== a prefix");
	EXPECT(eval(e, &r, "filename != \"/etc/shadow\"", true) == 1, "!=");
	EXPECT(eval(e, &r, "filename in (\"/a\", \"/etc/passwd\")", true) == 1, "in");
	EXPECT(eval(e, &r, "filename == 0x7ffd5a3c0000", true) == 1, "the pointer, as a number");
	EXPECT(eval(e, &r, "filename ~ \"/etc/*\"", false) == -1, "SyscallStrings=no: refused");
	/* Records without strings (SyscallStrings=no, in a store) match no string. */
	r.len = e->fixed_size;
	EXPECT(eval(e, &r, "filename ~ \"*\"", true) == 0, "no strings carried: ~ \"*\"");
	build(&r, e, (const char *[]){ NULL }, (const int[]){ 14 }, 1);
	EXPECT(eval(e, &r, "filename ~ \"*\"", true) == 0, "unreadable: ~ \"*\"");
	EXPECT(eval(e, &r, "filename == \"\"", true) == 0, "unreadable: == \"\"");
	EXPECT(eval(e, &r, "filename != \"/etc/passwd\"", true) == 1, "unreadable: !=");
	EXPECT(eval(e, &r, "!(filename ~ \"/etc/*\")", true) == 1, "unreadable: !(~)");
}

int main(void)
{
	RUN(which_arguments);
	RUN(renders_after_the_pointer);
	RUN(damaged_words);
	RUN(journal_fields);
	RUN(filters);
	return TEST_EXIT();
}
