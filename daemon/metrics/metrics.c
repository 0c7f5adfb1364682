// SPDX-License-Identifier: GPL-2.0
/* The Prometheus text format (exposition format 0.0.4): every count the
 * summary reports, per selection and event, as counters that only go up
 * while tracerd runs (a reload keeps them, as the summary does). Names are
 * fixed (issue 32) so that dashboards can rely on them. */
#include <sys/utsname.h>
#include "consume/ringbuf.h"
#include "metrics.h"
#include "util.h"

/* A label value: backslash, double quote and newline escaped. */
static void put_label(struct strbuf *out, const char *name, const char *v)
{
	sb_printf(out, "%s=\"", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			sb_putc(out, '\\'), sb_putc(out, *v);
		else if (*v == '\n')
			sb_puts(out, "\\n");
		else
			sb_putc(out, *v);
	}
	sb_putc(out, '"');
}

static void put_head(struct strbuf *out, const char *name, const char *type, const char *help)
{
	sb_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct outcome {
	const char *name;
	size_t off;	/* in struct sel_totals */
	const char *help;
};

/* What became of each event: every hit is one of these, as in the summary. */
static const struct outcome outcomes[] = {
	{ .name = "delivered", .off = offsetof(struct sel_totals, delivered) },
	{ .name = "lost", .off = offsetof(struct sel_totals, lost) },
	{ .name = "filtered", .off = offsetof(struct sel_totals, filtered) },
	{ .name = "suppressed", .off = offsetof(struct sel_totals, suppressed) },
	{ .name = "sink_error", .off = offsetof(struct sel_totals, sink_errors) },
	{ .name = "aggregated", .off = offsetof(struct sel_totals, aggregated) },
	{ .name = "dropped", .off = offsetof(struct sel_totals, agg_dropped) },
	{ .name = "unmatched", .off = offsetof(struct sel_totals, unmatched) },
};

/* Besides the outcomes: counts of things that happened to events. */
static const struct outcome others[] = {
	{ "tracerd_syscall_strings_unreadable_total", offsetof(struct sel_totals, unreadable),
	  "Syscall user strings (SyscallStrings=) that could not be read." },
	{ "tracerd_stacks_cut_total", offsetof(struct sel_totals, stack_cut),
	  "Stacks (StackTrace=) cut at their depth limit." },
	{ "tracerd_stacks_lost_total", offsetof(struct sel_totals, stack_lost),
	  "Stack walks (StackTrace=) that failed." },
	{ "tracerd_trigger_starts_dropped_total", offsetof(struct sel_totals, vars_dropped),
	  "Inter-event triggers' starts that found no room for their variables." },
	{ "tracerd_trigger_starts_aged_out_total", offsetof(struct sel_totals, vars_expired),
	  "Inter-event triggers' starts whose end never came (VariableMaxAgeSec=)." },
};

struct pass {
	struct strbuf *out;
	const struct outcome *o;	/* NULL: every outcome */
};

static uint64_t field(const struct sel_totals *tot, size_t off)
{
	return *(const uint64_t *)((const char *)tot + off);
}

static void put_labels(struct strbuf *out, const char *sel, const struct tp_event *e)
{
	char ev[256];

	snprintf(ev, sizeof(ev), "%s:%s", e->system, e->name);
	put_label(out, "selection", sel);
	sb_putc(out, ',');
	put_label(out, "event", ev);
}

static void put_event(void *userdata, const char *sel, const struct tp_event *e,
		      const struct sel_totals *tot)
{
	struct pass *p = userdata;

	if (p->o) {
		sb_printf(p->out, "%s{", p->o->name);
		put_labels(p->out, sel, e);
		sb_printf(p->out, "} %llu\n", (unsigned long long)field(tot, p->o->off));
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(outcomes); i++) {
		sb_puts(p->out, "tracerd_events_total{");
		put_labels(p->out, sel, e);
		sb_putc(p->out, ',');
		put_label(p->out, "outcome", outcomes[i].name);
		sb_printf(p->out, "} %llu\n", (unsigned long long)field(tot, outcomes[i].off));
	}
}

static void put_daemon(struct tracer *t, struct strbuf *out)
{
	struct utsname u;
	size_t used, size;

	put_head(out, "tracerd_build_info", "gauge", "tracerd's version and the running kernel.");
	sb_puts(out, "tracerd_build_info{");
	put_label(out, "version", TRACERD_VERSION);
	sb_putc(out, ',');
	put_label(out, "kernel", uname(&u) == 0 ? u.release : "");
	sb_puts(out, "} 1\n");
	put_head(out, "tracerd_kernel_skipped_total", "counter", "Events the kernel did not run "
		 "tracerd's programs for (a BPF program already ran on the CPU), all selections.");
	sb_printf(out, "tracerd_kernel_skipped_total %llu\n", (unsigned long long)tracer_skipped(t));
	rb_reader_fill(t->cons->rb, &used, &size);
	put_head(out, "tracerd_ring_buffer_bytes", "gauge", "The BPF ring buffer's size.");
	sb_printf(out, "tracerd_ring_buffer_bytes %zu\n", size);
	put_head(out, "tracerd_ring_buffer_used_bytes", "gauge",
		 "Bytes in the BPF ring buffer not read yet.");
	sb_printf(out, "tracerd_ring_buffer_used_bytes %zu\n", used);
}

int metrics_write(struct tracer *t, struct strbuf *out)
{
	struct pass p = { .out = out };
	int r = tracer_read_stats(t);

	if (r < 0)
		return r;
	put_daemon(t, out);
	put_head(out, "tracerd_events_total", "counter", "Events of each selection and event, "
		 "by what became of them; each event is counted once.");
	tracer_each_event(t, put_event, &p);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		p.o = &others[i];
		put_head(out, others[i].name, "counter", others[i].help);
		tracer_each_event(t, put_event, &p);
	}
	return out->oom ? -ENOMEM : 0;
}
