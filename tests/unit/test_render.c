// SPDX-License-Identifier: GPL-2.0
/* The renderer on synthetic records over the captured format files of this
 * kernel (tests/fixtures/formats-6.18.txt): flag and symbol edge cases,
 * pointer hashing, network formats, and malformed records. */
#include <glob.h>
#include <stdlib.h>
#include "render/render.h"
#include "render/render_priv.h"
#include "kernel-events/symbols.h"
#include "fixtures.h"
#include "records.h"
#include "test.h"
#include "util.h"

static const struct render_opts raw = { .raw_pointers = true }, hashed = { .raw_pointers = false };

static struct tp_event *event_of(size_t i)
{
	struct tp_event *e = fixture_parse(i);

	if (!e)
		return NULL;
	EXPECT(render_prepare(e) == 0, "render_prepare %s", fixtures[i].name);
	EXPECT(render_prepare(e) == 0, "render_prepare twice %s", fixtures[i].name);
	return e;
}

static struct tp_event *load(const char *name)
{
	for (size_t i = 0; i < n_fixtures; i++)
		if (!strcmp(fixtures[i].name, name))
			return event_of(i);
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

static char *render_as(const struct tp_event *e, const struct render_opts *o, const struct rec *r)
{
	struct strbuf sb = { 0 };
	char *s;

	render_event(e, o, r->data, r->len, &sb);
	s = strdup(sb_str(&sb));
	sb_free(&sb);
	return s;
}

static uint64_t sym(const struct tp_event *e, const char *field, const char *name)
{
	const struct tp_symtab *t = tp_event_symtab(e, field);

	EXPECT(t, "%s has no symbol table", field);
	for (size_t i = 0; t && i < t->n; i++)
		if (!strcmp(t->syms[i].name, name))
			return t->syms[i].value;
	EXPECT(0, "%s has no symbol %s", field, name);
	return 0;
}

#define EXPECT_HAS(s, sub) EXPECT((s) && strstr((s), (sub)), "'%s' lacks '%s'", (s), (sub))
#define EXPECT_LACKS(s, sub) EXPECT((s) && !strstr((s), (sub)), "'%s' has '%s'", (s), (sub))

static void flags_edge_cases(void)
{
	struct tp_event *e = load("ext4:ext4_ext_map_blocks_enter");
	uint64_t create = e ? sym(e, "flags", "CREATE") : 0;
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_num(&r, "dev", 254u << 20 | 3);
	rec_num(&r, "flags", 0x80);		/* no known bit */
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "dev 254,3 ino 0 lblk 0 len 0 flags 0x80");
	free(s);
	rec_num(&r, "flags", create | 0x80);	/* a known bit and a leftover */
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "dev 254,3 ino 0 lblk 0 len 0 flags CREATE|0x80");
	free(s);
	rec_num(&r, "flags", 0);			/* zero: the empty string */
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "dev 254,3 ino 0 lblk 0 len 0 flags ");
	free(s);
	drop(e);
}

static void multi_bit_masks_first(void)
{
	struct tp_event *e = load("kmem:kmalloc");
	uint64_t kernel, zero, io;
	struct rec r;
	char *s;

	if (!e)
		return;
	kernel = sym(e, "gfp_flags", "GFP_KERNEL");
	zero = sym(e, "gfp_flags", "__GFP_ZERO");
	io = sym(e, "gfp_flags", "__GFP_IO");
	EXPECT(kernel & io && __builtin_popcountll(kernel) > 1, "GFP_KERNEL=0x%llx is a mask", (unsigned long long)kernel);
	rec_init(&r, e);
	rec_num(&r, "gfp_flags", kernel | zero);
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " gfp_flags=GFP_KERNEL|__GFP_ZERO ");
	EXPECT_LACKS(s, "__GFP_IO");
	free(s);
	rec_num(&r, "gfp_flags", 0);		/* the print fmt says "none" itself */
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " gfp_flags=none ");
	free(s);
	drop(e);
}

static void flags_of_an_expression(void)
{
	struct tp_event *e = load("timer:timer_start");
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_num(&r, "flags", 24u << 22 | 1);	/* idx 24, cpu 1, no flag bit */
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " cpu=1 idx=24 flags=");
	EXPECT(s && s[strlen(s) - 1] == '=', "'%s' shows flags", s);
	free(s);
	rec_num(&r, "flags", 24u << 22 | 0x00080000 | 0x00200000);
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " cpu=0 idx=24 flags=D|I");
	free(s);
	drop(e);
}

static void symbolic_known_and_unknown(void)
{
	struct tp_event *e = load("irq:softirq_entry");
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_num(&r, "vec", sym(e, "vec", "NET_RX"));
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "vec=3 [action=NET_RX]");
	free(s);
	rec_num(&r, "vec", 42);
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "vec=42 [action=0x2a]");
	free(s);
	drop(e);
}

/* Enum names tracefs left unresolved (HRTIMER_MODE_*) come from BTF. */
static void btf_enum_names(void)
{
	struct tp_event *e = load("timer:hrtimer_start");
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_num(&r, "mode", sym(e, "mode", "REL|PINNED"));
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " mode=REL|PINNED ");
	free(s);
	drop(e);
}

static void sched_switch_state(void)
{
	struct tp_event *e = load("sched:sched_switch");
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_bytes(&r, "prev_comm", "bash", 5);
	rec_bytes(&r, "next_comm", "swapper/1", 10);
	rec_num(&r, "prev_pid", 42);
	rec_num(&r, "prev_prio", 120);
	rec_num(&r, "prev_state", sym(e, "prev_state", "D"));
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "prev_comm=bash prev_pid=42 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=0");
	free(s);
	rec_num(&r, "prev_state", 0);
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " prev_state=R ==> ");
	free(s);
	drop(e);
}

static void pointers_hashed_unless_raw(void)
{
	struct tp_event *e = load("kmem:kfree");	/* one program, either policy */
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_num(&r, "ptr", 0xffff888102c777c0ULL);
	s = render_as(e, &hashed, &r);
	EXPECT_LACKS(s, "ffff888102c777c0");
	EXPECT(s && strstr(s, " ptr=") && strlen(strstr(s, " ptr=")) == 5 + 16, "'%s': 16 digits", s);
	free(s);
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, " ptr=ffff888102c777c0");
	free(s);
	rec_num(&r, "ptr", 0);	/* NULL is not an address: printed as is */
	s = render_as(e, &hashed, &r);
	EXPECT_HAS(s, " ptr=0000000000000000");
	free(s);
	drop(e);
}

static void network_formats(void)
{
	static const uint8_t lo6[16] = { [15] = 1 }, v4[4] = { 127, 0, 0, 1 };
	struct tp_event *e = load("sock:inet_sock_set_state");
	struct rec r;
	char *s;

	if (!e)
		return;
	rec_init(&r, e);
	rec_num(&r, "family", 10);
	rec_num(&r, "protocol", 6);
	rec_num(&r, "sport", 4242);
	rec_bytes(&r, "saddr", v4, 4);
	rec_bytes(&r, "saddr_v6", lo6, 16);
	rec_num(&r, "oldstate", sym(e, "oldstate", "TCP_SYN_SENT"));
	rec_num(&r, "newstate", sym(e, "newstate", "TCP_ESTABLISHED"));
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "family=AF_INET6 protocol=IPPROTO_TCP sport=4242 dport=0 saddr=127.0.0.1 "
			"daddr=0.0.0.0 saddrv6=::1 daddrv6=:: oldstate=TCP_SYN_SENT newstate=TCP_ESTABLISHED");
	free(s);
	drop(e);
}

static void data_loc_out_of_bounds(void)
{
	struct tp_event *e = load("sched:sched_process_exec");
	const struct tp_field *f = e ? tp_event_field(e, "filename") : NULL;
	struct rec r;
	uint32_t loc;
	char *s;

	if (!f)
		return;
	rec_init(&r, e);
	rec_num(&r, "pid", 7);
	rec_loc(&r, "filename", "/bin/true", 10);
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "filename=/bin/true pid=7 old_pid=0");
	free(s);
	loc = 10u << 16 | 500;		/* offset past the record */
	memcpy(r.data + f->offset, &loc, 4);
	s = render_as(e, &raw, &r);
	EXPECT_STREQ(s, "filename=[bad __data_loc] pid=7 old_pid=0");
	free(s);
	loc = 400u << 16 | e->fixed_size;	/* length past the record */
	memcpy(r.data + f->offset, &loc, 4);
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, "filename=[bad __data_loc]");
	free(s);
	r.len = f->offset + 2;		/* truncated inside the field */
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, "[field past the record]");
	free(s);
	drop(e);
}

/* A print fmt naming a field the event lacks (REC->gfp_f|ags: found by the
 * format fuzzer) crashed libtraceevent; it must fall back to field=value. */
static void print_fmt_with_unknown_field(void)
{
	_cleanup_free_ char *text = NULL;
	struct tp_event *e = NULL;
	struct rec r;
	char *s, *at;

	for (size_t i = 0; i < n_fixtures && !text; i++)
		if (!strcmp(fixtures[i].name, "kmem:kmalloc"))
			text = strdup(fixtures[i].text);
	EXPECT(text, "no fixture kmem:kmalloc");
	if (!text)
		return;
	at = strstr(text, "__print_flags(REC->gfp_flags");
	EXPECT(at, "kmem:kmalloc prints gfp_flags with __print_flags");
	if (!at)
		return;
	at[strlen("__print_flags(REC->gfp_f")] = '|';
	EXPECT(tp_format_parse(text, &e, NULL) == 0, "parse");
	if (!e)
		return;
	EXPECT(render_prepare(e) == 0, "render_prepare");
	rec_init(&r, e);
	rec_num(&r, "bytes_req", 24);
	s = render_as(e, &raw, &r);
	EXPECT_HAS(s, "bytes_req=24");
	free(s);
	drop(e);
}

/* The format fuzzer's crashing inputs, kept in its corpus as regress-*:
 * each goes the harness's way again (parse, prepare, render its own bytes). */
static void fuzz_regressions(void)
{
	_cleanup_(globfree) glob_t g = { 0 };
	struct strbuf sb = { 0 };

	EXPECT(glob("tests/fuzz/corpus/format/regress-*", 0, NULL, &g) == 0 && g.gl_pathc >= 3,
	       "regression inputs in tests/fuzz/corpus/format");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		_cleanup_free_ char *text = NULL;
		struct tp_event *e = NULL;
		size_t len = 0;
		_cleanup_fclose_ FILE *f = fopen(g.gl_pathv[i], "re");

		if (!f || getdelim(&text, &len, 0, f) < 0) {
			EXPECT(0, "read %s", g.gl_pathv[i]);
			continue;
		}
		if (tp_format_parse(text, &e, NULL) < 0)
			continue;
		if (render_prepare(e) >= 0) {
			render_event(e, &raw, (const uint8_t *)text, strlen(text), &sb);
			render_release(e);
		}
		tp_event_free(e);
	}
	sb_free(&sb);
}

/* Every captured format compiles, or falls back naming the construct; each
 * renders an all-zero record of its size, and one cut short, without a
 * read past the end (the sanitizer build checks that). */
static void every_captured_format(void)
{
	size_t n[4] = { 0 };	/* compiled, libtraceevent, field=value, syscalls */
	struct strbuf sb = { 0 };
	_cleanup_fclose_ FILE *null = fopen("/dev/null", "we");

	for (size_t i = 0; i < n_fixtures; i++) {
		struct tp_event *e = event_of(i);
		const struct rprog *p;
		struct rec r;

		if (!e)
			continue;
		rec_init(&r, e);
		render_event(e, &raw, r.data, r.len, &sb);
		render_event(e, &raw, r.data, r.len / 2, &sb);
		sb_reset(&sb);
		render_describe(e, null ? null : stdout);
		p = e->render;
		n[p->mode == RM_COMPILED ? 0 : p->mode == RM_SYSCALL ? 3 : p->tep_ok ? 1 : 2]++;
		drop(e);
	}
	sb_free(&sb);
	printf("# %zu formats: %zu compiled, %zu through libtraceevent, %zu as field=value, "
	       "%zu syscalls\n", n_fixtures, n[0], n[1], n[2], n[3]);
	EXPECT(n_fixtures == 2323, "%zu fixtures", n_fixtures);
	EXPECT(n[0] >= 1500, "only %zu compiled", n[0]);
	EXPECT(n[3] == 720, "%zu syscall events", n[3]);
}

/* The hand-written integer conversion prints what printf prints, for every
 * flag set, width and precision (but %#x of 0, which the kernel prints
 * "0x0": hash_zero). */
static void numbers_as_printf(void)
{
	static const uint64_t vals[] = { 0, 1, 7, 8, 10, 127, 128, 255, 256, 4095, 1234567,
		0x7fffffff, 0x80000000, 0xdeadbeef, 0xffffffff, 0x100000000, INT64_MAX,
		(uint64_t)INT64_MIN, (uint64_t)-1, (uint64_t)-2, (uint64_t)-1000 };
	static const int widths[] = { -1, 0, 1, 2, 5, 22 }, precs[] = { -1, 0, 1, 3, 21 };
	static const unsigned sizes[] = { 1, 2, 4, 8 };
	struct strbuf sb = { 0 };
	unsigned bad = 0;

	for (const char *conv = "diuxXo"; *conv; conv++)
	for (unsigned fl = 0; fl < 32; fl++)
	for (size_t w = 0; w < ARRAY_SIZE(widths); w++)
	for (size_t pr = 0; pr < ARRAY_SIZE(precs); pr++)
	for (size_t z = 0; z < ARRAY_SIZE(sizes); z++)
	for (size_t k = 0; k < ARRAY_SIZE(vals); k++) {
		struct rseg seg = { .conv = *conv, .flags = fl, .width = widths[w], .prec = precs[pr],
				    .int_size = sizes[z] };
		bool sgn = *conv == 'd' || *conv == 'i';
		uint64_t v = vals[k];
		char fmt[16], want[128], *f = fmt;

		if (sizes[z] < 8) {
			v &= (1ULL << (sizes[z] * 8)) - 1;
			if (sgn && (v >> (sizes[z] * 8 - 1)) & 1)
				v |= ~0ULL << (sizes[z] * 8);
		}
		if (fl & RF_HASH && !v && (*conv == 'x' || *conv == 'X'))
			continue;
		*f++ = '%';
		for (unsigned i = 0; i < 5; i++)
			if (fl & (1u << i))
				*f++ = "-+ #0"[i];
		snprintf(f, 8, "*.*ll%c", *conv == 'i' ? 'd' : *conv);
		if (sgn)
			snprintf(want, sizeof(want), fmt, widths[w] < 0 ? 0 : widths[w], precs[pr], (long long)v);
		else
			snprintf(want, sizeof(want), fmt, widths[w] < 0 ? 0 : widths[w], precs[pr],
				 (unsigned long long)v);
		sb_reset(&sb);
		render_number(&seg, vals[k], &sb);
		if (strcmp(sb_str(&sb), want) && bad++ < 5)
			EXPECT(0, "%s w=%d p=%d size %u of %#llx: got '%s', want '%s'", fmt, widths[w],
			       precs[pr], sizes[z], (unsigned long long)vals[k], sb_str(&sb), want);
	}
	EXPECT(!bad, "%u mismatches", bad);
	sb_free(&sb);
}

int main(void)
{
	fixtures_load();
	RUN(numbers_as_printf);
	RUN(flags_edge_cases);
	RUN(multi_bit_masks_first);
	RUN(flags_of_an_expression);
	RUN(symbolic_known_and_unknown);
	RUN(btf_enum_names);
	RUN(sched_switch_state);
	RUN(pointers_hashed_unless_raw);
	RUN(network_formats);
	RUN(data_loc_out_of_bounds);
	RUN(print_fmt_with_unknown_field);
	RUN(fuzz_regressions);
	RUN(every_captured_format);
	for (size_t i = 0; i < n_fixtures; i++) {
		free(fixtures[i].name);
		free(fixtures[i].text);
	}
	free(fixtures);
	return TEST_EXIT();
}
