// SPDX-License-Identifier: GPL-2.0
/* kernel-events/stack_skip.c: which leading frames of a stack taken at a
 * tracepoint are the tracing machinery's (the names measured on 6.18). */
#include <stdio.h>
#include <string.h>
#include "kernel-events/stack_skip.h"
#include "test.h"

static void names(void)
{
	static const char *const tracing[] = {
		"__traceiter_fcntl_setlk", "perf_syscall_enter", "perf_syscall_exit",
		"trace_event_raw_event_filelock_lock", "ftrace_syscall_enter",
		"perf_trace_filelock_lock", "perf_trace_run_bpf_submit", "trace_call_bpf",
		"bpf_prog_6deef7357e7b4530_trace_event_class", "__bpf_trace_sched_switch",
		"bpf_trace_run4", "__traceiter_xfs_da_btree_corrupt [xfs]",
		"perf_trace_sched_switch.isra.0",
	};
	static const char *const callers[] = {
		"fcntl_setlk", "syscall_trace_enter", "do_wait", "perf_trace_event_unreg.isra.0",
		"perf_trace_buf_update", "perf_trace_init", "__traceiter_", "trace_callx",
		"xfs_trans_commit [xfs]", "",
	};

	for (size_t i = 0; i < sizeof(tracing) / sizeof(tracing[0]); i++)
		EXPECT(stack_frame_is_tracing(tracing[i]), "%s is the machinery's", tracing[i]);
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++)
		EXPECT(!stack_frame_is_tracing(callers[i]), "'%s' is not", callers[i]);
}

/* Addresses 1, 2, 3...: frame i's function is fns[i]. */
static const char *const *fns;

static bool sym(uint64_t ip, struct strbuf *out, void *ctx)
{
	(void)ctx;
	if (!fns[ip - 1])
		return false;
	sb_puts(out, fns[ip - 1]);
	return true;
}

static void leading_only(void)
{
	static const char *const two[] = { "__traceiter_sys_enter", "perf_syscall_enter",
					   "syscall_trace_enter", "__traceiter_x", NULL };
	static const char *const none[] = { "fcntl_setlk", "__traceiter_fcntl_setlk" };
	static const char *const unknown[] = { NULL, "__traceiter_x" };
	const uint64_t ips[] = { 1, 2, 3, 4, 5 };

	fns = two;
	EXPECT(stack_skip(ips, 5, sym, NULL) == 2, "two leading frames");
	EXPECT(stack_skip(ips, 1, sym, NULL) == 1, "no further than n");
	fns = none;
	EXPECT(stack_skip(ips, 2, sym, NULL) == 0, "none leading: none taken, further down neither");
	fns = unknown;
	EXPECT(stack_skip(ips, 2, sym, NULL) == 0, "a frame in no symbol ends them");
}

int main(void)
{
	RUN(names);
	RUN(leading_only);
	return TEST_EXIT();
}
