// SPDX-License-Identifier: GPL-2.0
/* The exposition (metrics_format.c writes its pieces): every count the
 * summary reports, per selection and event, as counters that only go up
 * while tracerd runs (a reload keeps them, as the summary does). Names are
 * fixed (issue 32) so that dashboards can rely on them. */
#include <sys/utsname.h>
#include "consume/ringbuf.h"
#include "http.h"
#include "sink/sink.h"
#include "metrics.h"
#include "metrics_priv.h"
#include "util.h"

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

static void put_event(void *userdata, const char *sel, const struct tp_event *e,
		      const struct sel_totals *tot)
{
	struct pass *p = userdata;

	if (p->o) {
		sb_printf(p->out, "%s{", p->o->name);
		metrics_event_labels(p->out, sel, e);
		sb_printf(p->out, "} %llu\n", (unsigned long long)field(tot, p->o->off));
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(outcomes); i++) {
		sb_puts(p->out, "tracerd_events_total{");
		metrics_event_labels(p->out, sel, e);
		sb_putc(p->out, ',');
		metrics_label(p->out, "outcome", outcomes[i].name);
		sb_printf(p->out, "} %llu\n", (unsigned long long)field(tot, outcomes[i].off));
	}
}

static void put_daemon(struct tracer *t, struct strbuf *out, bool om)
{
	struct utsname u;
	size_t used, size;

	metrics_head(out, om, "tracerd_build_info", "gauge",
		     "tracerd's version and the running kernel.");
	sb_puts(out, "tracerd_build_info{");
	metrics_label(out, "version", TRACERD_VERSION);
	sb_putc(out, ',');
	metrics_label(out, "kernel", uname(&u) == 0 ? u.release : "");
	sb_puts(out, "} 1\n");
	metrics_head(out, om, "tracerd_kernel_skipped_total", "counter", "Events the kernel did "
		     "not run tracerd's programs for (a BPF program already ran on the CPU), all "
		     "selections.");
	sb_printf(out, "tracerd_kernel_skipped_total %llu\n", (unsigned long long)tracer_skipped(t));
	rb_reader_fill(t->cons->rb, &used, &size);
	metrics_head(out, om, "tracerd_ring_buffer_bytes", "gauge", "The BPF ring buffer's size.");
	sb_printf(out, "tracerd_ring_buffer_bytes %zu\n", size);
	metrics_head(out, om, "tracerd_ring_buffer_used_bytes", "gauge",
		     "Bytes in the BPF ring buffer not read yet.");
	sb_printf(out, "tracerd_ring_buffer_used_bytes %zu\n", used);
}

/* The server's own counts: what it refused is there to be seen, too. */
static void put_server(const struct http_stats *s, struct strbuf *out, bool om)
{
	metrics_head(out, om, "tracerd_metrics_connections_total", "counter",
		     "Connections GET /metrics took on.");
	sb_printf(out, "tracerd_metrics_connections_total %llu\n",
		  (unsigned long long)s->accepted);
	metrics_head(out, om, "tracerd_metrics_responses_total", "counter",
		     "Responses GET /metrics wrote whole, any status.");
	sb_printf(out, "tracerd_metrics_responses_total %llu\n", (unsigned long long)s->answered);
	metrics_head(out, om, "tracerd_metrics_refused_total", "counter", "Connections GET "
		     "/metrics closed unanswered or answered with an error, by why.");
	sb_printf(out, "tracerd_metrics_refused_total{reason=\"full\"} %llu\n"
		  "tracerd_metrics_refused_total{reason=\"bad_request\"} %llu\n"
		  "tracerd_metrics_refused_total{reason=\"timeout\"} %llu\n",
		  (unsigned long long)s->refused_full, (unsigned long long)s->bad_requests,
		  (unsigned long long)s->timeouts);
}

/* Output=recorder's window and snapshots (issue 33), if one is configured. */
static void put_recorder(struct tracer *t, struct strbuf *out, bool om)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} m[] = {
		{ "tracerd_recorder_records_total", "counter", "Records into the flight "
		  "recorder's window.", offsetof(struct recorder_stats, records) },
		{ "tracerd_recorder_overwritten_total", "counter", "Records the window dropped, "
		  "oldest block first, to stay within [Recorder] Size=.",
		  offsetof(struct recorder_stats, overwritten) },
		{ "tracerd_recorder_window_bytes", "gauge", "Compressed bytes the window holds.",
		  offsetof(struct recorder_stats, bytes) },
		{ "tracerd_recorder_snapshots_total", "counter", "Snapshots written whole.",
		  offsetof(struct recorder_stats, snapshots) },
		{ "tracerd_recorder_snapshots_failed_total", "counter", "Snapshots that could not "
		  "be written (the window was kept).", offsetof(struct recorder_stats, failed) },
		{ "tracerd_recorder_triggers_skipped_total", "counter", "Snapshot triggers that "
		  "took none: inside MinIntervalSec=, or while one was written.",
		  offsetof(struct recorder_stats, skipped) },
		{ "tracerd_recorder_snapshots_deleted_total", "counter", "Old snapshot "
		  "directories deleted to keep [Recorder] MaxSnapshots=.",
		  offsetof(struct recorder_stats, deleted) },
	};
	struct recorder_stats st;

	if (sink_route_recorder_stats(t->sink, &st) < 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(m); i++) {
		metrics_head(out, om, m[i].name, m[i].type, m[i].help);
		sb_printf(out, "%s %llu\n", m[i].name,
			  (unsigned long long)*(const uint64_t *)((const char *)&st + m[i].off));
	}
}

int metrics_write(struct tracer *t, const struct http_stats *server, bool om, struct strbuf *out)
{
	struct pass p = { .out = out };
	int r = tracer_read_stats(t);

	if (r < 0)
		return r;
	put_daemon(t, out, om);
	if (server)
		put_server(server, out, om);
	put_recorder(t, out, om);
	metrics_head(out, om, "tracerd_events_total", "counter", "Events of each selection and "
		     "event, by what became of them; each event is counted once.");
	tracer_each_event(t, put_event, &p);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		p.o = &others[i];
		metrics_head(out, om, others[i].name, "counter", others[i].help);
		tracer_each_event(t, put_event, &p);
	}
	r = metrics_hist_write(t, out, om);
	if (r < 0)
		return r;
	if (om)
		sb_puts(out, "# EOF\n");
	return out->oom ? -ENOMEM : 0;
}
