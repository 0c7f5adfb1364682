// SPDX-License-Identifier: GPL-2.0
/* The filter parser and compiler on events of this kernel (the captured
 * formats), and the bytecode they emit run by the BPF interpreter itself:
 * bpf/filter.bpf.h built for userspace, as --read runs it (store_filter.c). */
#include <linux/types.h>
#include <stdbool.h>
#include "filter/filter.h"
#include "store/store_filter.h"
#include "kernel-events/symbols.h"
#include "tracerd_record.h"
#include "fixtures.h"
#include "records.h"
#include "test.h"

static const __u32 TID = 4242;
/* The task the filter runs in: its comm, cpu and pid. */
static struct trace_rec_hdr task = { .cpu = 1, .pid = TID, .tid = TID, .comm = "bash" };

static struct rec rec;

/* What the class program rebuilds: common_type and common_pid. */
static void new_rec(const struct tp_event *e)
{
	rec_init(&rec, e);
	rec_num(&rec, "common_pid", TID);
}

static struct conf_pos pos = { .file = "t.conf", .line = 3, .col = 8, .source = NULL };

static int compile(const char *expr, struct event_desc *d, struct diag *dg)
{
	memset(d, 0, sizeof(*d));
	memset(dg, 0, sizeof(*dg));
	return filter_compile(expr, rec.e, &pos, d, dg);
}

/* The class program runs a filter of nonzero filter_span on that prefix of
 * the record alone: what lies past it must not change the outcome. */
static int eval_prefix(const struct event_desc *d)
{
	static __u8 prefix[2 * TRACERD_MAX_RECORD] __attribute__((aligned(8)));

	EXPECT(d->filter_span >= 8 && d->filter_span <= rec.e->fixed_size,
	       "filter_span %u: not within 8..%u", d->filter_span, rec.e->fixed_size);
	memset(prefix, 0xa5, sizeof(prefix));
	memcpy(prefix, rec.data, d->filter_span);
	return store_filter_run(d, &task, prefix, d->filter_span);
}

/* 1 if the record passes, 0 if not, -1 if expr does not compile. */
static int eval(const char *expr)
{
	struct event_desc d;
	struct diag dg;
	int r;

	if (compile(expr, &d, &dg) < 0) {
		printf("#   '%s': %s\n", expr, dg.msg);
		return -1;
	}
	if (!d.n_insns)
		return 1;
	r = store_filter_run(&d, &task, rec.data, rec.len);
	if (d.filter_span)
		EXPECT(eval_prefix(&d) == r, "'%s' on its prefix of %u bytes: %d, not %d",
		       expr, d.filter_span, !r, r);
	return r;
}

#define MATCH(expr, want) EXPECT(eval(expr) == (want), "'%s' should %s", expr, \
				 (want) ? "match" : "not match")

static struct tp_event *ev(const char *name)
{
	struct tp_event *e = fixture_event(name);

	EXPECT(e, "no fixture %s", name);
	if (e)
		new_rec(e);
	return e;
}

static void switch_record(void)
{
	rec_str(&rec, "prev_comm", "bash");
	rec_num(&rec, "prev_pid", 1);
	rec_num(&rec, "prev_prio", 120);
	rec_num(&rec, "prev_state", 2);
	rec_str(&rec, "next_comm", "kworker/0:1");
	rec_num(&rec, "next_pid", 2);
	rec_num(&rec, "next_prio", 100);
}

static void precedence(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");
	struct event_desc d;
	struct diag dg;
	/* a, ||: skip 3, b, &&: skip 1, c */
	static const __u8 code[] = { FOP_CMP, FOP_ORSC, FOP_CMP, FOP_ANDSC, FOP_CMP };

	if (!e)
		return;
	switch_record();
	/* && binds tighter than ||, both left to right */
	MATCH("prev_pid == 1 || next_pid == 3 && prev_prio == 0", 1);
	MATCH("prev_pid == 0 && next_pid == 2 || prev_prio == 120", 1);
	MATCH("prev_pid == 0 || next_pid == 2 && prev_prio == 121", 0);
	MATCH("(prev_pid == 1 || next_pid == 3) && prev_prio == 0", 0);
	MATCH("prev_pid == 0 && (next_pid == 2 || prev_prio == 120)", 0);
	MATCH("prev_pid == 1 && next_pid == 2 && prev_prio == 120 && next_prio == 100", 1);
	MATCH("prev_pid == 0 || next_pid == 0 || prev_prio == 0 || next_prio == 100", 1);
	/* ! applies to the next predicate or parenthesis */
	MATCH("!prev_pid == 1", 0);
	MATCH("!prev_pid == 0", 1);
	MATCH("!prev_pid == 0 && next_pid == 0", 0);
	MATCH("!(prev_pid == 0 && next_pid == 0)", 1);
	MATCH("!!prev_pid == 1", 1);
	MATCH("!(prev_pid == 1 || next_pid == 3)", 0);
	MATCH("  ((( prev_pid==1 )))  ", 1);
	MATCH("", 1);
	MATCH("   ", 1);
	EXPECT(compile("prev_pid == 1 || next_pid == 3 && prev_prio == 0", &d, &dg) == 0 &&
	       d.n_insns == sizeof(code) && !memcmp((__u8[]){ d.insns[0].op, d.insns[1].op,
	       d.insns[2].op, d.insns[3].op, d.insns[4].op }, code, sizeof(code)) &&
	       d.insns[1].imm == 3 && d.insns[3].imm == 1, "a || b && c is a ||3 b &&1 c");
	/* a chain skips to its end at the first operand that decides */
	EXPECT(compile("prev_pid == 1 && next_pid == 3 && prev_prio == 0", &d, &dg) == 0 &&
	       d.n_insns == 5 && d.insns[1].op == FOP_ANDSC && d.insns[1].imm == 3 &&
	       d.insns[3].op == FOP_ANDSC && d.insns[3].imm == 1, "a && b && c is a &&3 b &&1 c");
	EXPECT(compile("(prev_pid == 1 || next_pid == 3) || prev_prio == 0", &d, &dg) == 0 &&
	       d.n_insns == 5 && d.insns[1].op == FOP_ORSC && d.insns[1].imm == 3,
	       "(a || b) || c is a ||3 b ||1 c");
}

/* The prefix the class program copies before it runs the filter, and the
 * filters it runs as plain chains of compares. */
static void spans(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");
	_cleanup_(tp_event_freep) struct tp_event *x = NULL;
	const struct tp_field *pid, *comm;
	struct event_desc d;
	struct diag dg;

	if (!e)
		return;
	pid = tp_event_field(e, "next_pid");
	comm = tp_event_field(e, "next_comm");
	EXPECT(compile("next_pid == 1", &d, &dg) == 0 && d.filter_span == pid->offset + 4,
	       "next_pid: span %u", d.filter_span);
	EXPECT(compile("prev_pid == 1 || next_comm == \"x\"", &d, &dg) == 0 &&
	       d.filter_span == comm->offset + comm->size, "next_comm: span %u", d.filter_span);
	EXPECT(compile("common_pid == 1 || cpu == 0 || comm ~ \"b*\"", &d, &dg) == 0 &&
	       d.filter_span == 8, "outside the record: span %u", d.filter_span);
	/* chains of numeric compares, one operator: run without the stack machine */
	EXPECT(compile("prev_pid == 1 || next_pid in (2, 3) || cpu == 1", &d, &dg) == 0 &&
	       d.filter_chain == FOP_ORSC, "|| chain: %u", d.filter_chain);
	EXPECT(compile("prev_pid == 1 && next_pid != 2 && common_pid > 1", &d, &dg) == 0 &&
	       d.filter_chain == FOP_ANDSC, "&& chain: %u", d.filter_chain);
	EXPECT(compile("next_pid in (2, 3) && prev_pid == 1", &d, &dg) == 0 && !d.filter_chain,
	       "in (...) in an && chain: %u", d.filter_chain);
	EXPECT(compile("prev_pid == 1 && next_pid == 2 || cpu == 1", &d, &dg) == 0 &&
	       !d.filter_chain, "&& then ||: %u", d.filter_chain);
	EXPECT(compile("!prev_pid == 1 || next_pid == 2", &d, &dg) == 0 && !d.filter_chain,
	       "!: %u", d.filter_chain);
	EXPECT(compile("prev_pid == 1 || next_comm == \"x\"", &d, &dg) == 0 && !d.filter_chain,
	       "strings: %u", d.filter_chain);
	EXPECT(compile("prev_pid == 1", &d, &dg) == 0 && !d.filter_chain, "one compare: %u",
	       d.filter_chain);
	switch_record();	/* prev_pid 1, next_pid 2, prev_prio 120, next_prio 100 */
	MATCH("prev_pid in (1, 7) || next_pid == 9", 1);
	MATCH("prev_pid in (7, 1) || next_pid == 9", 1);
	MATCH("prev_pid in (7, 8) || next_pid == 9 || next_prio in (5, 100)", 1);
	MATCH("prev_pid in (7, 8) || next_pid == 9 || next_prio in (5, 101)", 0);
	MATCH("prev_pid == 1 && next_pid == 2 && prev_prio == 120 && next_prio == 100", 1);
	MATCH("prev_pid == 1 && next_pid == 2 && prev_prio == 120 && next_prio == 101", 0);
	MATCH("prev_pid == 1 && next_pid == 3 && prev_prio == 120 && next_prio == 100", 0);
	MATCH("prev_pid == 0 || next_pid == 0 || prev_prio == 0 || next_prio == 0", 0);
	MATCH("prev_pid == 0 || next_pid == 2 || prev_prio == 0 || next_prio == 0", 1);
	x = ev("sched:sched_process_exec");	/* __data_loc char[] filename */
	EXPECT(x && compile("pid == 1 || filename ~ \"/bin/*\"", &d, &dg) == 0 &&
	       d.filter_span == 0, "__data_loc: span %u, not 0 (the whole record)", d.filter_span);
}

static void numeric_operators(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");

	if (!e)
		return;
	switch_record();
	rec_num(&rec, "prev_pid", -5);
	MATCH("prev_pid == -5", 1);
	MATCH("prev_pid != -5", 0);
	MATCH("prev_pid < -4", 1);
	MATCH("prev_pid < -5", 0);
	MATCH("prev_pid <= -5", 1);
	MATCH("prev_pid > -6", 1);
	MATCH("prev_pid > -5", 0);
	MATCH("prev_pid >= -5", 1);
	MATCH("prev_pid < 0", 1);	/* signed: -5 is below 0 */
	MATCH("prev_state & 2", 1);
	MATCH("prev_state & 5", 0);
	MATCH("prev_state &= 2", 1);
	MATCH("prev_state &= 3", 0);
	MATCH("prev_state & 0x3", 1);
	MATCH("next_prio == 0144", 1);	/* octal, as the kernel's kstrtoull */
	MATCH("next_prio == 0x64", 1);
	MATCH("next_prio in (1, 100, 7)", 1);
	MATCH("next_prio in (1, 7)", 0);
	MATCH("next_prio in (100)", 1);
	MATCH("common_pid == 4242", 1);
	MATCH("cpu == 1 && CPU == 1 && common_cpu != 0", 1);
	rec_num(&rec, "prev_state", -1);
	MATCH("prev_state == -1 && prev_state < 0", 1);
	MATCH("prev_state & 0xffffffffffffffff", 1);
}

/* Widths and signedness come from the format. */
static void widths(void)
{
	_cleanup_(tp_event_freep) struct tp_event *a = ev("amd_cpu:amd_pstate_perf");
	_cleanup_(tp_event_freep) struct tp_event *t = NULL;

	if (!a)
		return;
	rec_num(&rec, "min_perf", 255);	/* u8 */
	MATCH("min_perf == 255 && min_perf > 254 && min_perf > 0", 1);
	rec_num(&rec, "freq", (int64_t)0x8000000000000000ull);	/* unsigned long long */
	MATCH("freq > 1", 1);
	MATCH("freq == 0x8000000000000000", 1);
	MATCH("freq == 9223372036854775808", 1);
	MATCH("freq < 18446744073709551615", 1);
	t = ev("task:task_newtask");
	if (!t)
		return;
	rec_num(&rec, "oom_score_adj", -1000);	/* short */
	MATCH("oom_score_adj == -1000 && oom_score_adj < -999", 1);
	MATCH("oom_score_adj > 0", 0);
	rec_num(&rec, "clone_flags", 0x1200011);
	MATCH("clone_flags &= 0x1200011", 1);
	MATCH("clone_flags &= 0x1200111", 0);
	MATCH("clone_flags & 0x100", 0);
}

static void strings(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");
	_cleanup_(tp_event_freep) struct tp_event *x = NULL;

	if (!e)
		return;
	switch_record();
	MATCH("prev_comm == \"bash\"", 1);
	MATCH("prev_comm == 'bash'", 1);
	MATCH("prev_comm == bash", 1);		/* unquoted, as the kernel takes */
	MATCH("prev_comm == \"bas\"", 0);
	MATCH("prev_comm == \"bashx\"", 0);
	MATCH("prev_comm != \"bash\"", 0);
	MATCH("prev_comm != \"zsh\"", 1);
	MATCH("prev_comm in (zsh, bash)", 1);
	MATCH("prev_comm in (zsh, fish)", 0);
	MATCH("next_comm ~ \"kworker/*\"", 1);
	MATCH("next_comm ~ \"*:1\"", 1);
	MATCH("next_comm ~ \"*work*\"", 1);
	MATCH("next_comm ~ \"kworker/?:?\"", 1);
	MATCH("next_comm ~ \"kworker/??:?\"", 0);
	MATCH("next_comm ~ \"k[a-z]orker*\"", 1);
	MATCH("next_comm ~ \"k[!w]orker*\"", 0);
	MATCH("next_comm ~ \"k[!a-v]orker*\"", 1);
	MATCH("next_comm ~ \"*[0-9]\"", 1);
	MATCH("next_comm ~ \"*[]:]1\"", 1);	/* ']' first in a class is a member */
	MATCH("next_comm ~ \"kworker\"", 0);
	MATCH("next_comm ~ \"*\"", 1);
	MATCH("next_comm ~ \"**0*\"", 1);
	MATCH("next_comm ~ \"*o*o*\"", 0);
	MATCH("next_comm ~ \"*o*r*\"", 1);
	MATCH("prev_comm ~ \"ba\\sh\"", 1);	/* \ escapes */
	rec_str(&rec, "prev_comm", "a*b");
	MATCH("prev_comm ~ \"a\\*b\"", 1);
	MATCH("prev_comm == \"a*b\"", 1);	/* == takes no metacharacters */
	rec_str(&rec, "prev_comm", "axb");
	MATCH("prev_comm ~ \"a\\*b\"", 0);
	MATCH("prev_comm == \"a*b\"", 0);
	MATCH("prev_comm ~ \"a*b\"", 1);
	rec_str(&rec, "prev_comm", "");
	MATCH("prev_comm == \"\"", 1);
	MATCH("prev_comm ~ \"?*\"", 0);
	rec_str(&rec, "prev_comm", "0123456789abcde");	/* 15 bytes and the NUL */
	MATCH("prev_comm == \"0123456789abcde\"", 1);
	MATCH("prev_comm ~ \"*e\"", 1);
	/* comm: the current task's, not a record field */
	memcpy(task.comm, "tracerd\0\0\0\0\0\0\0\0", 16);
	MATCH("comm == tracerd && COMM ~ \"tr*\"", 1);
	MATCH("comm ~ \"*d\" && !(comm ~ \"*e\")", 1);
	x = ev("sched:sched_process_exec");	/* __data_loc char[] filename */
	if (!x)
		return;
	rec_num(&rec, "pid", 7);
	rec_str(&rec, "filename", "/usr/bin/true");
	MATCH("filename == \"/usr/bin/true\"", 1);
	MATCH("filename == \"/usr/bin/tru\"", 0);
	MATCH("filename ~ \"/usr/*\" && pid == 7", 1);
	MATCH("filename ~ \"*/t?ue\"", 1);
	MATCH("filename ~ \"*/[st]rue\" || filename ~ \"*x\"", 1);
	MATCH("filename != \"/bin/true\"", 1);
}

/* __rel_loc (offset from the end of the loc word; no event of this kernel
 * has one) and a __data_loc string cut short by a truncated record. */
static const char rel_loc_format[] =
	"name: rel_test\nID: 9999\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__rel_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] path;\toffset:12;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"name=%s\", __get_rel_str(name)\n";

static void rel_loc_and_truncated(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = NULL;

	EXPECT(tp_format_parse(rel_loc_format, &e, NULL) == 0, "parse");
	if (!e)
		return;
	new_rec(e);
	memcpy(rec.data + 16, "eth0", 5);
	*(__u32 *)(rec.data + 8) = 5 << 16 | (16 - 12);	/* relative to offset 12 */
	memcpy(rec.data + 21, "/a/very/long/path", 18);
	*(__u32 *)(rec.data + 12) = 18 << 16 | 21;
	rec.len = 39;
	MATCH("name == eth0 && name ~ \"eth?\"", 1);
	MATCH("path == \"/a/very/long/path\"", 1);
	rec.len = 30;	/* the BPF side copied only this much */
	MATCH("path == \"/a/very/long/path\"", 0);
	MATCH("path ~ \"/a/very*\"", 1);
	*(__u32 *)(rec.data + 12) = 18 << 16 | 4000;	/* beyond the record */
	MATCH("path == \"\"", 1);
	MATCH("path ~ \"?*\"", 0);
}

static void dev_t_fields(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("block:block_rq_issue");

	if (!e)
		return;
	rec_num(&rec, "dev", 7 << 20 | 3);
	rec_str(&rec, "rwbs", "WS");
	rec_str(&rec, "cmd", "");
	MATCH("dev == 7:3", 1);
	MATCH("dev == 7:2", 0);
	MATCH("dev != 254:0 && dev in (8:0, 7:3)", 1);
	MATCH("dev == 7340035", 1);
	MATCH("rwbs ~ \"W*\" && rwbs != \"W\"", 1);
	MATCH("cmd == \"\"", 1);
}

/* Symbols from the field's own print fmt table. */
static bool have_symbols(const struct tp_event *e, const char *field)
{
	tp_event_load_symbols((struct tp_event *)e);
	return tp_event_symtab(e, field);
}

static void symbolic_table(void)
{
	_cleanup_(tp_event_freep) struct tp_event *s = ev("irq:softirq_entry");
	_cleanup_(tp_event_freep) struct tp_event *t = NULL;

	if (!s)
		return;
	rec_num(&rec, "vec", 3);
	MATCH("vec == NET_RX", 1);
	MATCH("vec in (TIMER, RCU)", 0);
	MATCH("vec in (TIMER, NET_RX, 9)", 1);
	MATCH("vec != HI && vec < BLOCK", 1);
	t = ev("sock:inet_sock_set_state");
	if (!t)
		return;
	rec_num(&rec, "newstate", 7);
	rec_num(&rec, "oldstate", 2);
	MATCH("newstate == TCP_CLOSE && oldstate == TCP_SYN_SENT", 1);
	MATCH("family == AF_INET6", 0);
}

static void flags_table(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("kmem:mm_page_alloc");

	if (!e)
		return;
	rec_num(&rec, "gfp_flags", 0x100 | 0x400);
	MATCH("gfp_flags & __GFP_ZERO", 1);
	MATCH("gfp_flags &= __GFP_ZERO", 1);
	MATCH("gfp_flags & __GFP_HIGHMEM", 0);
}

/* The issue's own example: sched_switch's prev_state through its table. */
static void prev_state_table(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");

	if (!e)
		return;
	switch_record();	/* prev_state 2: D */
	MATCH("prev_state & D", 1);
	MATCH("prev_state & S", 0);
	MATCH("prev_state in (S, D)", 1);
}

struct error_case {
	const char *event, *expr;
	int off;		/* in expr, 0-based */
	const char *msg;	/* the start of the message */
};

static const struct error_case errors[] = {
	{ "sched:sched_switch", "prev_pid ==", 11, "expected a value: a number, a symbol or a string" },
	{ "sched:sched_switch", "prev_pid 1", 9, "expected an operator: ==, !=, <, <=, >, >=, &, &=, ~ or in" },
	{ "sched:sched_switch", "prev_pid = 1", 9, "expected an operator: ==, !=, <, <=, >, >=, &, &=, ~ or in (comparing is '==')" },
	{ "sched:sched_switch", "== 1", 0, "expected a field name, '!' or '('" },
	{ "sched:sched_switch", "prev_pid == 1 &&", 16, "expected a field name, '!' or '(' before the end of the filter" },
	{ "sched:sched_switch", "(prev_pid == 1", 14, "expected ')' to close the '(' at column 8" },
	{ "sched:sched_switch", "prev_pid == 1 || (next_pid == 2", 31, "expected ')' to close the '(' at column 25" },
	{ "sched:sched_switch", "prev_pid == 1)", 13, "unbalanced ')': expected '&&', '||' or the end of the filter" },
	{ "sched:sched_switch", "prev_pid == 1 next_pid == 2", 14, "expected '&&', '||' or the end of the filter" },
	{ "sched:sched_switch", "prev_pid == 1 & next_pid == 2", 14, "expected '&&', '||' or the end of the filter" },
	{ "sched:sched_switch", "prev_comm == \"bash", 13, "unterminated string: expected a closing \"" },
	{ "sched:sched_switch", "prev_pid in 1", 12, "expected '(' after 'in'" },
	{ "sched:sched_switch", "prev_pid in (1, 2", 17, "expected ',' or ')' to close the '(' at column 20" },
	{ "sched:sched_switch", "prev_pid in ()", 13, "expected a value" },
	{ "sched:sched_switch", "nosuch == 1", 0, "unknown field 'nosuch' in sched:sched_switch; its fields are: prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio, common_pid, common_type, comm, cpu" },
	{ "sched:sched_switch", "prev_pid == 1 && common_flags & 1", 17, "common_flags is not available" },
	{ "filelock:fcntl_setlk", "common_stacktrace == 1", 0, "common_stacktrace is the event's call path: a key of Aggregate=" },
	{ "sched:sched_switch", "common_preempt_count > 0", 0, "common_preempt_count is not available" },
	{ "sched:sched_switch", "prev_pid ~ \"1*\"", 9, "'~' is a glob and needs a string; prev_pid is a number (pid_t)" },
	{ "sched:sched_switch", "cpu ~ 1", 4, "'~' is a glob and needs a string; cpu is a number (int)" },
	{ "sched:sched_switch", "prev_comm < \"a\"", 10, "prev_comm is a string (char[16]): expected ==, !=, ~ or in, not '<'" },
	{ "sched:sched_switch", "comm & 1", 5, "comm is a string (char[16]): expected ==, !=, ~ or in, not '&'" },
	{ "sched:sched_switch", "prev_pid == \"1\"", 12, "expected a number for prev_pid (pid_t), not a string" },
	{ "sched:sched_switch", "prev_pid == 12x", 12, "expected a number for prev_pid (pid_t), not '12x'" },
	{ "sched:sched_switch", "prev_pid == 2147483648", 12, "2147483648 is out of range for prev_pid (pid_t: -2147483648..2147483647)" },
	{ "sched:sched_switch", "prev_pid == -2147483649", 12, "-2147483649 is out of range for prev_pid" },
	{ "sched:sched_switch", "prev_pid == 99999999999999999999", 12, "expected a number for prev_pid (pid_t), not '99999999999999999999'" },
	{ "amd_cpu:amd_pstate_perf", "min_perf == 256", 12, "256 is out of range for min_perf (u8: 0..255)" },
	{ "amd_cpu:amd_pstate_perf", "min_perf > -1", 11, "-1 is out of range for min_perf (u8, unsigned: 0..255)" },
	{ "task:task_newtask", "oom_score_adj == 32768", 17, "32768 is out of range for oom_score_adj (short: -32768..32767)" },
	{ "task:task_newtask", "oom_score_adj & 0x10000", 16, "0x10000 is out of range for oom_score_adj (short: -32768..65535)" },
	{ "block:block_rq_issue", "dev == 4096:0", 7, "major 4096 is out of range (0..4095)" },
	{ "block:block_rq_issue", "dev == 7:1048576", 7, "minor 1048576 is out of range (0..1048575)" },
	{ "block:block_rq_issue", "sector == 7:0", 10, "MAJOR:MINOR needs a dev_t field; sector is sector_t" },
	{ "sched:sched_switch", "prev_comm ~ \"x[ab\"", 14, "unterminated '[' in a glob: expected ']'" },
	{ "sched:sched_switch", "prev_comm ~ 'ab\\'", 15, "a '\\' at the end of a glob: expected a character to escape" },
	{ "sched:sched_switch", "prev_comm == \"0123456789abcdef\"", 14, "'0123456789abcdef' is longer than prev_comm (char[16]) can hold" },
	{ "sched:sched_process_exec", "filename == \"0123456789012345678901234567890123456789012345678901234567890123\"", 13, "string of 64 bytes: at most 63" },
	{ "sched:sched_process_exec", "filename in (a, b, c, d, e, f, g, h, i)", 37, "more than 8 different strings in one filter" },
	{ "sock:inet_sock_set_state", "newstate == 1 || saddr == 1", 17, "saddr is __u8[4], an array: a filter compares numbers and strings only" },
	{ "sched:sched_switch", "prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1 || prev_pid == 1", 556, "filter too long for sched:sched_switch: more than 64 instructions" },
	{ "sched:sched_switch", "((((((((((((((((((((((((((((((((((prev_pid == 1))))))))))))))))))))))))))))))))))", 32, "nested too deep: at most 32 levels of '(' and '!'" },
	{ "sched:sched_switch", "prev_pid == 1 && @", 17, "expected a field name, '!' or '('" },
};

static void error_messages(void)
{
	static const char source[] = "Filter=...";

	pos.source = (char *)source;
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++) {
		_cleanup_(tp_event_freep) struct tp_event *e = fixture_event(errors[i].event);
		struct event_desc d;
		struct diag dg;
		int r;

		if (!e) {
			EXPECT(0, "no fixture %s", errors[i].event);
			continue;
		}
		new_rec(e);
		r = compile(errors[i].expr, &d, &dg);
		EXPECT(r == -EINVAL && d.n_insns == 0, "'%s' compiled (%d)", errors[i].expr, r);
		EXPECT(!strncmp(dg.msg, errors[i].msg, strlen(errors[i].msg)),
		       "'%s': got '%s', want '%s'", errors[i].expr, dg.msg, errors[i].msg);
		EXPECT(dg.col == pos.col + errors[i].off, "'%s': column %d, want %d", errors[i].expr,
		       dg.col, pos.col + errors[i].off);
		EXPECT(dg.line == 3 && !strcmp(dg.file, "t.conf") && !strcmp(dg.source, source),
		       "'%s': position %s:%d '%s'", errors[i].expr, dg.file, dg.line, dg.source);
	}
	pos.source = NULL;
}

/* Without a symbol table a name is no number; with one, an unknown name
 * lists the table. */
static void symbol_errors(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");
	struct event_desc d;
	struct diag dg;

	if (!e)
		return;
	EXPECT(compile("prev_pid == FOO", &d, &dg) == -EINVAL && dg.col == 8 + 12 &&
	       strstr(dg.msg, "expected a number for prev_pid (pid_t): 'FOO' is not one, and "
		      "prev_pid has no __print_flags or __print_symbolic table"), "got %d '%s'",
	       dg.col, dg.msg);
	if (!have_symbols(e, "prev_state"))
		return;
	EXPECT(compile("prev_state & Q", &d, &dg) == -EINVAL && dg.col == 8 + 13 &&
	       !strncmp(dg.msg, "unknown symbol 'Q' for prev_state: expected a number or one of: ", 64) &&
	       strstr(dg.msg, "D"), "got %d '%s'", dg.col, dg.msg);
}

static void limits(void)
{
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");
	char expr[600] = "prev_pid in (0";
	struct event_desc d;
	struct diag dg;
	int off = 0;

	if (!e)
		return;
	for (int i = 1; i < 65; i++) {
		off = strlen(expr) + 2;
		snprintf(expr + strlen(expr), sizeof(expr) - strlen(expr), ", %d", i);
	}
	strcat(expr, ")");
	EXPECT(compile(expr, &d, &dg) == -EINVAL && dg.col == pos.col + off &&
	       !strcmp(dg.msg, "filter too long: more than 64 values"), "got %d '%s'", dg.col, dg.msg);
}

/* Token soup: every expression compiles or fails with a column inside it. */
static void token_soup(void)
{
	static const char *const toks[] = {
		"prev_pid", "prev_comm", "comm", "cpu", "nosuch", "==", "!=", "<", "<=", ">", ">=",
		"&", "&=", "~", "in", "(", ")", ",", "!", "&&", "||", "1", "-1", "0x", "7:3",
		"\"a*\"", "'[a-\"", "\"\\\"", "D", "\"", "x[", " ", "99999999999999999999",
	};
	_cleanup_(tp_event_freep) struct tp_event *e = ev("sched:sched_switch");
	unsigned seed = 1, ok = 0;

	if (!e)
		return;
	for (int n = 0; n < 20000; n++) {
		char expr[256] = "";
		struct event_desc d;
		struct diag dg;
		int len = 1 + (seed = seed * 1103515245 + 12345) % 12, r;

		for (int i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			strcat(expr, toks[(seed >> 8) % ARRAY_SIZE(toks)]);
			strcat(expr, (seed >> 4) & 1 ? " " : "");
		}
		r = compile(expr, &d, &dg);
		ok += r == 0;
		EXPECT(r == 0 || (r == -EINVAL && dg.col >= pos.col &&
				  dg.col <= pos.col + (int)strlen(expr) && dg.msg[0]),
		       "'%s': %d col %d '%s'", expr, r, dg.col, dg.msg);
		EXPECT(r < 0 || d.n_insns <= TRACERD_FILTER_INSNS, "'%s'", expr);
		if (test_failed_now)
			break;
	}
	printf("# token soup: %u of 20000 compiled\n", ok);
}

/* Every field of every event of this kernel compiles, or is refused as an
 * array; and any filter_compile() error carries a column. */
static void every_field_of_every_event(void)
{
	size_t fields = 0, arrays = 0;

	for (size_t i = 0; i < n_fixtures; i++) {
		_cleanup_(tp_event_freep) struct tp_event *e = NULL;

		if (tp_format_parse(fixtures[i].text, &e, NULL) < 0)
			continue;
		new_rec(e);
		for (size_t k = 0; k < e->n_fields; k++) {
			const struct tp_field *f = &e->fields[k];
			char expr[300];
			struct event_desc d;
			struct diag dg;
			int r;

			if (!strcmp(f->name, "common_flags") || !strcmp(f->name, "common_preempt_count"))
				continue;
			snprintf(expr, sizeof(expr), f->is_string ? "%s ~ \"a*\"" : "%s != 0", f->name);
			r = compile(expr, &d, &dg);
			fields++;
			if (r < 0 && strstr(dg.msg, "an array"))
				arrays++;
			else
				EXPECT(r == 0 && d.n_insns == 1, "%s: '%s': %s", fixtures[i].name, expr,
				       dg.msg);
		}
	}
	printf("# %zu fields compiled, %zu arrays refused\n", fields, arrays);
	EXPECT(fields > 10000, "only %zu fields", fields);
}

/* Symbol tables come from kernel-events/symbols.c: skip, not pass, without. */
static void run_if_symbols(const char *event, const char *field, void (*fn)(void),
			   const char *name)
{
	_cleanup_(tp_event_freep) struct tp_event *e = fixture_event(event);

	if (e && have_symbols(e, field)) {
		test_failed_now = 0;
		fn();
		printf("%s - %s\n", test_failed_now ? "not ok" : "ok", name);
		tests_failed += test_failed_now;
		tests_passed += !test_failed_now;
		return;
	}
	printf("# skip - %s: no symbol table for %s:%s from kernel-events/symbols.c; not counted\n",
	       name, event, field);
}

int main(void)
{
	fixtures_load();
	RUN(precedence);
	RUN(spans);
	RUN(numeric_operators);
	RUN(widths);
	RUN(strings);
	RUN(dev_t_fields);
	RUN(rel_loc_and_truncated);
	RUN(error_messages);
	RUN(symbol_errors);
	RUN(limits);
	RUN(token_soup);
	RUN(every_field_of_every_event);
	run_if_symbols("irq:softirq_entry", "vec", symbolic_table, "symbolic_table");
	run_if_symbols("kmem:mm_page_alloc", "gfp_flags", flags_table, "flags_table");
	run_if_symbols("sched:sched_switch", "prev_state", prev_state_table, "prev_state_table");
	fixtures_free();
	return TEST_EXIT();
}
