// SPDX-License-Identifier: GPL-2.0
/* The user stack symbolizer (render/ustack*.c) on real processes: the
 * frames tests/tools/ustack_prog found by walking its own frame pointers
 * name b, a, main and its file while it lives, and the exited form after;
 * a mapping made after the first read is found by reading again; the
 * process cache stays bounded. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "render/render_stack.h"
#include "render/ustack.h"
#include "render/ustack_maps.h"
#include "render/ustack_text.h"
#include "test.h"
#include "util.h"

struct prog {
	pid_t pid;
	int in;				/* its stdin: closing it ends it */
	unsigned long ip[3], fn[3];	/* b, a, main */
	char path[PATH_MAX];
};

static int prog_start(struct prog *p)
{
	const char *build = getenv("BUILD") ?: "build";
	char rel[PATH_MAX];
	int in[2], out[2];
	FILE *f;
	int n;

	snprintf(rel, sizeof(rel), "%s/tests/tools/ustack_prog", build);
	if (!realpath(rel, p->path) || pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	p->pid = fork();
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(p->path, p->path, "3", NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	f = fdopen(out[0], "r");
	n = f ? fscanf(f, "%*d %lx %lx %lx %lx %lx %lx", &p->ip[0], &p->ip[1], &p->ip[2], &p->fn[0],
		       &p->fn[1], &p->fn[2]) : 0;
	if (f)
		fclose(f);
	return n == 6 ? 0 : -EIO;
}

static void prog_stop(struct prog *p)
{
	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	if (p->pid > 0)
		waitpid(p->pid, NULL, 0);
}

static char *frame(struct ustack_syms *s, pid_t pid, unsigned long ip)
{
	struct strbuf sb = { 0 };
	char *r;

	ustack_format_frame(s, pid, ip, &sb);
	r = strdup(sb_str(&sb));
	sb_free(&sb);
	return r;
}

/* "/abs/path/ustack_prog[+0x...] b+0xOFF": the file's offset is
 * checked against the kernel's in tests/integration/ustack.sh. */
static void expect_named(struct ustack_syms *s, const struct prog *p, int i, const char *fn)
{
	_cleanup_free_ char *got = frame(s, p->pid, p->ip[i]);
	char want_file[PATH_MAX + 16], want_sym[64];

	snprintf(want_file, sizeof(want_file), "%s[+0x", p->path);
	snprintf(want_sym, sizeof(want_sym), "] %s+0x%lx", fn, p->ip[i] - p->fn[i]);
	EXPECT(got && !strncmp(got, want_file, strlen(want_file)), "frame %d: got '%s', want '%s...'",
	       i, got, want_file);
	EXPECT(got && strstr(got, want_sym) && !strcmp(strstr(got, want_sym), want_sym),
	       "frame %d: got '%s', want '...%s'", i, got, want_sym);
}

static void expect_exited(struct ustack_syms *s, pid_t pid, unsigned long ip)
{
	_cleanup_free_ char *got = frame(s, pid, ip);
	char want[64];

	snprintf(want, sizeof(want), "<%016lx> (process exited)", ip);
	EXPECT_STREQ(got, want);
}

static void test_live_then_exited(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *live = NULL, *later = NULL;
	struct prog p = { .in = -1 };
	struct ustack_stats st;

	EXPECT(prog_start(&p) == 0, "cannot run %s", p.path);
	EXPECT(ustack_syms_new(&live) == 0 && ustack_syms_new(&later) == 0, "ENOMEM");
	if (test_failed_now) {
		prog_stop(&p);
		return;
	}
	expect_named(live, &p, 0, "b");
	expect_named(live, &p, 1, "a");
	expect_named(live, &p, 2, "main");
	prog_stop(&p);
	/* The copy read while it lived still names its frames. */
	expect_named(live, &p, 0, "b");
	/* A process first seen after it exited cannot be read. */
	for (int i = 0; i < 3; i++)
		expect_exited(later, p.pid, p.ip[i]);
	ustack_syms_stats(live, &st);
	EXPECT(st.frames == 4 && st.named == 4 && st.maps_reads == 1 && st.files_loaded == 1,
	       "frames %llu named %llu maps_reads %llu files_loaded %llu",
	       (unsigned long long)st.frames, (unsigned long long)st.named,
	       (unsigned long long)st.maps_reads, (unsigned long long)st.files_loaded);
	ustack_syms_stats(later, &st);
	EXPECT(st.frames == 3 && st.exited == 3 && st.named == 0, "exited %llu",
	       (unsigned long long)st.exited);
}

/* A process outside tracerd's PID namespace (tgid TRACERD_NS_TGID_NONE):
 * marked as such while it lives, counted apart, and /proc not read. */
static void test_other_pidns(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *s = NULL;
	struct prog p = { .in = -1 };
	struct ustack_stats st;

	EXPECT(prog_start(&p) == 0, "cannot run %s", p.path);
	EXPECT(ustack_syms_new(&s) == 0, "ENOMEM");
	for (int i = 0; !test_failed_now && i < 3; i++) {
		_cleanup_free_ char *got = frame(s, TRACERD_NS_TGID_NONE, p.ip[i]);
		char want[96];

		snprintf(want, sizeof(want), "<%016lx> (process not in tracerd's PID namespace)",
			 p.ip[i]);
		EXPECT_STREQ(got, want);
	}
	prog_stop(&p);
	if (!s)
		return;
	ustack_syms_stats(s, &st);
	EXPECT(st.frames == 3 && st.other_pidns == 3 && st.exited == 0 && st.maps_reads == 0,
	       "frames %llu other_pidns %llu exited %llu maps_reads %llu",
	       (unsigned long long)st.frames, (unsigned long long)st.other_pidns,
	       (unsigned long long)st.exited, (unsigned long long)st.maps_reads);
}

/* Code mapped after the maps were read: the miss reads them again. */
static void test_new_mapping(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *s = NULL;
	_cleanup_free_ char *before = NULL, *after = NULL;
	_cleanup_close_ int fd = -1;
	char rel[PATH_MAX], path[PATH_MAX], want[PATH_MAX + 32];
	struct ustack_stats st;
	void *m;

	snprintf(rel, sizeof(rel), "%s/tests/tools/ustack_prog", getenv("BUILD") ?: "build");
	EXPECT(realpath(rel, path) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0, "%s", path);
	EXPECT(ustack_syms_new(&s) == 0, "ENOMEM");
	if (test_failed_now)
		return;
	/* libc's getpid is weak, __getpid global: perf's choice, and ours. */
	before = frame(s, getpid(), (unsigned long)&getpid);
	usleep(2000);	/* past the re-read throttle */
	m = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	EXPECT(m != MAP_FAILED, "mmap: %m");
	if (m == MAP_FAILED)
		return;
	after = frame(s, getpid(), (unsigned long)m + 0x10);
	snprintf(want, sizeof(want), "%s[+0x10]", path);
	EXPECT(after && !strncmp(after, want, strlen(want)), "got '%s', want '%s...'", after, want);
	EXPECT(before && strstr(before, "libc.so.6[+0x") && strstr(before, "] __getpid+0x0"),
	       "before: '%s'", before);
	ustack_syms_stats(s, &st);
	EXPECT(st.maps_reads == 2, "maps read %llu times", (unsigned long long)st.maps_reads);
	munmap(m, 8192);
}

/* More processes than the cache holds: the oldest are evicted, counted. */
static void test_bounded(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *s = NULL;
	struct ustack_stats st;
	struct strbuf sb = { 0 };

	EXPECT(ustack_syms_new(&s) == 0, "ENOMEM");
	if (!s)
		return;
	/* Beyond any pid_max (2^22): no such processes. */
	for (int i = 0; i < USTACK_PROCS + 44; i++)
		ustack_format_frame(s, (1 << 22) + 1 + i, 0x1000, &sb);
	ustack_syms_stats(s, &st);
	EXPECT(st.procs_evicted == 44 && st.exited == USTACK_PROCS + 44, "evicted %llu exited %llu",
	       (unsigned long long)st.procs_evicted, (unsigned long long)st.exited);
	sb_free(&sb);
}

/* More files than the symbol table cache holds, each mapped by this
 * process: every one is read once, the oldest evicted, counted. */
static void test_files_bounded(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *s = NULL;
	char dir[] = "/tmp/test_ustack.XXXXXX", src[PATH_MAX], path[PATH_MAX + 32];
	struct ustack_stats st;
	struct strbuf sb = { 0 };
	void *maps[USTACK_FILES + 1] = { 0 };
	int n = USTACK_FILES + 1, named = 0;

	snprintf(src, sizeof(src), "%s/tests/tools/ustack_prog", getenv("BUILD") ?: "build");
	EXPECT(mkdtemp(dir) && ustack_syms_new(&s) == 0, "mkdtemp: %m");
	if (test_failed_now)
		return;
	for (int i = 0; i < n; i++) {
		char cmd[3 * PATH_MAX];
		int fd;

		snprintf(path, sizeof(path), "%s/f%03d", dir, i);
		snprintf(cmd, sizeof(cmd), "cp %s %s", src, path);
		fd = system(cmd) == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		maps[i] = fd < 0 ? MAP_FAILED : mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < n; i++) {
		if (maps[i] == MAP_FAILED)
			continue;
		sb_reset(&sb);
		ustack_format_frame(s, getpid(), (uintptr_t)maps[i] + 0x10, &sb);
		named += strstr(sb_str(&sb), "/f") != NULL;
	}
	ustack_syms_stats(s, &st);
	EXPECT(named == n && st.files_loaded == (uint64_t)n && st.files_evicted == 1,
	       "%d of %d files named, %llu loaded, %llu evicted", named, n,
	       (unsigned long long)st.files_loaded, (unsigned long long)st.files_evicted);
	for (int i = 0; i < n; i++) {
		if (maps[i] != MAP_FAILED)
			munmap(maps[i], 8192);
		snprintf(path, sizeof(path), "%s/f%03d", dir, i);
		unlink(path);
	}
	rmdir(dir);
	sb_free(&sb);
}

/* A record's bytes as the BPF side writes them with StackTrace=user: 16
 * bytes of its own, the three frames, the tail. */
static size_t make_record(const struct prog *p, uint8_t *rec)
{
	struct trace_stack_tail t = { .n_user = 3, .user = TRACERD_STACK_WHOLE };
	uint64_t ip;

	memset(rec, 'r', 16);
	for (int i = 0; i < 3; i++) {
		ip = p->ip[i];
		memcpy(rec + 16 + 8 * i, &ip, 8);
	}
	memcpy(rec + 16 + 24, &t, sizeof(t));
	return 16 + 24 + sizeof(t);
}

static char *block(const uint8_t *wire, size_t len)
{
	struct render_opts o = { 0 };
	struct rec_stacks st;
	struct strbuf sb = { 0 };
	char *r;

	EXPECT(rec_stacks_split(TRACERD_REC_STACKS | TRACERD_REC_USTACK_TEXT, wire, len, &st) == 16,
	       "the record proper is 16 bytes");
	render_stacks_text(&st, &o, "p: ", 3, &sb);
	r = strdup(sb_str(&sb));
	sb_free(&sb);
	return r;
}

/* The consumer's text kept with the record, as the store keeps it and
 * --read prints it; frames past the record's room print as addresses. */
static void test_record_text(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *s = NULL;
	_cleanup_free_ char *whole = NULL, *cut = NULL;
	struct prog p = { .in = -1 };
	struct strbuf wire = { 0 };
	uint8_t rec[64];
	char want[128];
	size_t len, line0;
	int done;

	EXPECT(prog_start(&p) == 0 && ustack_syms_new(&s) == 0, "cannot run %s", p.path);
	if (test_failed_now) {
		prog_stop(&p);
		return;
	}
	len = make_record(&p, rec);
	done = ustack_text_attach(s, p.pid, rec, len, rec + 16, 3, TRACERD_MAX_RECORD, &wire);
	prog_stop(&p);	/* what follows reads the record alone */
	EXPECT(done == 3, "%d frames resolved", done);
	whole = block((const uint8_t *)wire.buf, wire.len);
	EXPECT(whole && strstr(whole, "] b+0x") && strstr(whole, "] a+0x") &&
	       strstr(whole, "] main+0x") && !strstr(whole, "not resolved"), "got '%s'", whole);
	/* Room for the first frame's line only. */
	line0 = strcspn(wire.buf + len, "\n");
	done = ustack_text_attach(s, p.pid, rec, len, rec + 16, 3, len + line0 + 4, &wire);
	EXPECT(done == 1, "%d frames resolved", done);
	cut = block((const uint8_t *)wire.buf, wire.len);
	snprintf(want, sizeof(want), " => <%016lx> (not resolved)\n => <%016lx> (not resolved)\n",
		 p.ip[1], p.ip[2]);
	EXPECT(cut && strstr(cut, "] b+0x") && strstr(cut, want), "got '%s', want '...%s'", cut,
	       want);
	EXPECT(ustack_text_attach(s, p.pid, rec, len, rec + 16, 3, len + 3, &wire) == -E2BIG,
	       "a record without room for the length");
	sb_free(&wire);
}

static void test_maps_line(void)
{
	struct ustack_map m;

	EXPECT(ustack_map_parse("7f00-7f10 r-xp 00002000 fe:01 1234                       "
				"/opt/my app/lib x.so (deleted)\n", &m) == 0, "parse");
	EXPECT(m.start == 0x7f00 && m.end == 0x7f10 && m.pgoff == 0x2000 && m.ino == 1234 &&
	       major(m.dev) == 0xfe && minor(m.dev) == 1, "fields");
	EXPECT_STREQ(m.path, "/opt/my app/lib x.so (deleted)");
	free(m.path);
	EXPECT(ustack_map_parse("7ffd-7ffe r-xp 00000000 00:00 0                          [vdso]\n",
				&m) == 0 && !m.path, "[vdso] has no file");
	EXPECT(ustack_map_parse("7ffd-7ffe rw-p 00000000 00:00 0 \n", &m) == 0 && !m.path,
	       "anonymous");
	EXPECT(ustack_map_parse("garbage\n", &m) == -EINVAL, "garbage");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_live_then_exited);
	RUN(test_other_pidns);
	RUN(test_new_mapping);
	RUN(test_bounded);
	RUN(test_files_bounded);
	RUN(test_record_text);
	RUN(test_maps_line);
	return TEST_EXIT();
}
