// SPDX-License-Identifier: GPL-2.0
/* Aggregate=: the hist parser's errors, the compiler on this kernel's
 * formats, and the BPF side itself (bpf/aggregate.bpf.h built for
 * userspace over small fake maps) counting records whose dumped entries
 * hist_format prints in the kernel's hist file layout. */
#include <inttypes.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <stdbool.h>
#include <unistd.h>
#include "aggregate/hist.h"
#include "aggregate/hist_map.h"
#include "kernel-events/symbols.h"
#include "render/render.h"
#include "tracerd_record.h"
#include "fixtures.h"
#include "records.h"
#include "test.h"

/* --- the BPF side's world: maps and helpers --- */
#define SEC(x)
#define __uint(name, val) int (*name)[val]
#define __type(name, val) __typeof__(val) *name
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static char cur_comm[TRACERD_COMM_LEN] = "bash";
static __u32 cur_cpu = 1;
static long update_error;	/* forced bpf_map_update_elem() result, 0: none */

struct fake_entry {
	const void *map;	/* agg_small or agg_large */
	__u8 key[sizeof(struct agg_key_hdr) + TRACERD_AGG_LARGE];
	struct agg_value v;
};
static struct fake_entry entries[512];
static size_t n_entries;
static struct agg_desc fake_descs[4];
static struct agg_budget fake_budgets[8];

static size_t map_key_size(const void *map);

static void *bpf_map_lookup_elem(void *map, const void *key);
static long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags);

static long bpf_probe_read_kernel_str(void *dst, __u32 size, const void *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	((char *)dst)[n] = 0;
	return n + 1;
}

static long bpf_get_current_comm(void *buf, __u32 size)
{
	memcpy(buf, cur_comm, size);
	return 0;
}

static __u32 bpf_get_smp_processor_id(void)
{
	return cur_cpu;
}

/* The kernel's stack for the next event: frames, or an error. */
static __u64 cur_stack[TRACERD_HIST_STACK_FRAMES + 4];
static long cur_stack_err;

static long bpf_get_stack(void *ctx, void *buf, __u32 size, __u64 flags)
{
	__u32 n = 0;

	(void)ctx;
	(void)flags;
	if (cur_stack_err)
		return cur_stack_err;
	while (n < size / 8 && cur_stack[n])
		n++;
	memcpy(buf, cur_stack, n * 8);
	memset((__u8 *)buf + n * 8, 0, size - n * 8);
	return n * 8;
}

/* bpf_get_stackid(): ids of the stacks seen, or this error for every
 * stack (-EEXIST: its bucket holds another; the tests but one run so, on
 * the frames path). */
static long cur_stackid_err = -17;
static __u64 id_stacks[8][TRACERD_HIST_STACK_FRAMES];
static size_t n_id_stacks;

static long bpf_get_stackid(void *ctx, void *map, __u64 flags)
{
	__u64 f[TRACERD_HIST_STACK_FRAMES];
	size_t i;

	(void)map;
	(void)flags;
	if (cur_stack_err || cur_stackid_err)
		return cur_stack_err ? cur_stack_err : cur_stackid_err;
	bpf_get_stack(ctx, f, sizeof(f), 0);
	for (i = 0; i < n_id_stacks; i++)
		if (!memcmp(id_stacks[i], f, sizeof(f)))
			return i;
	if (i == ARRAY_SIZE(id_stacks))
		return -12;	/* ENOMEM: the map full */
	memcpy(id_stacks[n_id_stacks++], f, sizeof(f));
	return i;
}

static __u64 bpf_get_current_cgroup_id(void)
{
	return 4242;	/* Aggregate='s unit and cgroup keys: checked live by units.sh */
}

/* common_timestamp: a clock the test sets. */
static __u64 cur_ktime;

static __u64 bpf_ktime_get_ns(void)
{
	return cur_ktime;
}

#include "../../bpf/aggregate.bpf.h"

static size_t map_key_size(const void *map)
{
	return sizeof(struct agg_key_hdr) +
	       tracerd_agg_map_bytes(map == (void *)&agg_large ? AGG_MAP_LARGE :
				     map == (void *)&agg_medium ? AGG_MAP_MEDIUM : AGG_MAP_SMALL);
}

static struct fake_entry *find(void *map, const void *key)
{
	for (size_t i = 0; i < n_entries; i++)
		if (entries[i].map == map && !memcmp(entries[i].key, key, map_key_size(map)))
			return &entries[i];
	return NULL;
}

static void *bpf_map_lookup_elem(void *map, const void *key)
{
	__u32 k = *(const __u32 *)key;
	struct fake_entry *e;

	if (map == (void *)&agg_descs)
		return k < ARRAY_SIZE(fake_descs) ? &fake_descs[k] : NULL;
	if (map == (void *)&agg_budgets)
		return k < ARRAY_SIZE(fake_budgets) ? &fake_budgets[k] : NULL;
	e = find(map, key);
	return e ? &e->v : NULL;
}

static long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags)
{
	(void)flags;
	if (update_error)
		return update_error;
	if (find(map, key))
		return -17;
	if (n_entries == ARRAY_SIZE(entries))
		return -7;	/* E2BIG */
	entries[n_entries].map = map;
	memset(entries[n_entries].key, 0, sizeof(entries[n_entries].key));
	memcpy(entries[n_entries].key, key, map_key_size(map));
	memcpy(&entries[n_entries].v, value, sizeof(struct agg_value));
	n_entries++;
	return 0;
}

/* --- records --- */
static struct rec rec;

static struct conf_pos pos = { .file = "t.conf", .line = 7, .col = 11 };

static struct hist *compile_ok(const char *event, const char *expr)
{
	struct tp_event *e = fixture_event(event);
	struct hist *h = NULL;
	struct diag d = { 0 };

	EXPECT(e, "no fixture %s", event);
	if (!e)
		return NULL;
	render_prepare(e);
	EXPECT(hist_compile(expr, e, &pos, &h, &d) == 0, "'%s': %s", expr, d.msg);
	if (h) {
		rec_init(&rec, e);
		fake_descs[1] = h->desc;
		memset(fake_budgets, 0, sizeof(fake_budgets));
		n_entries = 0;
		update_error = 0;
	}
	return h;
}

static void release(struct hist *h)
{
	struct tp_event *e = h ? (struct tp_event *)h->e : NULL;

	hist_free(h);
	if (e) {
		render_release(e);
		tp_event_free(e);
	}
}

/* The class program's call for slot 1, on the whole record. */
static bool fire(void)
{
	static struct agg_scratch a;

	return aggregate(1, rec.data, rec.data, (__u64)4242 << 32 | 4243, &a) == AGG_COUNTED;
}

/* What the daemon dumps and prints: a compact key (short strings, in the
 * small map) as the full key, as hist_collect() makes it. */
static char *dump(const struct hist *h)
{
	static __u8 full[ARRAY_SIZE(entries)][TRACERD_AGG_LARGE];
	struct hist_entry v[ARRAY_SIZE(entries)];
	struct hist_dump d = { .v = v, .n = n_entries, .key_size = TRACERD_AGG_LARGE };
	struct strbuf out = { 0 };

	for (size_t i = 0; i < n_entries; i++) {
		v[i] = (struct hist_entry){ .key = entries[i].key + sizeof(struct agg_key_hdr),
					    .hitcount = entries[i].v.hitcount };
		memcpy(v[i].sums, entries[i].v.sums, sizeof(v[i].sums));
		if (h->desc.short_size && entries[i].map == (void *)&agg_small) {
			hist_key_from_compact(&h->desc, v[i].key, full[i]);
			v[i].key = full[i];
		}
	}
	if (h->desc.short_size)
		hist_dump_merge(&d);
	hist_sort_entries(h, v, d.n);
	hist_format(h, v, d.n, fake_budgets[2].dropped + fake_budgets[3].dropped,
		    &(struct hist_format_opts){ 0 }, &out);
	return out.buf;
}

/* The lines between the header and Totals. */
static const char *body(const char *text)
{
	const char *p = strstr(text, "#\n\n");

	return p ? p + 3 : text;
}

static void test_string_key(void)
{
	struct hist *h = compile_ok("sched:sched_switch",
				    "hist:keys=next_comm:vals=hitcount:sort=hitcount.descending");
	const char *names[] = { "bash", "kworker/0:1", "bash", "bash", "kworker/0:1", "sshd" };
	char *out;

	if (!h)
		return;
	EXPECT(h->desc.map == AGG_MAP_SMALL && h->desc.key_size == 24, "key_size %u",
	       h->desc.key_size);
	EXPECT(h->span == 40 + 16, "span %u", h->span);	/* next_comm's end */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		rec_str(&rec, "next_comm", names[i]);
		EXPECT(fire(), "not counted");
	}
	out = dump(h);
	EXPECT_STREQ(out,
		"# event histogram\n#\n# trigger info: hist:keys=next_comm:vals=hitcount:"
		"sort=hitcount.descending:size=2048 [active]\n#\n\n"
		"{ next_comm: bash                                               } hitcount:          3\n"
		"{ next_comm: kworker/0:1                                        } hitcount:          2\n"
		"{ next_comm: sshd                                               } hitcount:          1\n"
		"\nTotals:\n    Hits: 6\n    Entries: 3\n    Dropped: 0\n");
	free(out);
	release(h);
}

static void test_symbolic_and_numeric_keys(void)
{
	struct hist *h = compile_ok("sched:sched_switch", "hist:keys=prev_state,next_pid:sort=next_pid");
	char *out;

	if (!h)
		return;
	rec_num(&rec, "prev_state", 1);
	rec_num(&rec, "next_pid", 10);
	fire();
	fire();
	rec_num(&rec, "prev_state", 0x100);	/* TASK_REPORT_MAX: preempted, "R+" */
	rec_num(&rec, "next_pid", -1);
	fire();
	out = dump(h);
	/* next_pid is signed: -1 sorts first, printed as the kernel's %llu */
	EXPECT_STREQ(body(out),
		"{ prev_state: R+              [       256], next_pid: 18446744073709551615 } "
		"hitcount:          1\n"
		"{ prev_state: S               [         1], next_pid:         10 } hitcount:          2\n"
		"\nTotals:\n    Hits: 3\n    Entries: 2\n    Dropped: 0\n");
	free(out);
	release(h);
}

static void test_log2_and_sums(void)
{
	struct hist *h = compile_ok("kmem:kmalloc", "hist:keys=bytes_req.log2:vals=bytes_alloc:sort=bytes_req");
	const uint64_t req[] = { 0, 1, 2, 3, 4, 5, 1000, 1024, 1025 };
	char *out;

	if (!h)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(req); i++) {
		rec_num(&rec, "bytes_req", req[i]);
		rec_num(&rec, "bytes_alloc", req[i] + 8);
		fire();
	}
	out = dump(h);
	EXPECT_STREQ(body(out),
		"{ bytes_req: ~ 2^0  } hitcount:          2  bytes_alloc:         17\n"
		"{ bytes_req: ~ 2^1  } hitcount:          1  bytes_alloc:         10\n"
		"{ bytes_req: ~ 2^2  } hitcount:          2  bytes_alloc:         23\n"
		"{ bytes_req: ~ 2^3  } hitcount:          1  bytes_alloc:         13\n"
		"{ bytes_req: ~ 2^10 } hitcount:          2  bytes_alloc:       2040\n"
		"{ bytes_req: ~ 2^11 } hitcount:          1  bytes_alloc:       1033\n"
		"\nTotals:\n    Hits: 9\n    Entries: 6\n    Dropped: 0\n");
	free(out);
	release(h);
}

static void test_buckets_execname_comm(void)
{
	struct hist *h = compile_ok("kmem:kmalloc",
				    "hist:keys=common_pid.execname,bytes_req.buckets=100,comm");
	struct strbuf sb = { 0 };
	char *out;

	if (!h)
		return;
	EXPECT(h->desc.map == AGG_MAP_MEDIUM, "a 48-byte key is the medium map's: %u", h->desc.map);
	rec_num(&rec, "bytes_req", 250);
	fire();
	rec_num(&rec, "bytes_req", 299);
	fire();
	out = dump(h);
	EXPECT_STREQ(body(out),
		"{ common_pid: bash            [      4243], bytes_req: ~ 200-299, comm: bash"
		"                                               } hitcount:          2\n"
		"\nTotals:\n    Hits: 2\n    Entries: 1\n    Dropped: 0\n");
	EXPECT(n_entries == 1, "%zu entries", n_entries);
	if (n_entries)
		hist_format_key(h, 0, entries[0].key + 8, &(struct hist_format_opts){ 0 }, &sb);
	EXPECT_STREQ(sb_str(&sb), "bash [4243]");
	sb_free(&sb);
	free(out);
	release(h);
}

static void test_data_loc_key(void)
{
	struct hist *h = compile_ok("sched:sched_process_exec", "hist:keys=filename");
	char *out;

	if (!h)
		return;
	/* the loc word's end: the string itself is read from the event */
	EXPECT(h->span == tp_event_field(h->e, "filename")->offset + 4 &&
	       h->desc.map == AGG_MAP_LARGE, "span %u map %u", h->span, h->desc.map);
	rec_str(&rec, "filename", "/usr/bin/true");
	fire();
	rec_init(&rec, h->e);
	rec_str(&rec, "filename", "/usr/bin/true");
	fire();
	out = dump(h);
	EXPECT(strstr(out, "{ filename: /usr/bin/true") && strstr(out, "hitcount:          2"),
	       "%s", out);
	free(out);
	release(h);
}

/* A __data_loc string of at most TRACERD_AGG_STR_SHORT bytes (its loc
 * word's length, NUL included) with the rest of the key goes to the small
 * map in the compact layout; a longer one to the large map; the dump is
 * what the large map alone gives (a loc word longer than its string too:
 * both maps then hold the key, and the dump makes it one entry). */
static void str_loc(const char *field, const char *s, size_t loc_len)
{
	char buf[loc_len];

	memset(buf, 0, loc_len);
	memcpy(buf, s, strlen(s) + 1 < loc_len ? strlen(s) + 1 : loc_len);
	rec_loc(&rec, field, buf, loc_len);
}

static size_t in_map(const void *map)
{
	size_t n = 0;

	for (size_t i = 0; i < n_entries; i++)
		n += entries[i].map == map;
	return n;
}

static void fire_names(const struct hist *h)
{
	static const char *const names[] = {
		"/bin/sh", "abcdefghijklmno" /* 16 */, "abcdefghijklmnop" /* 17 */, "/bin/sh",
		"/usr/local/bin/a-longer-name", "", "abcdefghijklmnop", "abcdefghijklmno",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		rec_init(&rec, h->e);
		str_loc("filename", names[i], strlen(names[i]) + 1);
		rec_num(&rec, "pid", 100 + i % 2);
		EXPECT(fire(), "%s not counted", names[i]);
	}
	rec_init(&rec, h->e);
	str_loc("filename", "/bin/sh", 40);	/* the NUL early */
	rec_num(&rec, "pid", 100);
	EXPECT(fire(), "the long loc word not counted");
}

static void test_short_strings(void)
{
	struct hist *h = compile_ok("sched:sched_process_exec", "hist:keys=filename,pid");
	struct agg_desc full;
	char *compact, *large;

	if (!h)
		return;
	EXPECT(h->desc.map == AGG_MAP_LARGE && h->desc.short_size == 24 && h->desc.keys[0].short_off == 0 &&
	       h->desc.keys[1].short_off == 16 && h->desc.keys[1].key_off == TRACERD_AGG_STR,
	       "map %u short_size %u short_off %u %u", h->desc.map, h->desc.short_size,
	       h->desc.keys[0].short_off, h->desc.keys[1].short_off);
	fire_names(h);
	/* small: /bin/sh (pids 100, 101), 15 letters, ""; large: 16 letters, the
	 * long name, /bin/sh of the early NUL (pid 100: in both maps) */
	EXPECT(in_map(&agg_small) == 4 && in_map(&agg_large) == 3, "small %zu large %zu",
	       in_map(&agg_small), in_map(&agg_large));
	compact = dump(h);
	full = h->desc;
	full.short_size = 0;	/* as before: every key in the large map */
	fake_descs[1] = full;
	memset(fake_budgets, 0, sizeof(fake_budgets));
	n_entries = 0;
	fire_names(h);
	EXPECT(in_map(&agg_small) == 0, "small %zu", in_map(&agg_small));
	large = dump(h);
	EXPECT_STREQ(compact, large);
	EXPECT(strstr(large, "{ filename: /bin/sh                                           , pid:        100 } "
			     "hitcount:          2"), "%s", large);
	free(compact);
	free(large);
	release(h);
	h = compile_ok("sched:sched_process_exec", "hist:keys=filename,pid,old_pid");
	EXPECT(h && h->desc.short_size == 0, "two numbers beside a string: 32 bytes, no compact layout");
	release(h);
	h = compile_ok("sched:sched_process_exec", "hist:keys=filename");
	EXPECT(h && h->desc.short_size == 16, "a string alone: 16 bytes");
	release(h);
}

/* size=128: the 129th key and every later event of a new key is Dropped. */
static void test_overflow(void)
{
	struct hist *h = compile_ok("kmem:kmalloc", "hist:keys=bytes_req:size=100");
	char *out;

	if (!h)
		return;
	EXPECT(h->desc.max_entries == 128, "max_entries %u", h->desc.max_entries);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 200; i++) {
			bool counted;

			rec_num(&rec, "bytes_req", i);
			counted = fire();
			EXPECT(counted == (i < 128), "key %d counted: %d", i, counted);
		}
	EXPECT(fake_budgets[2].entries == 128 && fake_budgets[2].dropped == 144,
	       "entries %llu dropped %llu", (unsigned long long)fake_budgets[2].entries,
	       (unsigned long long)fake_budgets[2].dropped);
	out = dump(h);
	EXPECT(strstr(out, "Totals:\n    Hits: 400\n    Entries: 128\n    Dropped: 144\n"), "%s", out);
	free(out);
	/* A failed insert gives its entry back. */
	update_error = -12;
	fake_budgets[2] = (struct agg_budget){ 0 };
	n_entries = 0;
	EXPECT(!fire(), "counted despite ENOMEM");
	EXPECT(fake_budgets[2].entries == 0 && fake_budgets[2].dropped == 1, "budget not restored");
	release(h);
}

static void expect_error(const char *event, const char *expr, int col, const char *msg)
{
	struct tp_event *e = fixture_event(event);
	struct hist *h = NULL;
	struct diag d = { 0 };

	if (!e)
		return;
	EXPECT(hist_compile(expr, e, &pos, &h, &d) < 0, "'%s' compiled", expr);
	EXPECT(d.line == 7 && d.col == pos.col + col, "'%s': column %d, want %d (%s)", expr,
	       d.col, pos.col + col, d.msg);
	EXPECT(strstr(d.msg, msg), "'%s': '%s' lacks '%s'", expr, d.msg, msg);
	hist_free(h);
	tp_event_free(e);
}

static void test_errors(void)
{
	expect_error("sched:sched_switch", "keys=next_pid", 0, "expected 'hist:'");
	expect_error("sched:sched_switch", "hist:keys=nxt_pid", 10, "unknown field 'nxt_pid'");
	expect_error("sched:sched_switch", "hist:keys=next_pid.lg2", 19, "unknown modifier '.lg2'");
	expect_error("sched:sched_switch", "hist:keys=next_comm.log2", 20,
		     "next_comm is a string: .log2 applies to numbers");
	expect_error("kmem:kmalloc", "hist:keys=bytes_req:size=0", 25, "size=0 is out of range");
	expect_error("kmem:kmalloc", "hist:keys=bytes_req:size=1000000", 25, "out of range");
	expect_error("kmem:kmalloc", "hist:keys=bytes_req.buckets=0", 28, "bucket size above 0");
	expect_error("kmem:kmalloc", "hist:vals=bytes_req", 0, "needs keys=");
	expect_error("kmem:kmalloc", "hist:keys=bytes_req:sort=nope", 25, "cannot sort by 'nope'");
	expect_error("kmem:kmalloc", "hist:keys=node.execname", 15, "common_pid only");
	expect_error("kmem:kmalloc", "hist:keys=node:vals=call_site.log2", 30,
		     "does not apply to a value");
	expect_error("sched:sched_switch", "hist:keys=next_pid:vals=next_comm", 24,
		     "vals= sums numeric fields");
	expect_error("kmem:kmalloc", "hist:keys=node:name=foo", 15, "not supported");
	expect_error("kmem:kmalloc", "hist:keys=common_flags", 10, "not available");
	expect_error("kmem:kmalloc", "hist:keys=a,b,c,d", 16, "too many keys");
}

/* common_timestamp as a key (.usecs: rounded as ns2usecs()) and a value. */
static void test_timestamp(void)
{
	struct hist *h = compile_ok("sched:sched_switch",
				    "hist:keys=common_timestamp.usecs:vals=common_timestamp");
	char *out;

	if (!h)
		return;
	cur_ktime = 1499;	/* 1 usec */
	fire();
	cur_ktime = 1500;	/* 2, rounded up */
	fire();
	cur_ktime = 2400;
	fire();
	out = dump(h);
	EXPECT_STREQ(body(out),
		"{ common_timestamp:          1 } hitcount:          1  common_timestamp:       1499\n"
		"{ common_timestamp:          2 } hitcount:          2  common_timestamp:       3900\n"
		"\nTotals:\n    Hits: 3\n    Entries: 2\n    Dropped: 0\n");
	free(out);
	release(h);
}

/* Variables, references and actions compiled for the event; the trigger
 * line as the kernel prints it. */
static void test_trigger_compile(void)
{
	struct hist *w = compile_ok("sched:sched_waking", "hist:keys=pid:ts0=common_timestamp.usecs");
	struct hist *s = compile_ok("sched:sched_switch", "hist:keys=next_pid:lat=common_timestamp."
				    "usecs-$ts0,x=2*next_prio/3-prev_pid*4:onmatch(sched."
				    "sched_waking).trace(wl,$lat,next_pid,next_comm) if next_pid > 0");
	const struct hist_trigger *t;

	if (w) {
		EXPECT(w->is_trigger && w->desc.trigger && w->trig.n_vars == 1 && !w->trig.n_refs,
		       "waking: vars %u refs %u", w->trig.n_vars, w->trig.n_refs);
		EXPECT(w->trig.vars[0].terms[0].op.kind == HOP_TS_USECS, "ts0 kind %u",
		       w->trig.vars[0].terms[0].op.kind);
		EXPECT_STREQ(w->trigger, "hist:keys=pid:vals=hitcount:ts0=common_timestamp.usecs:"
			     "sort=hitcount:size=2048:clock=mono");
	}
	if (s) {
		t = &s->trig;
		EXPECT(t->n_vars == 2 && t->n_refs == 1 && !strcmp(s->refs[0]->name, "ts0"),
		       "switch: vars %u refs %u", t->n_vars, t->n_refs);
		EXPECT(t->vars[0].n_terms == 2 && t->vars[0].terms[1].op.kind == HOP_REF &&
		       t->vars[0].terms[1].neg, "lat: %u terms", t->vars[0].n_terms);
		EXPECT(t->vars[1].terms[0].op.kind == HOP_FIELD && t->vars[1].terms[0].mul == 2 &&
		       t->vars[1].terms[0].div == 3 && t->vars[1].terms[1].mul == 4 &&
		       t->vars[1].terms[1].neg, "x: mul %llu div %llu",
		       (unsigned long long)t->vars[1].terms[0].mul,
		       (unsigned long long)t->vars[1].terms[0].div);
		EXPECT(t->n_params == 3 && t->params[0].src.kind == HOP_VAR &&
		       t->params[1].src.kind == HOP_FIELD && t->params[2].src.kind == HOP_STR &&
		       t->params[2].src.size == 16, "params %u", t->n_params);
		EXPECT(s->desc.key_size == 8, "key_size %u", s->desc.key_size);
		EXPECT(strstr(s->trigger, ":onmatch(sched.sched_waking).trace(wl,$lat,next_pid,"
			      "next_comm)"), "%s", s->trigger);
		EXPECT(!strstr(s->trigger, " if "), "%s", s->trigger);
	}
	release(w);
	release(s);
}

static void test_trigger_errors(void)
{
	size_t end;

	expect_error("sched:sched_switch", "hist:keys=next_pid:a=$a", 21,
		     "defined by this very expression");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=$b,b=1", 21, "after it");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=next_comm", 21,
		     "an expression takes numbers");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=next_pid/0", 30, "division by zero");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=next_pid/x", 30,
		     "expected a number after '/'");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=common_timestamp.log2", 38,
		     "expected no modifier here but .usecs");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=1:a=2", 23, "defined twice");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=nope", 21, "unknown field 'nope'");
	expect_error("sched:sched_switch", "hist:keys=next_pid:onmax(a).save(x)", 25,
		     "expected a variable of this trigger");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=1:onmax($b).save(next_comm)", 29,
		     "$b is not a variable of this trigger");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=1:onmax($a).trace(x,$a)", 33,
		     ".save(fields) and .snapshot() are");
	expect_error("sched:sched_switch", "hist:keys=next_pid:a=1:onmax($a).snapshot(x)", 42,
		     "snapshot() takes nothing");
	expect_error("sched:sched_switch", "hist:keys=next_pid:onmatch(sched.sched_waking).snapshot()",
		     47, "is not supported");
	expect_error("sched:sched_switch", "hist:keys=next_pid:onmatch(sched).x()", 32,
		     "expected '.' between the system and the event");
	expect_error("sched:sched_switch", "hist:keys=prev_comm,next_comm:a=1", 10,
		     "keys of up to 24 bytes");
	expect_error("sched:sched_switch", "hist:keys=next_pid.usecs", 19,
		     ".usecs applies to common_timestamp only");
	expect_error("sched:sched_switch", "hist:keys=next_pid:vals=common_timestamp.log2", 41,
		     "only .usecs does");
	/* The trailing filter: outside quotes and parentheses only. */
	EXPECT(hist_split_if("hist:keys=a if b == 1", &end) == 15 && end == 11, "end %zu", end);
	EXPECT(!hist_split_if("hist:keys=a:onmatch(x. if y).z()", &end), "split inside ()");
	EXPECT(hist_split_if("hist:keys=a if comm == \"a if b\"", &end) == 15, "quoted");
}

static const struct tp_event *synth_event;

static const struct tp_event *find_synth(void *userdata, const char *name, unsigned *index)
{
	(void)userdata;
	*index = 3;
	return synth_event && !strcmp(name, synth_event->name) ? synth_event : NULL;
}

/* hist_link(): a reference bound to the slot and variable that set it, the
 * setter told to keep its variables, the params to the synthetic event's
 * fields; and what cannot be bound, where it is written. */
static void test_trigger_link(void)
{
	struct hist *w = compile_ok("sched:sched_waking", "hist:keys=pid:x=1,ts0=common_timestamp");
	struct hist *s = compile_ok("sched:sched_switch", "hist:keys=next_pid:lat=common_timestamp"
				    "-$ts0:onmatch(sched.sched_waking).wl($lat,next_pid,next_comm)");
	struct hist_synth_finder f = { .find = find_synth };
	struct tp_synth_error err;
	struct tp_event *synth = NULL;
	struct diag d = { 0 };

	EXPECT(tp_synthetic_parse("wl u64 lat; pid_t pid; char comm[16]", TP_SYNTH_ID_FIRST + 3,
				  &synth, &err) == 0, "synthetic: %s", err.expected);
	synth_event = synth;
	if (w && s && synth) {
		struct hist_link_item items[] = {
			{ .h = w, .e = w->e, .slot = 7 }, { .h = s, .e = s->e, .slot = 9 },
		};
		const struct hist_trigger *t = &s->trig;

		EXPECT(hist_link(items, 2, &f, &d) == 0, "link: %s", d.msg);
		EXPECT(t->refs[0].slot == 7 && t->refs[0].var == 1, "ref: slot %u var %u",
		       t->refs[0].slot, t->refs[0].var);
		EXPECT(w->trig.store && !t->store, "store %u %u", w->trig.store, t->store);
		EXPECT(t->synth == 4 && t->synth_id == TP_SYNTH_ID_FIRST + 3 && t->synth_size == 24 + 256,
		       "synth %u id %u size %u", t->synth, t->synth_id, t->synth_size);
		EXPECT(t->params[0].off == 8 && t->params[1].off == 16 && t->params[1].size == 4 &&
		       t->params[2].off == 24, "param offsets %u %u %u", t->params[0].off,
		       t->params[1].off, t->params[2].off);
		/* The setter alone: the reference has nothing to bind to. */
		memset(&d, 0, sizeof(d));
		EXPECT(hist_link(items + 1, 1, &f, &d) < 0 && strstr(d.msg, "onmatch(sched."
		       "sched_waking): no selection's Aggregate= on sched:sched_waking sets variables"),
		       "%s", d.msg);
		synth_event = NULL;
		memset(&d, 0, sizeof(d));
		EXPECT(hist_link(items, 2, &f, &d) < 0 && strstr(d.msg, "no synthetic event wl"),
		       "%s", d.msg);
	}
	release(w);
	release(s);
	tp_event_free(synth);
}

static void test_syscall_and_hex(void)
{
	static const char *const names[] = { "sys_read", "sys_write" };
	struct hist *h = compile_ok("raw_syscalls:sys_enter", "hist:keys=id.syscall");
	char *out;

	if (!h)
		return;
	hist_syscall_names_set(names, ARRAY_SIZE(names));
	rec_num(&rec, "id", 1);
	fire();
	rec_num(&rec, "id", 400);
	fire();
	out = dump(h);
	EXPECT_STREQ(body(out),
		"{ id: sys_write                     [  1] } hitcount:          1\n"
		"{ id: unknown_syscall               [400] } hitcount:          1\n"
		"\nTotals:\n    Hits: 2\n    Entries: 2\n    Dropped: 0\n");
	free(out);
	release(h);
	h = compile_ok("kmem:kmalloc", "hist:keys=call_site.hex,gfp_flags.hex");
	if (!h)
		return;
	rec_num(&rec, "call_site", (int64_t)0xffffffff81234567ULL);
	rec_num(&rec, "gfp_flags", 0xcc0);
	fire();
	out = dump(h);
	/* a kernel address is hashed (8 hex digits after 8 zeros), a flag word not */
	EXPECT(strstr(out, "{ call_site: 00000000") && strstr(out, ", gfp_flags: cc0 }") &&
	       !strstr(out, "ffffffff81234567"), "%s", out);
	free(out);
	release(h);
}

/* --- common_stacktrace --- */
#define SYM(n) (0xffffffff81000000ULL + (n) * 0x100)
static const char test_kallsyms[] =
	"ffffffff81000000 T __traceiter_sched_switch\n"
	"ffffffff81000100 T __schedule\n"
	"ffffffff81000200 T schedule\n"
	"ffffffff81000300 T perf_syscall_enter\n"
	"ffffffff81000400 t do_syscall_64.isra.0\n"
	"ffffffff81000500 T _etext\n";

static void set_stack(size_t n, const __u64 *frames)
{
	memset(cur_stack, 0, sizeof(cur_stack));
	memcpy(cur_stack, frames, n * 8);
	cur_stack_err = 0;
}

/* As the daemon dumps it: keys made as the hist file shows them, merged.
 * The events of cut stacks go to *cut. */
static char *dump_canon_cut(const struct hist *h, bool raw, uint64_t *cut)
{
	static struct hist_entry v[ARRAY_SIZE(entries)];
	struct hist_dump d = { .v = v, .n = n_entries, .key_size =
			       tracerd_agg_map_bytes(h->desc.map) };
	struct strbuf out = { 0 };

	for (size_t i = 0; i < n_entries; i++)
		v[i] = (struct hist_entry){ .key = entries[i].key + sizeof(struct agg_key_hdr),
					    .hitcount = entries[i].v.hitcount };
	hist_stack_canon(h, &d);
	hist_sort_entries(h, d.v, d.n);
	hist_format(h, d.v, d.n, fake_budgets[2].dropped + fake_budgets[3].dropped,
		    &(struct hist_format_opts){ .raw_pointers = raw }, &out);
	*cut = d.stack_cut;
	return out.buf;
}

static char *dump_canon(const struct hist *h, bool raw)
{
	uint64_t cut;
	char *out = dump_canon_cut(h, raw, &cut);

	EXPECT(!cut, "%" PRIu64 " events counted cut", cut);
	return out;
}

/* The machinery's leading frames come off (__traceiter_ is there when the
 * tracepoint has several probes), stacks that differ only there are one
 * entry, the kernel's layout, no space before "}" after the frames. */
static void test_stack_key(void)
{
	struct hist *h = compile_ok("sched:sched_switch",
				    "hist:keys=stacktrace:sort=hitcount.descending");
	const __u64 via_iter[] = { SYM(0) + 0x37, SYM(1) + 0x28, SYM(2) + 0x23 };
	const __u64 direct[] = { SYM(1) + 0x28, SYM(2) + 0x23 };
	const __u64 syscall[] = { SYM(3) + 0x1d, SYM(4) + 0x10, 0xffffffff90000000ULL };
	char *out;

	if (!h)
		return;
	EXPECT(h->desc.map == AGG_MAP_LARGE && h->desc.key_size == TRACERD_HIST_STACK_FRAMES * 8, "key %u",
	       h->desc.key_size);
	EXPECT(strstr(h->trigger, "hist:keys=common_stacktrace:"), "%s", h->trigger);
	set_stack(3, via_iter);
	EXPECT(fire(), "not counted");
	fire();
	set_stack(2, direct);
	fire();
	set_stack(3, syscall);
	fire();
	EXPECT(n_entries == 3, "%zu entries in the map", n_entries);
	out = dump_canon(h, false);
	/* the last frame is in no symbol: hashed as %p */
	EXPECT(strstr(body(out),
		"{ common_stacktrace:\n"
		"         __schedule+0x28/0x100\n"
		"         schedule+0x23/0x100\n"
		"} hitcount:          3\n"
		"{ common_stacktrace:\n"
		"         do_syscall_64.isra.0+0x10/0x100\n"
		"         00000000") == body(out) && !strstr(out, "ffffffff9") &&
	       strstr(out, "\n} hitcount:          1\n\nTotals:\n    Hits: 4\n    Entries: 2\n"),
	       "%s", out);
	free(out);
	out = dump_canon(h, true);
	EXPECT(strstr(out, "         0xffffffff90000000\n} hitcount:          1\n"), "%s", out);
	free(out);
	release(h);
}

/* Deeper than the depth: 16 frames and a line that says it was cut, and
 * its events counted (stack_cut); 17 frames under __traceiter_ are 16 from
 * the caller on, whole. A stack the kernel could not give is Dropped,
 * never an empty key. */
static void test_stack_cut_and_none(void)
{
	struct hist *h = compile_ok("sched:sched_switch", "hist:keys=common_stacktrace,prev_pid");
	__u64 deep[TRACERD_HIST_STACK_FRAMES + 4], whole[TRACERD_HIST_STACK_DEPTH];
	__u64 iter17[TRACERD_HIST_STACK_DEPTH + 1];
	uint64_t cut;
	char *out;

	if (!h)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(deep); i++)
		deep[i] = SYM(2) + i;
	for (size_t i = 0; i < ARRAY_SIZE(whole); i++)
		whole[i] = SYM(1) + i;
	iter17[0] = SYM(0) + 0x37;
	for (size_t i = 1; i < ARRAY_SIZE(iter17); i++)
		iter17[i] = SYM(1) + 0x40 + i;
	rec_num(&rec, "prev_pid", 7);
	memcpy(cur_stack, deep, sizeof(cur_stack));
	cur_stack_err = 0;
	fire();
	fire();
	set_stack(ARRAY_SIZE(whole), whole);
	fire();
	set_stack(ARRAY_SIZE(iter17), iter17);
	fire();
	cur_stack_err = -14;	/* EFAULT */
	EXPECT(!fire(), "counted without a stack");
	out = dump_canon_cut(h, false, &cut);
	EXPECT(strstr(out, "         schedule+0xf/0x100\n         ... (cut at 16 frames)\n, "
			   "prev_pid:          7} hitcount:          2\n") &&
	       !strstr(out, "schedule+0x10/") &&
	       strstr(out, "         __schedule+0xf/0x100\n, prev_pid:          7}") &&
	       strstr(out, "         __schedule+0x50/0x100\n, prev_pid:          7}") &&
	       strstr(out, "Hits: 5\n    Entries: 3\n    Dropped: 1\n"), "%s", out);
	EXPECT(cut == 2, "%" PRIu64 " events counted cut, not the 2 of the deep stack", cut);
	free(out);
	release(h);
	expect_error("sched:sched_switch", "hist:keys=common_stacktrace.hex", 28, "takes no modifier");
}

/* keys=common_stacktrace alone: counted under the stack's id in the small
 * map; where bpf_get_stackid() gives none (its bucket taken, the map full),
 * under the frames in the large map; no stack at all is Dropped. */
static void test_stack_ids(void)
{
	struct hist *h = compile_ok("sched:sched_switch", "hist:keys=common_stacktrace");
	struct hist *h2 = compile_ok("sched:sched_switch", "hist:keys=common_stacktrace,prev_pid");
	const __u64 a[] = { SYM(1) + 0x28, SYM(2) + 0x23 }, b[] = { SYM(2) + 0x10 };
	struct agg_key_small k = { .hdr = { .slot = 1 } };
	struct agg_key_large kl = { .hdr = { .slot = 1 } };
	struct agg_value *v;

	if (!h || !h2)
		return;
	EXPECT(h->desc.stack_ids && !h2->desc.stack_ids, "stack_ids %u %u", h->desc.stack_ids,
	       h2->desc.stack_ids);
	fake_descs[1] = h->desc;
	n_entries = n_id_stacks = 0;
	cur_stackid_err = 0;
	set_stack(2, a);
	fire();
	fire();
	set_stack(1, b);
	fire();
	cur_stackid_err = -17;	/* EEXIST: b's bucket held by another stack */
	fire();
	cur_stackid_err = 0;
	cur_stack_err = -14;
	EXPECT(!fire(), "counted without a stack");
	cur_stack_err = 0;
	EXPECT(n_entries == 3 && n_id_stacks == 2, "%zu entries, %zu ids", n_entries, n_id_stacks);
	*(__u64 *)k.data = 0;
	v = bpf_map_lookup_elem(&agg_small, &k);
	EXPECT(v && v->hitcount == 2 && !memcmp(id_stacks[0], a, sizeof(a)) && !id_stacks[0][2],
	       "id 0: %" PRIu64, v ? (uint64_t)v->hitcount : 0);
	*(__u64 *)k.data = 1;
	v = bpf_map_lookup_elem(&agg_small, &k);
	EXPECT(v && v->hitcount == 1, "id 1: %" PRIu64, v ? (uint64_t)v->hitcount : 0);
	memcpy(kl.data, b, sizeof(b));
	v = bpf_map_lookup_elem(&agg_large, &kl);
	EXPECT(v && v->hitcount == 1, "b under its frames: %" PRIu64, v ? (uint64_t)v->hitcount : 0);
	EXPECT(fake_budgets[2].entries == 3 && fake_budgets[2].dropped == 1, "budget %u, dropped %" PRIu64,
	       (unsigned)fake_budgets[2].entries, (uint64_t)fake_budgets[2].dropped);
	cur_stackid_err = -17;
	release(h2);
	release(h);
}

int main(void)
{
	char kallsyms[] = "/tmp/tracerd-test-kallsyms-XXXXXX";
	int fd = mkstemp(kallsyms);

	/* read once, at the first symbol looked up */
	if (fd < 0 || write(fd, test_kallsyms, sizeof(test_kallsyms) - 1) < 0)
		return 1;
	close(fd);
	setenv("TRACERD_KALLSYMS", kallsyms, 1);
	fixtures_load();
	RUN(test_string_key);
	RUN(test_symbolic_and_numeric_keys);
	RUN(test_log2_and_sums);
	RUN(test_buckets_execname_comm);
	RUN(test_data_loc_key);
	RUN(test_short_strings);
	RUN(test_overflow);
	RUN(test_errors);
	RUN(test_timestamp);
	RUN(test_trigger_compile);
	RUN(test_trigger_errors);
	RUN(test_trigger_link);
	RUN(test_syscall_and_hex);
	RUN(test_stack_key);
	RUN(test_stack_cut_and_none);
	RUN(test_stack_ids);
	fixtures_free();
	unlink(kallsyms);
	return TEST_EXIT();
}
