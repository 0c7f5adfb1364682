// SPDX-License-Identifier: GPL-2.0
/* The tracing machinery's own frames at the top of a stack (stack_skip.h).
 * Measured on 6.18 with bpf_get_stack()/bpf_get_stackid() in a tracepoint
 * program (the regs perf_trace_<class> saved with perf_fetch_caller_regs(),
 * whose ip is its return address):
 *  - one probe on the tracepoint: the static call goes straight to
 *    perf_trace_<class>, and the first frame is the tracepoint's caller
 *    (fcntl_setlk+0x2b4);
 *  - several probes (ftrace's too, another tracer's BPF program): the
 *    static call goes through __traceiter_<event>, which comes first;
 *  - syscalls:sys_enter_* / sys_exit_*: the probe of the raw sys_enter and
 *    sys_exit tracepoints, perf_syscall_enter/perf_syscall_exit, comes
 *    first, then syscall_trace_enter, the tracepoint's caller.
 * ftrace's own stacks (its stacktrace trigger) begin with its probe,
 * trace_event_raw_event_<class> or ftrace_syscall_enter/exit, and the
 * perf and BPF path's functions are listed too, for a stack taken from
 * further inside it (perf_trace_run_bpf_submit, trace_call_bpf, the
 * program itself). */
#include <string.h>
#include "kernel-events/stack_skip.h"

static const char *const prefixes[] = {
	"__traceiter_",			/* the tracepoint's iterator over its probes */
	"trace_event_raw_event_",	/* ftrace's probe of a class */
	"__bpf_trace_",			/* a raw_tp/tp_btf program's probe */
	"bpf_prog_",			/* a BPF program */
	"bpf_trace_run",		/* bpf_trace_run1..12 */
};

static const char *const names[] = {
	"perf_syscall_enter", "perf_syscall_exit",	/* the perf path's syscall probes */
	"ftrace_syscall_enter", "ftrace_syscall_exit",	/* ftrace's */
	"perf_trace_run_bpf_submit", "trace_call_bpf", "perf_trace_buf_alloc",
	"bpf_get_stack", "bpf_get_stack_tp", "bpf_get_stackid_tp", "__bpf_get_stack",
};

/* perf_trace_<class>, the perf path's probe of a class, but not the perf
 * functions of that prefix that a call path may pass through. */
static bool is_perf_class_probe(const char *f, size_t n)
{
	static const char *const perf_own[] = { "perf_trace_event_", "perf_trace_init",
						"perf_trace_destroy", "perf_trace_add",
						"perf_trace_del", "perf_trace_buf_" };

	if (n < 11 || strncmp(f, "perf_trace_", 11))
		return false;
	for (size_t i = 0; i < sizeof(perf_own) / sizeof(perf_own[0]); i++)
		if (!strncmp(f, perf_own[i], strlen(perf_own[i])))
			return false;
	return true;
}

bool stack_frame_is_tracing(const char *func)
{
	/* the name alone: no ".isra.0", no " [module]" */
	size_t n = strcspn(func, ". ");

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (n > strlen(prefixes[i]) && !strncmp(func, prefixes[i], strlen(prefixes[i])))
			return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n == strlen(names[i]) && !strncmp(func, names[i], n))
			return true;
	return is_perf_class_probe(func, n);
}

size_t stack_skip(const uint64_t *ips, size_t n, stack_symbol_fn sym, void *ctx)
{
	struct strbuf sb = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		sb_reset(&sb);
		if (!sym(ips[i], &sb, ctx) || sb.oom || !stack_frame_is_tracing(sb_str(&sb)))
			break;
	}
	sb_free(&sb);
	return i;
}
