// SPDX-License-Identifier: GPL-2.0
/* No kernel address leaves tracerd unless RawPointers=yes: pointer fields
 * (a pointer type, or printed with %p) and %p conversions are hashed as the
 * kernel hashes them, in the line (MESSAGE=, stdout) and in every field
 * value (TRACE_<FIELD>=, TRACE_<FIELD>_RAW=), on the compiled path, the
 * libtraceevent path and the field=value fallback; a %pS that kallsyms
 * cannot symbolize prints the hash. /proc/kallsyms is replaced by a file
 * without addresses (TRACERD_KALLSYMS), as the service's dynamic user sees
 * it without CAP_SYSLOG. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "render/render_priv.h"
#include "fixtures.h"
#include "test.h"
#include "util.h"

#define HEAP 0xffff88813dfc3f40ULL	/* a slab object */
#define TEXT 0xffffffff814ed26aULL	/* a call site */
#define USER 0x00007ffd1234abc8ULL	/* a user-space buffer */

static const struct render_opts raw = { .raw_pointers = true }, hashed = { .raw_pointers = false };

#define EXPECT_HAS(s, sub) EXPECT((s) && strstr((s), (sub)), "'%s' lacks '%s'", (s), (sub))
#define EXPECT_LACKS(s, sub) EXPECT((s) && !strstr((s), (sub)), "'%s' has '%s'", (s), (sub))

static struct tp_event *prepared(const char *text, const char *system)
{
	struct tp_event *e = NULL;

	if (tp_format_parse(text, &e, NULL) < 0) {
		EXPECT(0, "parse %s", system);
		return NULL;
	}
	e->system = strdup(system);
	EXPECT(render_prepare(e) == 0, "render_prepare");
	return e;
}

static struct tp_event *fixture(const char *name)
{
	for (size_t i = 0; i < n_fixtures; i++)
		if (!strcmp(fixtures[i].name, name))
			return prepared(fixtures[i].text, "fixture");
	EXPECT(0, "no fixture %s", name);
	return NULL;
}

static void drop(struct tp_event *e)
{
	if (!e)
		return;
	render_release(e);
	tp_event_free(e);
}

static void take(void *ctx, const struct tp_field *f, const char *value, const char *raw_value)
{
	struct strbuf *sb = ctx;

	sb_printf(sb, "\n%s=%s", f->name, value);
	if (raw_value)
		sb_printf(sb, "\n%s_RAW=%s", f->name, raw_value);
}

/* What the sinks get of one record: the line, then "field=value" lines as
 * the journal's TRACE_<FIELD>= and TRACE_<FIELD>_RAW= take them. */
static char *entry(const struct tp_event *e, const struct render_opts *o, uint8_t *rec, size_t len)
{
	struct strbuf sb = { 0 };
	uint16_t id = e->id;
	char *s;

	memcpy(rec, &id, 2);	/* libtraceevent finds the event by it */
	sb_puts(&sb, "MESSAGE=");
	render_event(e, o, rec, len, &sb);
	render_fields(e, o, rec, len, take, &sb);
	s = strdup(sb_str(&sb));
	sb_free(&sb);
	return s;
}

static void set(uint8_t *rec, const struct tp_event *e, const char *field, uint64_t v)
{
	const struct tp_field *f = tp_event_field(e, field);

	EXPECT(f, "no field %s", field);
	if (f)
		memcpy(rec + f->offset, &v, f->size < 8 ? f->size : 8);
}

/* v in any form the daemon could print it: hex, either case, or decimal. */
static void expect_no_address(const char *s, uint64_t v)
{
	char hex[32], HEX[32], dec[32];

	snprintf(hex, sizeof(hex), "%llx", (unsigned long long)v);
	snprintf(HEX, sizeof(HEX), "%llX", (unsigned long long)v);
	snprintf(dec, sizeof(dec), "%llu", (unsigned long long)v);
	EXPECT_LACKS(s, hex);
	EXPECT_LACKS(s, HEX);
	EXPECT_LACKS(s, dec);
}

/* "%p" of v, hashed: 16 hex digits. */
static const char *hash16(uint64_t v)
{
	static char buf[4][17];
	static unsigned i;
	struct strbuf sb = { 0 };
	char *b = buf[i++ % 4];

	render_plain_pointer(v, false, &sb);
	snprintf(b, 17, "%s", sb_str(&sb));
	sb_free(&sb);
	return b;
}

/* A field's value when it is hashed: "0x" and the hash without padding. */
static const char *hash0x(uint64_t v)
{
	static char buf[4][24];
	static unsigned i;
	char *b = buf[i++ % 4];

	snprintf(b, 24, "0x%llx", strtoull(hash16(v), NULL, 16));
	return b;
}

static void expect_hasf(const char *s, const char *fmt, const char *arg)
{
	char want[256];

	snprintf(want, sizeof(want), fmt, arg);
	EXPECT_HAS(s, want);
}

static void kfree_hashed(void)
{
	struct tp_event *e = fixture("kmem:kfree");
	uint8_t rec[64] = { 0 };
	char *s;

	if (!e)
		return;
	set(rec, e, "call_site", TEXT);
	set(rec, e, "ptr", HEAP);
	s = entry(e, &hashed, rec, e->fixed_size);
	expect_no_address(s, TEXT);
	expect_no_address(s, HEAP);
	/* Fields present, so that the test cannot pass on an empty entry. */
	expect_hasf(s, "MESSAGE=call_site=%s ", hash16(TEXT));
	expect_hasf(s, " ptr=%s\n", hash16(HEAP));
	expect_hasf(s, "\ncall_site=%s\n", hash0x(TEXT));
	expect_hasf(s, "\nptr=%s", hash0x(HEAP));
	free(s);
	drop(e);
}

static void kfree_raw(void)
{
	struct tp_event *e = fixture("kmem:kfree");
	uint8_t rec[64] = { 0 };
	char *s;

	if (!e)
		return;
	set(rec, e, "call_site", TEXT);
	set(rec, e, "ptr", HEAP);
	s = entry(e, &raw, rec, e->fixed_size);
	/* What the kernel prints of a %pS it cannot symbolize: the address. */
	EXPECT_HAS(s, "MESSAGE=call_site=0xffffffff814ed26a ptr=ffff88813dfc3f40\n");
	EXPECT_HAS(s, "\ncall_site=0xffffffff814ed26a\n");
	EXPECT_HAS(s, "\nptr=0xffff88813dfc3f40");
	free(s);
	drop(e);
}

/* Fields the line does not show (skaddr) and user pointers printed as
 * numbers (a syscall's buffer, "%lx") are pointers too. */
static void pointer_fields_outside_p(void)
{
	struct tp_event *e = fixture("sock:inet_sock_set_state");
	struct tp_event *w = fixture("syscalls:sys_enter_write");
	uint8_t rec[128] = { 0 };
	char *s;

	if (e) {
		set(rec, e, "skaddr", HEAP);
		s = entry(e, &hashed, rec, e->fixed_size);
		expect_no_address(s, HEAP);
		expect_hasf(s, "\nskaddr=%s", hash0x(HEAP));
		free(s);
	}
	memset(rec, 0, sizeof(rec));
	if (w) {
		set(rec, w, "buf", USER);
		set(rec, w, "count", 4096);
		s = entry(w, &hashed, rec, w->fixed_size);
		expect_no_address(s, USER);
		expect_hasf(s, "\nbuf=%s", hash0x(USER));
		EXPECT_HAS(s, "count: 0x00001000");	/* numbers stay numbers */
		free(s);
	}
	drop(e);
	drop(w);
}

#define COMMON "format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" \
	"\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:struct foo * obj;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long len;\toffset:24;\tsize:8;\tsigned:0;\n\n"

/* The compiler refuses the cast to a struct: libtraceevent or field=value. */
static const char refused_format[] = "name: refused\nID: 9990\n" COMMON
	"print fmt: \"site=%pS obj=%lx len=%lu\", (void *)REC->call_site, "
	"(unsigned long)(struct foo *)REC->obj, REC->len\n";
/* libtraceevent may not parse it (a control byte): field=value. */
static const char unparsed_format[] = "name: unparsed\nID: 9991\n" COMMON
	"print fmt: \"site=%pS\x01 len=%lu\", REC->call_site, REC->len\n";

static void fallbacks(const char *text, const char *name)
{
	/* one compiled event, rendered with either policy */
	struct tp_event *h = prepared(text, "test");
	uint8_t rec[64] = { 0 };
	char *s;

	if (!h)
		goto out;
	set(rec, h, "call_site", TEXT);
	set(rec, h, "obj", HEAP);
	set(rec, h, "len", 5);
	s = entry(h, &hashed, rec, h->fixed_size);
	expect_no_address(s, TEXT);
	expect_no_address(s, HEAP);
	expect_hasf(s, "\ncall_site=%s", hash0x(TEXT));
	expect_hasf(s, "\nobj=%s", hash0x(HEAP));
	EXPECT_HAS(s, "\nlen=5");
	free(s);
	s = entry(h, &raw, rec, h->fixed_size);
	EXPECT_HAS(s, "\nobj=0xffff88813dfc3f40");
	EXPECT_HAS(s, "\ncall_site=0xffffffff814ed26a");
	free(s);
out:
	if (test_failed_now)
		printf("#   in %s\n", name);
	drop(h);
}

static void fallback_paths(void)
{
	fallbacks(refused_format, "refused");
	fallbacks(unparsed_format, "unparsed");
}

/* A symbol table over a pointer: its number (_RAW) is hashed as well. */
static const char symbolic_format[] = "name: handler\nID: 9992\n" COMMON
	"print fmt: \"handler=%s\", __print_symbolic((unsigned long)REC->obj, "
	"{ 0, \"SIG_DFL\" }, { 1, \"SIG_IGN\" })\n";

static void symbolic_pointer(void)
{
	struct tp_event *e = prepared(symbolic_format, "test");
	uint8_t rec[64] = { 0 };
	char *s;

	if (!e)
		return;
	set(rec, e, "obj", HEAP);
	s = entry(e, &hashed, rec, e->fixed_size);
	expect_no_address(s, HEAP);
	EXPECT_HAS(s, "\nobj=");
	free(s);
	set(rec, e, "obj", 1);
	s = entry(e, &hashed, rec, e->fixed_size);
	EXPECT_HAS(s, "MESSAGE=handler=SIG_IGN\n");
	EXPECT_HAS(s, "\nobj=SIG_IGN\nobj_RAW=");
	free(s);
	drop(e);
}

/* With addresses in kallsyms (CAP_SYSLOG), %pS prints the symbol; an
 * address outside every symbol still prints the hash. In a child: kallsyms
 * is read once per process. */
static void symbolized_with_kallsyms(void)
{
	static const char syms[] = "ffffffff814ed258 T __bpf_prog_put_rcu\n"
				   "ffffffff814ed298 T bpf_prog_put\n"
				   "ffffffff814ed2c0 t next_one\n";
	char path[] = "/tmp/tracerd-test-kallsyms-XXXXXX";
	int fd = mkstemp(path), status = 0;
	pid_t pid;

	EXPECT(fd >= 0 && write(fd, syms, sizeof(syms) - 1) == (ssize_t)sizeof(syms) - 1, "tmp file");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct tp_event *e;
		uint8_t rec[64] = { 0 };
		char *s;

		setenv("TRACERD_KALLSYMS", path, 1);
		if (!(e = fixture("kmem:kfree")))
			_exit(1);
		set(rec, e, "call_site", TEXT);
		s = entry(e, &hashed, rec, e->fixed_size);
		EXPECT_HAS(s, "MESSAGE=call_site=__bpf_prog_put_rcu+0x12/0x40 ");
		set(rec, e, "call_site", HEAP);
		free(s);
		s = entry(e, &hashed, rec, e->fixed_size);
		expect_no_address(s, HEAP);
		expect_hasf(s, "MESSAGE=call_site=%s ", hash16(HEAP));
		free(s);
		drop(e);
		fflush(stdout);
		_exit(test_failed_now);
	}
	EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status), "child status %d", status);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

int main(void)
{
	/* What the unit's dynamic user reads: every address 0. Unlinked at
	 * once, so that nothing is left behind; read through /proc/self/fd. */
	static const char zeros[] = "0000000000000000 T __bpf_prog_put_rcu\n"
				    "0000000000000000 T bpf_prog_put\n";
	char path[] = "/tmp/tracerd-test-kallsyms-XXXXXX", fdpath[64];
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, zeros, sizeof(zeros) - 1) != (ssize_t)sizeof(zeros) - 1)
		return 1;
	unlink(path);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	setenv("TRACERD_KALLSYMS", fdpath, 1);
	fixtures_load();
	RUN(symbolized_with_kallsyms);	/* first: before this process reads kallsyms */
	RUN(kfree_hashed);
	RUN(kfree_raw);
	RUN(pointer_fields_outside_p);
	RUN(fallback_paths);
	RUN(symbolic_pointer);
	return TEST_EXIT();
}
