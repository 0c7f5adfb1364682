// SPDX-License-Identifier: GPL-2.0
/* The emitted filters (daemon/filter/filter_emit.c) against the interpreter
 * (bpf/filter.bpf.h, run in userspace by store_filter_match()) as the
 * reference: generated filters over the fields of many classes of the
 * captured formats, each compiled, emitted, loaded by the kernel (as the
 * tracepoint program tracerd attaches, and as a BPF_PROG_TYPE_SYSCALL
 * program that returns its verdict) and run by BPF_PROG_TEST_RUN on
 * generated records: every verdict must be the interpreter's. On real
 * tracepoints, against the kernel's own filter: filter_diff.sh. And
 * histograms keyed by __data_loc strings, emitted for every event that has
 * one and loaded as the tracepoint program (counted on real tracepoints:
 * aggregate.sh). */
#include <bpf/bpf.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "test.h"
#include "fixtures.h"
#include "aggregate/hist.h"
#include "filter/filter.h"
#include "filter/filter_emit.h"
#include "kernel-events/events.h"
#include "kernel-events/field_source.h"
#include "store/store_filter.h"

#define RECS 12		/* records per event */
#define REC_SIZE 2048	/* fixed part and strings */
#define FIXED_MAX 824	/* the events picked: their fixed part, at most */
#define WANT_FILTERS 10000
#define WANT_CLASSES 20

/* The last three are as long as or longer than a glob's window on its
 * string (STR_WIN in filter_emit_priv.h), filled in by long_words(). */
static const char *words[] = {
	"", "a", "sh", "bash", "ls", "lo", "eth0", "kworker/0:1", "systemd-journal",
	"/bin/true", "/usr/bin/env", "sleep", "abcdefghijklmnopqrstuvwxyz0123456789",
	"R", "WS", "xfs", "sd", "s", NULL, NULL, NULL,
};
#define N_WORDS (sizeof(words) / sizeof(words[0]))

/* A word across the first window's end (256), one whose end and a match
 * lie in the third window, and one that ends just past the first: "*abc"
 * and "*abc*" read them in pieces. */
static void long_words(void)
{
	static char a[320], b[700], c[257];

	memset(c, 'y', sizeof(c) - 1);
	memcpy(c + sizeof(c) - 7, "/edge1", 6);
	words[N_WORDS - 3] = c;

	memset(a, 'x', sizeof(a) - 1);
	memcpy(a + 250, "/mid/edge/", 10);
	memcpy(a + sizeof(a) - 5, "tail", 4);
	for (size_t i = 0; i < sizeof(b) - 1; i++)
		b[i] = "abcdefghij/"[i % 11];
	memcpy(b + 540, "needle", 6);
	memcpy(b + sizeof(b) - 4, "END", 3);
	words[N_WORDS - 2] = a;
	words[N_WORDS - 1] = b;
}

/* An event of no kernel's: a __rel_loc string (none on this kernel), and
 * char arrays smaller and larger than a glob's window. */
static const char synth_format[] =
	"name: glob_test\nID: 9999\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__rel_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] path;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:char tiny[3];\toffset:16;\tsize:3;\tsigned:0;\n"
	"\tfield:char big[300];\toffset:19;\tsize:300;\tsigned:0;\n"
	"\tfield:int n;\toffset:320;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"name=%s path=%s\", __get_rel_str(name), __get_str(path)\n";

/* The glob kinds generated and emitted, per string source: bit
 * 2 * source + (0 "*abc", 1 "*abc*"). */
enum { G_STR, G_COMM, G_DATA_LOC, G_REL_LOC, G_SOURCES };
static const char *const g_source[G_SOURCES] = { "char array", "comm", "__data_loc",
						   "__rel_loc" };
static unsigned gen_globs;

struct gen_event {
	struct tp_event *e;
	struct field_source f[64];
	size_t n_f;
	uint8_t rec[RECS][REC_SIZE] __attribute__((aligned(8)));
	uint32_t len[RECS];
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Values that catch sign and size mistakes, and some of anything. */
static uint64_t edge_value(const struct field_source *s)
{
	unsigned bits = s->size * 8;
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;

	switch (rnd_below(8)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return mask;			/* -1 */
	case 3: return mask >> 1;		/* max */
	case 4: return (mask >> 1) + 1;		/* min */
	case 5: return rnd_below(300);
	default: return rnd() & mask;
	}
}

static bool usable(const struct tp_event *e, const char *name, struct field_source *s)
{
	return field_source_resolve(e, name, s) == 0 && s->src != SRC_USER_STR;
}

static void fill_record(struct gen_event *g, int k, uint32_t tid)
{
	uint8_t *r = g->rec[k];
	uint32_t end = g->e->fixed_size;

	memset(r, 0, REC_SIZE);
	for (size_t i = 0; i < REC_SIZE; i++)
		r[i] = rnd();
	/* The common fields as the class program rebuilds them. */
	memcpy(r, &(uint16_t){ g->e->id }, 2);
	memset(r + 2, 0, 2);
	memcpy(r + 4, &tid, 4);
	for (size_t i = 0; i < g->e->n_fields; i++) {
		const struct tp_field *f = &g->e->fields[i];
		const char *w = words[rnd_below(N_WORDS)];
		size_t n = strlen(w);

		if (f->is_common)
			continue;
		if (f->kind == TP_FIELD_DATA_LOC || f->kind == TP_FIELD_REL_LOC) {
			uint32_t len = f->is_string && rnd_below(8) ? n + 1 : rnd_below(6);

			if (f->is_string && len == n + 1 && !rnd_below(8))
				len = rnd_below(n + 1);	/* cut: no NUL */
			uint32_t at = end, off = f->kind == TP_FIELD_REL_LOC ? at - f->offset - 4 : at;

			if (end + len > REC_SIZE)
				len = 0;
			if (f->is_string && len && len <= n + 1)
				memcpy(r + at, w, len);
			end += len;
			memcpy(r + f->offset, &(uint32_t){ len << 16 | off }, 4);
		} else if (f->is_string) {
			memset(r + f->offset, 0, f->size);
			memcpy(r + f->offset, w, n < f->size ? n : f->size);
		} else if (f->size <= 8) {
			struct field_source s;
			uint64_t v;

			if (!usable(g->e, f->name, &s))
				continue;
			v = edge_value(&s);
			memcpy(r + f->offset, &v, f->size);
		}
	}
	g->len[k] = end;
}

static void gen_event_init(struct gen_event *g, struct tp_event *e, uint32_t tid)
{
	static const char *const common[] = { "common_pid", "cpu", "comm", "common_type" };

	g->e = e;
	g->n_f = 0;
	for (size_t i = 0; i < e->n_fields && g->n_f < 60; i++)
		if (!e->fields[i].is_common && usable(e, e->fields[i].name, &g->f[g->n_f]))
			g->n_f++;
	for (size_t i = 0; i < 4; i++)
		if (usable(e, common[i], &g->f[g->n_f]))
			g->n_f++;
	for (int k = 0; k < RECS; k++)
		fill_record(g, k, tid);
}

/* A value of a record for the field, so that compares hit as well as miss. */
static uint64_t record_value(const struct gen_event *g, const struct field_source *s)
{
	uint64_t v = 0;

	if (s->src != SRC_RECORD)
		return rnd_below(4);
	memcpy(&v, g->rec[rnd_below(RECS)] + s->off, s->size);
	if (s->is_signed && s->size < 8 && (v >> (s->size * 8 - 1)) & 1)
		v |= ~0ull << (s->size * 8);
	return v;
}

static int gen_number(char *buf, size_t size, const struct gen_event *g, const struct field_source *s)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "&", "&=" };
	uint64_t v = rnd_below(2) ? record_value(g, s) : edge_value(s);
	char val[64];

	if (s->is_signed)
		snprintf(val, sizeof(val), "%lld", (long long)v);
	else
		snprintf(val, sizeof(val), rnd_below(3) ? "%llu" : "0x%llx", (unsigned long long)v);
	if (!rnd_below(8))
		return snprintf(buf, size, "%s in (%s, %llu, 1)", s->name, val,
				(unsigned long long)rnd_below(100));
	return snprintf(buf, size, "%s %s %s", s->name, ops[rnd_below(8)], val);
}

static void note_glob(const struct field_source *s, int middle)
{
	int k = s->src == SRC_COMM ? G_COMM : s->src == SRC_DATA_LOC ? G_DATA_LOC :
		s->src == SRC_REL_LOC ? G_REL_LOC : G_STR;

	gen_globs |= 1u << (2 * k + middle);
}

/* A glob's literal: a whole word (its first 40 bytes), or a piece of it at
 * its end or inside it, so that "*abc" and "*abc*" match as well as miss. */
static const char *glob_piece(const char *w, bool end, int *n)
{
	size_t len = strlen(w), at, k = rnd_below(len < 20 ? len + 1 : 20);

	if (!rnd_below(3)) {
		*n = len < 40 ? len : 40;
		return w;
	}
	at = end ? len - k : rnd_below(len - k + 1);
	*n = k;
	return w + at;
}

static int gen_string(char *buf, size_t size, const struct field_source *s)
{
	const char *w = words[rnd_below(N_WORDS)], *p;
	char pat[80];
	int n;

	switch (rnd_below(8)) {
	case 0: snprintf(pat, sizeof(pat), "%.*s*", (int)rnd_below(strlen(w) + 1), w); break;
	case 1:
		p = glob_piece(w, true, &n);
		snprintf(pat, sizeof(pat), "*%.*s", n, p);
		note_glob(s, 0);
		break;
	case 2:
		p = glob_piece(w, false, &n);
		snprintf(pat, sizeof(pat), "*%.*s*", n, p);
		note_glob(s, 1);
		break;
	case 3: snprintf(pat, sizeof(pat), "%.40s", w); break;
	default:
		return snprintf(buf, size, "%s %s \"%.40s\"", s->name, rnd_below(2) ? "==" : "!=", w);
	}
	return snprintf(buf, size, "%s ~ \"%s\"", s->name, pat);
}

static int gen_expr(char *buf, size_t size, const struct gen_event *g, int depth)
{
	const struct field_source *s = &g->f[rnd_below(g->n_f)];
	int n, m;

	switch (depth > 0 ? rnd_below(5) : 4) {
	case 0:
	case 1:
		n = snprintf(buf, size, "(");
		n += gen_expr(buf + n, size - n, g, depth - 1);
		n += snprintf(buf + n, size - n, ") %s (", rnd_below(2) ? "&&" : "||");
		n += gen_expr(buf + n, size - n, g, depth - 1);
		return n + snprintf(buf + n, size - n, ")");
	case 2:
		n = snprintf(buf, size, "!(");
		n += gen_expr(buf + n, size - n, g, depth - 1);
		return n + snprintf(buf + n, size - n, ")");
	default:
		m = s->is_string ? gen_string(buf, size, s) : gen_number(buf, size, g, s);
		return m;
	}
}

/* The maps a tracepoint filter refers to, for the kernel to check it. */
static int stats_fd = -1, accept_fd = -1, bss_fd = -1, rb_fd = -1, lost_fd = -1;
/* task_struct's comm, read through the task's BTF in the record's header. */
static int comm_off;

static bool load_as_tracepoint(const struct event_desc *d, char *why, size_t why_size)
{
	struct filter_emit_maps m = { .stats_fd = stats_fd, .accept_fd = accept_fd,
				      .bss_fd = bss_fd, .self_tgid = 1, .rb_fd = rb_fd,
				      .lost_total_fd = lost_fd, .wakeup_bytes = 1 << 20,
				      .task_comm_off = comm_off };
	static struct bpf_insn code[FILTER_EMIT_MAX];
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	static char log[1 << 16];
	int n = filter_emit(d, &m, code, why, why_size), fd;

	if (n < 0)
		return false;
	opts.log_buf = log;
	opts.log_size = sizeof(log);
	opts.log_level = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
	if (fd < 0) {
		opts.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
		snprintf(why, why_size, "%.300s", log + (strlen(log) > 300 ? strlen(log) - 300 : 0));
		return false;
	}
	close(fd);
	return true;
}

static int load_verdict(const struct event_desc *d, char *why, size_t why_size)
{
	struct filter_emit_maps m = FILTER_EMIT_NO_MAPS;
	static struct bpf_insn code[FILTER_EMIT_MAX];
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);
	static char log[1 << 16];
	int n, fd;

	m.verdict = true;
	n = filter_emit(d, &m, code, why, why_size);

	if (n < 0)
		return n;
	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "v", "GPL", code, n, &opts);
	if (fd < 0) {
		opts.log_buf = log;
		opts.log_size = sizeof(log);
		opts.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "v", "GPL", code, n, &opts);
		snprintf(why, why_size, "%.300s", log + (strlen(log) > 300 ? strlen(log) - 300 : 0));
		return -EINVAL;
	}
	return fd;
}

struct tally {
	size_t filters, fallbacks, refused, records, disagree, accepted, classes;
	size_t globs[2 * G_SOURCES];	/* filters emitted with each glob kind */
	bool shown;
};

static void run_one(struct gen_event *g, const char *expr, const struct trace_rec_hdr *h,
		    struct tally *t)
{
	struct event_desc desc = { .fixed_size = g->e->fixed_size, .id = g->e->id };
	struct diag d = { 0 };
	char why[400] = "";
	int fd;

	if (filter_compile(expr, g->e, NULL, &desc, &d) < 0 || !desc.n_insns)
		return;		/* out of range and the like: the compiler's to refuse */
	fd = load_verdict(&desc, why, sizeof(why));
	if (fd == -EOPNOTSUPP) {
		EXPECT(why[0], "%s: fell back without a reason", expr);
		EXPECT(!gen_globs, "%s:%s: %s: fell back: %s", g->e->system, g->e->name, expr, why);
		t->fallbacks++;
		return;
	}
	if (fd < 0 || !load_as_tracepoint(&desc, why, sizeof(why))) {
		EXPECT(0, "%s:%s: %s: the kernel refused the emitted code: %s", g->e->system,
		       g->e->name, expr, why);
		t->refused++;
		if (fd >= 0)
			close(fd);
		return;
	}
	t->filters++;
	for (int k = 0; k < 2 * G_SOURCES; k++)
		t->globs[k] += gen_globs >> k & 1;
	for (int k = 0; k < RECS; k++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = g->rec[k],
			    .ctx_size_in = g->len[k] < 64 ? 64 : g->len[k]);
		bool want = store_filter_match(&desc, h, g->rec[k], g->len[k]);

		if (bpf_prog_test_run_opts(fd, &run) < 0) {
			EXPECT(0, "BPF_PROG_TEST_RUN: %s", strerror(errno));
			break;
		}
		t->records++;
		t->accepted += want;
		if ((run.retval != 0) != want) {
			t->disagree++;
			if (!t->shown)
				EXPECT(0, "%s:%s: %s: record %d: emitted %u, interpreter %d",
				       g->e->system, g->e->name, expr, k, run.retval, want);
			t->shown = true;
		}
	}
	close(fd);
}

/* One event per class, as far as the fixture tells (same fields, same
 * offsets): those with strings first, then any with numbers. */
static bool same_layout(const struct tp_event *a, const struct tp_event *b)
{
	if (a->n_fields != b->n_fields || a->fixed_size != b->fixed_size)
		return false;
	for (size_t i = 0; i < a->n_fields; i++)
		if (strcmp(a->fields[i].name, b->fields[i].name) ||
		    a->fields[i].offset != b->fields[i].offset)
			return false;
	return true;
}

static size_t pick_events(struct tp_event **out, size_t max)
{
	size_t n = 0;

	fx_load();
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < fx_n && n < max; i++) {
			struct tp_event *e = fx_events[i];
			bool dl = false, arr = false, dup = false;

			for (size_t k = 0; k < e->n_fields; k++) {
				dl |= e->fields[k].kind == TP_FIELD_DATA_LOC && e->fields[k].is_string;
				arr |= e->fields[k].kind != TP_FIELD_DATA_LOC && e->fields[k].is_string &&
				       !e->fields[k].is_common;
			}
			if ((pass == 0 && !dl) || (pass == 1 && !arr) || (pass < 2 && n >= max / 3 * (pass + 1)))
				continue;
			if (e->fixed_size > FIXED_MAX || (!strcmp(e->system, "syscalls") && pass < 2))
				continue;
			for (size_t k = 0; k < n && !dup; k++)
				dup = out[k] == e || same_layout(out[k], e);
			if (!dup)
				out[n++] = e;
		}
	return n;
}

static void test_emitted_equals_interpreted(void)
{
	static struct gen_event g;
	struct tp_event *ev[48], *synth = NULL;
	size_t n_ev = pick_events(ev, 48);
	struct trace_rec_hdr h = { .pid = getpid(), .tid = gettid() };
	struct tally t = { 0 };
	cpu_set_t cpus;
	char expr[2048];

	/* One CPU, for cpu == N to mean the same on both sides. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	EXPECT(sched_setaffinity(0, sizeof(cpus), &cpus) == 0, "sched_setaffinity: %m");
	h.cpu = 0;
	stats_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4, sizeof(struct event_stats),
				  TRACERD_MAX_EVENTS, NULL);
	accept_fd = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, NULL, 4, 4, 1, NULL);
	bss_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);	/* `stopped` */
	rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, 1 << 16, NULL);
	lost_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4, 8, 1, NULL);
	EXPECT(stats_fd >= 0 && accept_fd >= 0 && bss_fd >= 0 && rb_fd >= 0 && lost_fd >= 0,
	       "bpf_map_create: %m");
	EXPECT(n_ev >= WANT_CLASSES, "%zu classes", n_ev);
	long_words();
	EXPECT(tp_format_parse(synth_format, &synth, NULL) == 0, "the synthetic event");

	{
		struct tp_classes classes;

		tp_classes_init(&classes);
		comm_off = tp_classes_task_comm(&classes);
		tp_classes_free(&classes);
		EXPECT(comm_off > 0, "task_struct's comm in the kernel's BTF: %d", comm_off);
	}
	for (size_t i = 0; stats_fd >= 0 && i < n_ev * 1000 && t.filters < WANT_FILTERS; i++) {
		if (i % 250 == 0) {	/* another comm, other records */
			prctl(PR_SET_NAME, words[rnd_below(N_WORDS)]);
			prctl(PR_GET_NAME, h.comm);
		}
		/* Every sixth round the synthetic event, the only __rel_loc. */
		if (i % 25 == 0)
			gen_event_init(&g, synth && i / 25 % 6 == 5 ? synth : ev[(i / 25) % n_ev], h.tid);
		gen_globs = 0;
		gen_expr(expr, sizeof(expr), &g, 1 + rnd_below(3));
		run_one(&g, expr, &h, &t);
		if (t.refused > 5 || t.disagree > 50)
			break;
	}
	printf("# %zu classes, %zu filters emitted and run on %zu records (%zu accepted by the "
	       "interpreter), %zu fell back to the interpreter, %zu refused, %zu disagreements\n",
	       n_ev, t.filters, t.records, t.accepted, t.fallbacks, t.refused, t.disagree);
	for (int k = 0; k < G_SOURCES; k++) {
		printf("# %s: %zu filters with \"*abc\" emitted, %zu with \"*abc*\"\n", g_source[k],
		       t.globs[2 * k], t.globs[2 * k + 1]);
		EXPECT(t.globs[2 * k] >= 20 && t.globs[2 * k + 1] >= 20,
		       "%s: end and middle globs emitted, not left to the interpreter", g_source[k]);
	}
	EXPECT(t.filters >= WANT_FILTERS, "only %zu filters", t.filters);
	tp_event_free(synth);
	EXPECT(!t.disagree && !t.refused, "%zu disagreements, %zu refused", t.disagree, t.refused);
	EXPECT(t.accepted > t.records / 10 && t.accepted < t.records * 9 / 10,
	       "the filters decide both ways: %zu of %zu accepted", t.accepted, t.records);
}

/* The verifier's work on "*abc" and "*abc*" does not grow with the string:
 * a __data_loc string (up to 8 KiB, read in windows) costs it about what
 * comm does. Each filter is loaded as the tracepoint program; its
 * instructions and the verifier's (bpf_prog_info.verified_insns) shown. */
static void test_glob_verifier_work(void)
{
	static const char *const cases[][3] = {
		{ "sched", "sched_process_exec", "comm" },
		{ "sched", "sched_switch", "prev_comm" },
		{ "sched", "sched_process_exec", "filename" },
		{ "net", "net_dev_queue", "name" },
		{ "sock", "sock_exceed_buf_limit", "name" },	/* char[32] */
	};
	static const char *const pats[] = {
		"*e", "*e*", "*abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
		"*abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxy*",
	};
	static struct bpf_insn code[FILTER_EMIT_MAX];
	unsigned most = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tp_event *e = fx_find(cases[i][0], cases[i][1]);

		EXPECT(e, "no fixture %s:%s", cases[i][0], cases[i][1]);
		for (size_t k = 0; e && k < sizeof(pats) / sizeof(pats[0]); k++) {
			struct filter_emit_maps m = { .stats_fd = stats_fd, .accept_fd = accept_fd,
						      .bss_fd = bss_fd, .self_tgid = 1, .rb_fd = rb_fd,
						      .lost_total_fd = lost_fd, .task_comm_off = comm_off };
			struct event_desc desc = { .fixed_size = e->fixed_size, .id = e->id };
			struct bpf_prog_info info = { 0 };
			__u32 info_len = sizeof(info);
			struct diag d = { 0 };
			char expr[128], why[400] = "";
			int n, fd;

			snprintf(expr, sizeof(expr), "%s ~ \"%s\"", cases[i][2], pats[k]);
			if (filter_compile(expr, e, NULL, &desc, &d) < 0) {
				EXPECT(0, "%s: %s", expr, d.msg);
				continue;
			}
			n = filter_emit(&desc, &m, code, why, sizeof(why));
			EXPECT(n > 0, "%s:%s: %s: not emitted: %s", e->system, e->name, expr, why);
			if (n <= 0)
				continue;
			fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, NULL);
			EXPECT(fd >= 0, "%s: the kernel refused it: %m", expr);
			if (fd < 0)
				continue;
			EXPECT(bpf_obj_get_info_by_fd(fd, &info, &info_len) == 0, "prog info: %m");
			close(fd);
			printf("# %s:%s %s: %d instructions, the verifier went through %u\n", e->system,
			       e->name, expr, n, info.verified_insns);
			if (info.verified_insns > most)
				most = info.verified_insns;
		}
	}
	EXPECT(most && most < 4000, "the verifier's work: %u instructions at most", most);
}

/* Histograms emitted and loaded against one agg_descs and key maps. */
struct agg_tries {
	int descs_fd, keys_fd[AGG_MAPS];
	size_t loaded, tried;
};

/* Which map a histogram's key is for: enum agg_map, or the large map with
 * a compact layout in the small one. */
enum agg_want { WANT_SMALL, WANT_MEDIUM, WANT_LARGE, WANT_COMPACT };

/* Emits e's histogram expr with no filter; whether the kernel loads it. */
static bool agg_loads(struct tp_event *e, const char *expr, const struct agg_tries *t,
		      enum agg_want want)
{
	struct filter_emit_maps m = { .stats_fd = stats_fd, .accept_fd = accept_fd,
				      .bss_fd = bss_fd, .self_tgid = 1, .rb_fd = rb_fd,
				      .lost_total_fd = lost_fd, .agg_descs_fd = t->descs_fd,
				      .agg_keys_fd = { t->keys_fd[0], t->keys_fd[1], t->keys_fd[2] } };
	struct event_desc desc = { .fixed_size = e->fixed_size, .id = e->id, .agg = 1 };
	static struct bpf_insn code[FILTER_EMIT_MAX];
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	static char log[1 << 16];
	struct conf_pos pos = { .file = "t.conf", .line = 1, .col = 1 };
	struct diag d = { 0 };
	struct hist *h = NULL;
	char why[400] = "";
	int n, fd;

	if (hist_compile(expr, e, &pos, &h, &d) < 0) {
		EXPECT(0, "%s:%s: %s: %s", e->system, e->name, expr, d.msg);
		return false;
	}
	m.agg = &h->desc;
	EXPECT(h->desc.map == (want == WANT_COMPACT ? AGG_MAP_LARGE : (uint32_t)want) &&
	       !!h->desc.short_size == (want == WANT_COMPACT) && filter_emit_aggregates(&m),
	       "%s:%s: %s: not emitted (map %u, compact %u)", e->system, e->name, expr,
	       h->desc.map, h->desc.short_size);
	n = filter_emit(&desc, &m, code, why, sizeof(why));
	hist_free(h);
	if (n < 0) {
		EXPECT(0, "%s:%s: %s: %s", e->system, e->name, expr, why);
		return false;
	}
	opts.log_buf = log;
	opts.log_size = sizeof(log);
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
	if (fd < 0) {
		opts.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
		EXPECT(fd >= 0, "%s:%s: %s: the kernel refused it: %.300s", e->system, e->name, expr,
		       log + (strlen(log) > 300 ? strlen(log) - 300 : 0));
		return false;
	}
	close(fd);
	return true;
}

static void agg_tries_close(struct agg_tries *t)
{
	close(t->descs_fd);
	for (int i = 0; i < AGG_MAPS; i++)
		close(t->keys_fd[i]);
}

static bool agg_tries_open(struct agg_tries *t)
{
	bool ok;

	*t = (struct agg_tries){ 0 };
	t->descs_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, sizeof(struct agg_desc),
				     TRACERD_MAX_EVENTS, NULL);
	ok = t->descs_fd >= 0;
	for (int i = 0; i < AGG_MAPS; i++) {
		t->keys_fd[i] = bpf_map_create(BPF_MAP_TYPE_HASH, NULL,
					       sizeof(struct agg_key_hdr) + tracerd_agg_map_bytes(i),
					       sizeof(struct agg_value), 16, NULL);
		ok &= t->keys_fd[i] >= 0;
	}
	EXPECT(ok, "bpf_map_create: %m");
	fx_load();
	if (ok)
		return true;
	agg_tries_close(t);
	return false;
}

/* Emits and loads the histogram fmt (with a, b for its %s) on e. */
static void agg_try(struct agg_tries *t, struct tp_event *e, enum agg_want want,
		    const char *fmt, const char *a, const char *b)
{
	char expr[256];

	snprintf(expr, sizeof(expr), fmt, a, b);
	t->loaded += agg_loads(e, expr, t, want);
	t->tried++;
}

/* The event's first number outside the common fields, or NULL. */
static const char *first_number(const struct tp_event *e)
{
	for (size_t k = 0; k < e->n_fields; k++)
		if (e->fields[k].kind == TP_FIELD_SCALAR && !e->fields[k].is_common)
			return e->fields[k].name;
	return NULL;
}

/* fn for every event (outside syscalls) of the captured formats, with its
 * first number; then the tally, named what. */
static void agg_each_event(void (*fn)(struct agg_tries *, struct tp_event *, const char *),
			   const char *what, size_t want)
{
	struct agg_tries t;

	if (!agg_tries_open(&t))
		return;
	for (size_t i = 0; i < fx_n; i++)
		if (strcmp(fx_events[i]->system, "syscalls"))
			fn(&t, fx_events[i], first_number(fx_events[i]));
	printf("# %zu of %zu histograms keyed by %s emitted and loaded\n", t.loaded, t.tried, what);
	EXPECT(t.tried >= want && t.loaded == t.tried, "%zu of %zu", t.loaded, t.tried);
	agg_tries_close(&t);
}

/* keys=STRING and keys=STRING,NUMBER for each __data_loc string. */
static void data_loc_keys(struct agg_tries *t, struct tp_event *e, const char *num)
{
	for (size_t k = 0; k < e->n_fields; k++) {
		if (e->fields[k].kind != TP_FIELD_DATA_LOC || !e->fields[k].is_string)
			continue;
		agg_try(t, e, WANT_COMPACT, "hist:keys=%s", e->fields[k].name, NULL);
		if (num)
			agg_try(t, e, WANT_COMPACT, "hist:keys=%s,%s", e->fields[k].name, num);
	}
}

static void test_data_loc_keys_load(void)
{
	agg_each_event(data_loc_keys, "a __data_loc string", 300);
}

/* The first number through .log2 and .buckets=N; and common_pid.execname,
 * cgroup and unit keys on some events. */
static void number_keys(struct agg_tries *t, struct tp_event *e, const char *num)
{
	static const char *const other[] = {
		"hist:keys=common_pid.execname", "hist:keys=cgroup,%s", "hist:keys=unit,%s.log2",
	};

	if (!num)
		return;
	agg_try(t, e, WANT_SMALL, "hist:keys=%s.log2", num, NULL);
	agg_try(t, e, WANT_SMALL, "hist:keys=%s.buckets=100,%s", num, num);
	if (t->tried % 64 > 1)
		return;
	for (size_t k = 0; k < ARRAY_SIZE(other); k++)
		agg_try(t, e, WANT_SMALL, other[k], num, NULL);
}

static void test_number_keys_load(void)
{
	agg_each_event(number_keys, ".log2, .buckets, .execname, cgroup or unit", 1000);
}

/* Keys over 24 bytes without a compact layout: a char array (its NUL
 * makes 17 bytes of 16) with a number (the medium map up to 64 bytes),
 * common_pid.execname with cpu (32: medium), the stack with a number
 * (152: large). */
static void large_keys(struct agg_tries *t, struct tp_event *e, const char *num)
{
	static unsigned nth;
	const char *arr = NULL;

	for (size_t k = 0; k < e->n_fields && !arr; k++)
		if (e->fields[k].kind == TP_FIELD_ARRAY && e->fields[k].is_string &&
		    !e->fields[k].is_common && e->fields[k].array_len >= 16)
			arr = e->fields[k].name;
	if (arr && num)
		agg_try(t, e, tracerd_agg_map_of(8 + ((tp_event_field(e, arr)->array_len + 8) & ~7u)),
			"hist:keys=%s,%s", arr, num);
	if (!num || nth++ % 8)	/* the event matters little here */
		return;
	agg_try(t, e, WANT_LARGE, "hist:keys=common_stacktrace,%s", num, NULL);
	agg_try(t, e, WANT_MEDIUM, "hist:keys=common_pid.execname,cpu", NULL, NULL);
}

static void test_large_keys_load(void)
{
	agg_each_event(large_keys, "a large key (char arrays, the stack, .execname)", 100);
}

static bool calls(const struct bpf_insn *code, int n, int helper)
{
	for (int i = 0; i < n; i++)
		if (code[i].code == (BPF_JMP | BPF_CALL) && code[i].imm == helper)
			return true;
	return false;
}

/* keys=common_stacktrace alone, with a sum, with and without a filter:
 * counted in the emitted program by the stack's id (bpf_get_stackid() into
 * the stack map), and the kernel loads the code as the tracepoint program
 * tracerd attaches, with maps of the kinds tracerd's are. */
static void test_stack_id_histogram(void)
{
	struct tp_event *e = fx_find("filelock", "fcntl_setlk");
	struct conf_pos pos = { .file = "t.conf", .line = 1, .col = 1 };
	static struct bpf_insn code[FILTER_EMIT_MAX];
	static char log[1 << 16];
	struct hist *h = NULL;
	struct diag d = { 0 };
	char why[400] = "";
	int descs, small, stacks;

	EXPECT(e, "no fixture filelock:fcntl_setlk");
	if (!e || hist_compile("hist:keys=common_stacktrace:vals=fl_start", e, &pos, &h, &d) < 0) {
		EXPECT(0, "hist_compile: %s", d.msg);
		return;
	}
	descs = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, sizeof(struct agg_desc), 4, NULL);
	small = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(struct agg_key_hdr) + TRACERD_AGG_SMALL,
			       sizeof(struct agg_value), 16, NULL);
	stacks = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, NULL, 4, TRACERD_HIST_STACK_FRAMES * 8, 4,
				NULL);
	EXPECT(h->desc.stack_ids && descs >= 0 && small >= 0 && stacks >= 0, "stack_ids %u, maps: %m",
	       h->desc.stack_ids);
	for (int filtered = 0; filtered < 2 && descs >= 0 && small >= 0 && stacks >= 0; filtered++) {
		struct event_desc desc = { .fixed_size = e->fixed_size, .id = e->id, .agg = 1 };
		struct filter_emit_maps m = { .stats_fd = stats_fd, .accept_fd = accept_fd,
					      .bss_fd = bss_fd, .self_tgid = 1, .rb_fd = rb_fd,
					      .lost_total_fd = lost_fd, .agg = &h->desc,
					      .agg_descs_fd = descs, .agg_keys_fd = { small, -1, -1 },
					      .agg_stacks_fd = stacks };
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log, .log_size = sizeof(log),
			    .log_level = 1);
		int n, fd;

		if (filtered)
			EXPECT(filter_compile("type == 2", e, NULL, &desc, &d) == 0, "%s", d.msg);
		EXPECT(filter_emit_aggregates(&m), "a stack-id histogram is not counted in the program");
		n = filter_emit(&desc, &m, code, why, sizeof(why));
		EXPECT(n > 0 && calls(code, n, BPF_FUNC_get_stackid), "filter %d: %d: %s", filtered, n, why);
		if (n <= 0)
			continue;
		log[0] = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
		EXPECT(fd >= 0, "filter %d: the kernel refused the stack-id histogram: %.300s", filtered,
		       log + (strlen(log) > 300 ? strlen(log) - 300 : 0));
		if (fd >= 0)
			close(fd);
	}
	close(descs);
	close(small);
	close(stacks);
	hist_free(h);
}

/* Without a filter, a program for every event of the fixtures that the
 * kernel loads: one that writes its record itself, of fixed size or with
 * __data_loc strings (built in emit_rec: filter_emit_frame.c's write_dyn()),
 * or hands it to the accept program. */
static void test_no_filter_loads(void)
{
	int rec_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4,
				    sizeof(struct trace_rec_hdr) + 2 * TRACERD_MAX_RECORD, 1, NULL);
	static struct bpf_insn code[FILTER_EMIT_MAX];
	static char log[1 << 16];
	size_t loaded = 0, fixed = 0, dyn = 0, handed = 0;

	EXPECT(rec_fd >= 0, "bpf_map_create: %m");
	fx_load();
	for (size_t i = 0; rec_fd >= 0 && i < fx_n; i++) {
		const struct tp_event *e = fx_events[i];
		struct event_desc desc = { .fixed_size = e->fixed_size, .id = e->id };
		struct filter_emit_maps m = { .stats_fd = stats_fd, .accept_fd = accept_fd,
					      .bss_fd = bss_fd, .self_tgid = 1, .rb_fd = rb_fd,
					      .lost_total_fd = lost_fd, .rec_fd = rec_fd,
					      .wakeup_bytes = 1 << 20, .task_comm_off = comm_off };
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log, .log_size = sizeof(log));
		char why[400] = "";
		int n, fd;

		for (size_t k = 0; k < e->n_fields && desc.n_dyn < TRACERD_MAX_DYN; k++) {
			const struct tp_field *f = &e->fields[k];

			if (f->kind != TP_FIELD_DATA_LOC && f->kind != TP_FIELD_REL_LOC)
				continue;
			desc.dyn_rel |= (f->kind == TP_FIELD_REL_LOC) << desc.n_dyn;
			desc.dyn_off[desc.n_dyn++] = f->offset;
		}
		n = filter_emit(&desc, &m, code, why, sizeof(why));
		EXPECT(n > 0, "%s:%s: no filter not emitted: %s", e->system, e->name, why);
		if (n <= 0)
			continue;
		log[0] = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
		if (fd < 0) {
			opts.log_level = 1;
			fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "t", "GPL", code, n, &opts);
			EXPECT(0, "%s:%s: the kernel refused it: %.300s", e->system, e->name,
			       log + (strlen(log) > 300 ? strlen(log) - 300 : 0));
			if (fd < 0)
				continue;
		}
		close(fd);
		loaded++;
		if (filter_emit_hands_on(&desc, &m))
			handed++;
		else if (desc.n_dyn)
			dyn++;
		else
			fixed++;
	}
	printf("# %zu events: %zu programs loaded; %zu write a record of fixed size, %zu one with "
	       "__data_loc strings, %zu hand it on\n", fx_n, loaded, fixed, dyn, handed);
	EXPECT(loaded == fx_n && dyn >= 100 && fixed >= 100, "%zu of %zu loaded", loaded, fx_n);
	if (rec_fd >= 0)
		close(rec_fd);
}

int main(void)
{
	RUN(test_emitted_equals_interpreted);
	RUN(test_data_loc_keys_load);	/* with the first one's maps */
	RUN(test_number_keys_load);
	RUN(test_large_keys_load);
	RUN(test_glob_verifier_work);
	RUN(test_stack_id_histogram);
	RUN(test_no_filter_loads);
	close(stats_fd);
	close(accept_fd);
	close(bss_fd);
	close(rb_fd);
	close(lost_fd);
	return tests_failed ? 1 : 0;
}
