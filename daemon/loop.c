// SPDX-License-Identifier: GPL-2.0
/* The daemon's event loop (sd-event): ring-buffer wakeups and a flush
 * timer drain records; SIGHUP reloads; SIGTERM/SIGINT drain and exit; the
 * watchdog is pinged by the loop itself, so a stuck loop is noticed;
 * SIGUSR1 takes a snapshot of the recorder. */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include "clock.h"
#include "log.h"
#include "loop.h"
#include "metrics/http.h"
#include "metrics/metrics.h"
#include "ptrkey.h"
#include "tracer/report.h"
#include "sink/sink.h"
#include "tracer/tracer.h"
#include "tracer/units.h"
#include "util.h"

struct daemon {
	const struct run_opts *o;
	struct tracer *t;
	sd_event *event;
	sd_event_source *more;		/* drains on while the ring stays full */
	sd_event_source *cgroups;	/* Unit=: new cgroups (watch_cgroups()) */
	uint64_t last_delivered, last_status_usec;
	unsigned reloads;
	bool stopping;
	bool started;		/* READY=1 sent once: systemd's watchdog applies */
	struct http_server *metrics;	/* [Metrics] Listen=: GET /metrics */
	bool metrics_passed;		/* on the socket systemd passed, not Listen='s */
	int passed_fd;			/* that socket until setup_metrics(); else -1 */
	size_t busy_done, busy_total;	/* at the last on_busy() */
};

/* The file and the command line's selection; at start and on reload. */
static int load_config(const struct run_opts *o, struct config *cfg, struct diag *d)
{
	return config_load_args(o->config_path, o->sel_args, o->n_sel_args, cfg, d);
}

/* What the config is called in messages. */
static const char *config_name(const struct run_opts *o)
{
	return o->config_path ? o->config_path : "the command line";
}

/* How far each sign of progress pushes systemd's timeout of the current
 * state: well above the slowest single detach seen (~0.1 s) under load. */
#define BUSY_EXTEND_USEC (10 * 1000000ULL)

/* ", N what" for every figure that is not zero: a status that leaves out a
 * loss reads as "nothing lost". */
static void format_losses(struct tracer *t, const struct sel_totals *sum, char *buf, size_t size)
{
	const struct { uint64_t n; const char *what; } fig[] = {
		{ sum->lost, "lost (ring buffer full)" },
		{ sum->sink_errors, "sink errors" },
		{ sum->suppressed, "suppressed (rate limit)" },
		{ sum->agg_dropped - sum->agg_nostack, "dropped (histogram full)" },
		{ sum->agg_nostack, "dropped (no stack)" },
		{ sum->vars_dropped, "trigger starts dropped (no room)" },
		{ sum->vars_expired, "trigger starts aged out" },
		{ tracer_skipped(t), "skipped by the kernel" },
		{ t->unit_unwritten, "Unit= verdicts not written (map full)" },
		{ tracer_record_counts(t)->malformed + tracer_record_counts(t)->late, "malformed" },
	};
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(fig) && n < size; i++)
		if (fig[i].n)
			n += snprintf(buf + n, size - n, ", %llu %s", (unsigned long long)fig[i].n, fig[i].what);
}

static void notify_status(struct daemon *dm, const char *state)
{
	struct sel_totals sum;
	char losses[256];
	uint64_t now;
	double rate = 0;

	tracer_all_totals(dm->t, &sum);
	format_losses(dm->t, &sum, losses, sizeof(losses));
	sd_event_now(dm->event, CLOCK_MONOTONIC, &now);
	if (dm->last_status_usec && now > dm->last_status_usec)
		rate = (double)(sum.delivered - dm->last_delivered) * 1e6 / (now - dm->last_status_usec);
	dm->last_delivered = sum.delivered;
	dm->last_status_usec = now;
	/* Where the statistics went is part of the status: stderr, which
	 * nobody may read, when the journal cannot be written. */
	sd_notifyf(false, "%sSTATUS=%.0f events/s, %llu delivered%s%s, %zu selections, %zu events%s",
		   state ? state : "", rate, (unsigned long long)sum.delivered,
		   losses[0] ? losses : "", losses[0] ? "" : ", 0 lost", dm->t->n_sels, tracer_attached(dm->t),
		   journal_unreachable() < 0 ? "; journal unavailable: logging to stderr" : "");
}

/* Attaching or detaching blocks the loop (the loader calls this about once
 * a second meanwhile), so the loop's own watchdog pings stop, and detaching
 * 1500 events can outlast TimeoutStopSec on a loaded machine. As long as
 * events go, ping the watchdog and extend the timeout of the current state
 * (start, reload, stop); one that stops moving gets neither, and systemd's
 * timeouts apply. Not the watchdog before the first READY=1: a ping arms it,
 * and one attach can wait seconds on the kernel's event_mutex behind another
 * tracer's detach (8.5 s for one event, seen in a test's container, whose
 * WatchdogSec=2s then killed the start); TimeoutStartSec, extended while
 * events go, bounds the start. */
static void on_busy(void *userdata, size_t done, size_t total)
{
	struct daemon *dm = userdata;

	if (done == dm->busy_done && total == dm->busy_total)
		return;
	dm->busy_done = done;
	dm->busy_total = total;
	sd_notifyf(false, "%sEXTEND_TIMEOUT_USEC=%llu\nSTATUS=%s %zu of %zu events",
		   dm->started ? "WATCHDOG=1\n" : "", BUSY_EXTEND_USEC, dm->stopping ? "stopping: final counts written, detached" :
		   "attaching or detaching:", done, total);
}

/* Time sources are one-shot: a callback that wants to run again must
 * re-arm and re-enable its source. */
static int rearm(sd_event_source *s, uint64_t usec)
{
	int r = sd_event_source_set_time_relative(s, usec);

	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* A drain stops after a budget of records; the rest waits for the next
 * loop iteration, after signals and timers have had their turn. */
static void drain(struct daemon *dm)
{
	if (tracer_drain(dm->t) > 0)
		sd_event_source_set_enabled(dm->more, SD_EVENT_ONESHOT);
}

static int on_more(sd_event_source *s, void *userdata)
{
	(void)s;
	drain(userdata);
	return 0;
}

/* Unit=: a cgroup was made; its verdicts before its first events, if we
 * are quick. */
static int on_cgroups(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *dm = userdata;

	(void)s; (void)fd; (void)revents;
	units_on_ready(dm->t);
	return 0;
}

/* The watch of new cgroups starts with the first selection with Unit=,
 * at start or at a reload. */
static void watch_cgroups(struct daemon *dm)
{
	int fd = units_fd(dm->t);

	if (fd < 0 || dm->cgroups || !dm->event)
		return;
	if (sd_event_add_io(dm->event, &dm->cgroups, fd, EPOLLIN, on_cgroups, dm) < 0)
		log_warning("Unit=: cannot watch new cgroups: a unit started from now on is "
			    "matched at the next reload");
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s; (void)fd; (void)revents;
	drain(userdata);
	return 0;
}

static int on_flush(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *dm = userdata;

	(void)usec;
	drain(dm);
	tracer_snapshot_poll(dm->t);	/* onmax().snapshot(): after what led to it */
	report_suppressed(dm->t);
	/* Like any filter whose reader went away (`tracerd -f | head`): stop,
	 * with the summary on stderr, instead of counting sink errors forever. */
	if (sink_gone(dm->t->sink)) {
		log_info("stdout is closed: stopping");
		return sd_event_exit(sd_event_source_get_event(s), 0);
	}
	return rearm(s, dm->t->cfg.flush_interval_ms * 1000ULL);
}

static int on_status(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *dm = userdata;

	(void)usec;
	/* CLOCK_REALTIME - CLOCK_MONOTONIC, for TRACE_TIME_REALTIME_USEC:
	 * refreshed with the status, so that a clock step shows within seconds. */
	tracer_refresh_clock(dm->t);
	notify_status(dm, NULL);
	return rearm(s, 2 * 1000000ULL);
}

static int on_stats(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *dm = userdata;

	(void)usec;
	if (!dm->t->cfg.stats_interval_sec)
		return 0;
	report_stats(dm->t, false);
	return rearm(s, dm->t->cfg.stats_interval_sec * 1000000ULL);
}

/* Aggregate='s interval dumps: due times are checked each second. */
static int on_hist(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *dm = userdata;

	hist_out_tick(dm->t, usec);
	tracer_vars_tick(dm->t, usec);
	return rearm(s, 1000000ULL);
}

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)si;
	(void)userdata;
	sd_notify(false, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* SIGUSR1 (systemctl kill -s USR1 tracerd): a snapshot of the recorder. */
static int on_usr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *dm = userdata;
	bool asked = si->ssi_code == SI_QUEUE && si->ssi_int == TRACERD_SNAPSHOT_REQUEST;

	(void)s;
	/* What was traced before the signal is in the snapshot. */
	tracer_drain_written(dm->t);
	if (sink_route_snapshot(dm->t->sink, asked ? "request" : "signal", 1) == -ENOENT)
		log_warning("%s: no recorder to take a snapshot of (no selection has "
			    "Output=recorder)", asked ? "tracerd --snapshot" : "SIGUSR1");
	return 0;
}

/* The journal entry that ends a reload. systemd 252 has no
 * Type=notify-reload, so `systemctl reload` returns as soon as SIGHUP is
 * sent; this entry (TRACE_RELOAD=ok or failed, numbered) is how a caller
 * knows the reload took effect. A failure names the file:line:column. */
static void report_reload(struct daemon *dm, const struct diag *d, int r)
{
	struct tracer *t = dm->t;
	char f[5][320], msg[2048];
	const char *fields[5] = { f[0], f[1], f[2], f[3], f[4] };
	size_t n = 2;

	dm->reloads++;
	snprintf(f[0], sizeof(f[0]), "TRACE_RELOAD=%s", r < 0 ? "failed" : "ok");
	snprintf(f[1], sizeof(f[1]), "TRACE_RELOAD_SEQ=%u", dm->reloads);
	if (r >= 0) {
		sink_message(t->sink, LOG_INFO, fields, n,
			     "reloaded %s: %zu selections, %zu events attached",
			     config_name(dm->o), t->n_sels, tracer_attached(t));
		return;
	}
	if (d->msg[0]) {
		diag_format(d, msg, sizeof(msg));
		snprintf(f[n++], sizeof(f[0]), "TRACE_CONFIG_FILE=%s", d->file);
		snprintf(f[n++], sizeof(f[0]), "TRACE_CONFIG_LINE=%d", d->line);
		snprintf(f[n++], sizeof(f[0]), "TRACE_CONFIG_COLUMN=%d", d->col);
	} else {
		snprintf(msg, sizeof(msg), "%s", strerror(-r));
	}
	sink_message(t->sink, LOG_ERR, fields, n,
		     "reload failed, keeping the running configuration: %s", msg);
}

/* The ring buffer is sized at load, so these keep their running values;
 * say so rather than leave a changed line looking applied. */
static void keep_restart_only(struct config *new, const struct config *run, bool metrics_passed)
{
	if (new->ring_buffer_size != run->ring_buffer_size || new->wakeup_bytes != run->wakeup_bytes)
		log_warning("RingBufferSize= and WakeupBytes= take effect on restart only");
	new->ring_buffer_size = run->ring_buffer_size;
	new->wakeup_bytes = run->wakeup_bytes;
	/* The socket systemd passed stays, whatever Listen= says. */
	if (!streq_ptr(new->metrics_listen, run->metrics_listen) && !metrics_passed)
		log_warning("[Metrics] Listen= takes effect on restart only");
	free(new->metrics_listen);
	new->metrics_listen = run->metrics_listen ? strdup(run->metrics_listen) : NULL;
}

/* SIGHUP: re-read the config; an invalid one is logged and the running one
 * stays. Unchanged selections keep their attachments (tracer_apply). */
static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *dm = userdata;
	struct tracer *t = dm->t;
	struct route_update outputs;
	struct diag d = { 0 }, why = { 0 };
	struct config cfg;
	int r;

	(void)s; (void)si;
	sd_notify(false, "RELOADING=1");
	/* A selection that goes away takes its unreported suppressions along. */
	report_suppressed(t);
	r = load_config(dm->o, &cfg, &d);
	if (r >= 0) {
		keep_restart_only(&cfg, &t->cfg, dm->metrics_passed);
		/* The outputs first: one that cannot be made fails the reload
		 * before a selection changes. */
		r = sink_route_prepare(t->sink, &cfg, &outputs, &why);
		if (r < 0)
			diag_set(&d, config_name(dm->o), 0, 0, "%s", why.msg);
		else if ((r = tracer_apply(t, &cfg, &d)) < 0)
			sink_route_abort(&outputs);
		else {
			/* What the ring holds was traced before the new
			 * outputs: it goes where it was meant to go. */
			tracer_drain_written(t);
			sink_route_commit(t->sink, &outputs);
			tracer_set_sink(t, t->sink, t->cfg.output, dm->o->foreground);
			watch_cgroups(dm);
			/* What went away detaches now, seconds for a large
			 * selection, while the ring is drained to the new
			 * outputs: the selections that stay lose nothing. The
			 * reload is done, and said so, once it has. */
			tracer_retire(t);
		}
		if (r < 0)
			config_free(&cfg);
	}
	report_reload(dm, &d, r);
	notify_status(dm, "READY=1\n");
	return 0;
}

/* The stop, in the order that makes a SIGKILL during the detach (the stop
 * timeout, or an impatient admin) lose nothing: the programs stop counting,
 * the ring is drained, the outputs write out and sync (tracer_halt), and
 * the final entries go out: suppressions not yet reported, and the summary
 * per selection. Only then the detach, which the kernel makes slow (a grace
 * period per event, one after another: ~40 ms each, 90 s for `*:*`); it
 * extends the stop timeout as long as it moves (on_busy). */
static void stop(struct daemon *dm)
{
	uint64_t t0 = now_usec(CLOCK_MONOTONIC), t1;
	size_t n = tracer_attached(dm->t);

	dm->stopping = true;
	sd_notify(false, "STOPPING=1\nSTATUS=stopping: writing out");
	tracer_halt(dm->t);
	report_suppressed(dm->t);
	report_stats(dm->t, true);
	if (dm->o->foreground || dm->t->cfg.output != OUTPUT_JOURNAL)
		report_events(dm->t, stderr);
	t1 = now_usec(CLOCK_MONOTONIC);
	log_info("stopping: final counts written in %.1f ms; detaching %zu events",
		 (t1 - t0) / 1000.0, n);
	sd_notifyf(false, "EXTEND_TIMEOUT_USEC=%llu\nSTATUS=stopping: final counts written, "
		   "detaching %zu events", BUSY_EXTEND_USEC, n);
	tracer_stop(dm->t);
	log_info("stopping: detached %zu events in %.1f ms", n,
		 (now_usec(CLOCK_MONOTONIC) - t1) / 1000.0);
}

/* Blocks SIGTERM, SIGINT, SIGHUP and SIGUSR1 for the signalfd, from the start so that
 * one sent while tracerd attaches waits for the loop. A shell starts
 * background jobs with SIGINT ignored, and an ignored signal never reaches a
 * signalfd: block first (a blocked signal is never discarded), then take
 * the default disposition back. */
static void block_signals(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
}

static int setup_loop(struct daemon *dm)
{
	struct tracer *t = dm->t;
	int r;

	block_signals();
	r = sd_event_default(&dm->event);
	if (r < 0)
		return r;
	if ((r = sd_event_add_signal(dm->event, NULL, SIGTERM, on_term, dm)) < 0 ||
	    (r = sd_event_add_signal(dm->event, NULL, SIGINT, on_term, dm)) < 0 ||
	    (r = sd_event_add_signal(dm->event, NULL, SIGHUP, on_hup, dm)) < 0 ||
	    (r = sd_event_add_signal(dm->event, NULL, SIGUSR1, on_usr1, dm)) < 0)
		return r;
	/* Edge-triggered: the BPF side wakes us only past WakeupBytes. */
	r = sd_event_add_io(dm->event, NULL, tracer_ring_fd(t), EPOLLIN | EPOLLET,
			    on_ring, dm);
	if (r < 0)
		return r;
	r = sd_event_add_defer(dm->event, &dm->more, on_more, dm);
	if (r < 0)
		return r;
	sd_event_source_set_priority(dm->more, SD_EVENT_PRIORITY_IDLE);
	sd_event_source_set_enabled(dm->more, SD_EVENT_OFF);
	watch_cgroups(dm);
	if ((r = sd_event_add_time_relative(dm->event, NULL, CLOCK_MONOTONIC,
					    t->cfg.flush_interval_ms * 1000ULL, 0, on_flush, dm)) < 0 ||
	    (r = sd_event_add_time_relative(dm->event, NULL, CLOCK_MONOTONIC, 2000000ULL, 0,
					    on_status, dm)) < 0 ||
	    (r = sd_event_add_time_relative(dm->event, NULL, CLOCK_MONOTONIC, 0, 0,
					    on_hist, dm)) < 0)
		return r;
	if (t->cfg.stats_interval_sec &&
	    (r = sd_event_add_time_relative(dm->event, NULL, CLOCK_MONOTONIC,
					    t->cfg.stats_interval_sec * 1000000ULL, 0, on_stats, dm)) < 0)
		return r;
	return sd_event_set_watchdog(dm->event, true);
}

/* GET /metrics: the counts at the scrape (metrics/metrics.c); anything
 * else is not here. */
static int on_metrics(void *userdata, const struct http_request *req, struct strbuf *body,
		      const char **content_type)
{
	struct daemon *dm = userdata;
	struct http_stats server;
	bool om = metrics_wants_openmetrics(req->accept);

	if (strcmp(req->path, "/metrics"))
		return 404;
	http_server_stats(dm->metrics, &server);
	if (metrics_write(dm->t, &server, om, body) < 0)
		return 500;
	*content_type = om ? "application/openmetrics-text; version=1.0.0; charset=utf-8" :
			     "text/plain; version=0.0.4; charset=utf-8";
	return 200;
}

/* Socket activation (tracerd-metrics.socket): the listening socket systemd
 * passed, taken before start() makes threads, since sd_listen_fds() unsets
 * LISTEN_FDS and setenv() is not thread-safe. */
static int take_passed_socket(struct daemon *dm)
{
	char why[256];
	int r = http_listen_passed(&dm->passed_fd, why, sizeof(why));

	if (r < 0)
		log_error("cannot serve metrics on the socket systemd passed: %s", why);
	return r;
}

/* The metrics socket: the one systemd passed, which takes the place of
 * Listen='s (the shipped unit could not listen itself: PrivateNetwork=,
 * RestrictAddressFamilies=AF_UNIX): 1; else Listen='s own: 0. Its address
 * in where; *ret_fd is -1 if there is neither. */
static int metrics_socket(struct daemon *dm, int *ret_fd, char *where, size_t where_size)
{
	const char *spec = dm->t->cfg.metrics_listen;
	char why[256];
	int r;

	*ret_fd = -1;
	if (dm->passed_fd >= 0) {
		*ret_fd = TAKE_FD(dm->passed_fd);
		if (http_listen_describe(*ret_fd, where, where_size) < 0)
			snprintf(where, where_size, "fd %d", *ret_fd);
		if (spec && !http_listen_is(*ret_fd, spec))
			log_notice("[Metrics] Listen=%s is not used: systemd passed a socket at %s "
				   "(tracerd-metrics.socket), which is served instead", spec, where);
		return 1;
	}
	if (!spec)
		return 0;
	r = http_listen(spec, ret_fd, why, sizeof(why));
	if (r < 0) {
		log_error("cannot serve metrics at %s ([Metrics] Listen=): %s", spec,
			  why[0] ? why : strerror(-r));
		return r;
	}
	snprintf(where, where_size, "%s", spec);
	return 0;
}

/* GET /metrics served from this loop, after the ring's sources in priority
 * (http_server.c): a scraper never delays a record. */
static int setup_metrics(struct daemon *dm)
{
	char where[128];
	int fd, r;

	r = metrics_socket(dm, &fd, where, sizeof(where));
	if (r < 0 || fd < 0)
		return r;
	dm->metrics_passed = r > 0;
	r = http_server_new(dm->event, fd, on_metrics, dm, &dm->metrics);
	if (r < 0) {
		log_error("cannot serve metrics at %s: %s", where, strerror(-r));
		return r;
	}
	dm->t->metrics = true;
	log_info("metrics: GET /metrics at %s%s", where,
		 dm->metrics_passed ? ", the socket systemd passed" : "");
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	/* One perf event fd per attached event: thousands with sys:* globs. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void log_attached(struct tracer *t, uint64_t usec, uint64_t cpu_usec)
{
	for (size_t i = 0; i < t->n_sels; i++) {
		struct sel_state *s = t->sels[i];

		for (size_t k = 0; k < s->n_refused; k++)
			log_warning("selection %s: the kernel refused %s", s->conf->name, s->refused[k]);
	}
	log_info("attached %zu events, %d BPF program(s), %zu selections in %.1f ms (%.1f ms CPU)",
		 tracer_attached(t), tracer_prog_count(t), t->n_sels, usec / 1000.0, cpu_usec / 1000.0);
}

/* A config error: on a terminal with the offending line and a caret; in the
 * journal as one error entry, file:line:column first. */
static void print_diag(const struct diag *d)
{
	char msg[2048];

	if (!getenv("JOURNAL_STREAM")) {
		diag_print(d, stderr);
		return;
	}
	diag_format(d, msg, sizeof(msg));
	log_error("%s", msg);
}

/* Loads, attaches; reports its own errors. */
static int start(struct daemon *dm, struct config *cfg)
{
	struct diag d = { 0 };
	struct sink *s = NULL;
	uint64_t t0, c0;
	int r;

	r = tracer_new(&dm->t, cfg, &d);
	if (r < 0)
		goto fail;
	tracer_set_progress(dm->t, on_busy, dm);
	/* --foreground: everything to stdout, whatever Output= says. */
	if (dm->o->foreground) {
		r = sink_stdout_new(&s, stdout);
		if (r >= 0)
			r = sink_queue_wrap(&s);
	} else
		r = sink_route_new(&s, cfg, &d);
	if (s)	/* on error too: tracer_free() frees it */
		tracer_set_sink(dm->t, s, cfg->output, dm->o->foreground);
	if (r < 0)
		goto fail;
	t0 = now_usec(CLOCK_MONOTONIC);
	c0 = now_usec(CLOCK_PROCESS_CPUTIME_ID);
	r = tracer_apply(dm->t, cfg, &d);
	if (r < 0)
		goto fail;
	log_attached(dm->t, now_usec(CLOCK_MONOTONIC) - t0, now_usec(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
fail:
	if (d.msg[0])
		print_diag(&d);
	else
		log_error("cannot start: %s", strerror(-r));
	/* An error that names a place in the config is the config's. */
	return d.file[0] && d.line ? -EBADMSG : r;
}

/* The exit status for a failed start: -EBADMSG is the config's (start()), and
 * so is -EBUSY, a [Store] Directory= that another tracerd writes into (one of
 * the two configs must change; a restart meanwhile fails the same); -ENOMEDIUM and -EACCES from tracer_new() are tracefs's, and an EACCES from
 * anything else is no less a missing permission. EPERM is the kernel refusing
 * BPF or perf events (no CAP_BPF or CAP_PERFMON, lockdown): no restart
 * changes that either. */
static int exit_status(int r)
{
	switch (r) {
	case -EBADMSG:
	case -EBUSY: return EXIT_CONFIG;	/* the store Directory= of another tracerd */
	case -ENOMEDIUM: return EXIT_UNAVAILABLE;
	case -EACCES:
	case -EPERM: return EXIT_NOPERM;
	default: return 1;
	}
}

/* The boot's pointer key, made by its first run: the journal's and
 * stdout's hashes then compare across runs of the boot, and with --read. */
static void use_boot_pointer_key(void)
{
	const char *path = ptrkey_path();
	struct ptrkey k;
	int r = ptrkey_load(path, true, &k);

	if (r < 0) {
		log_warning("cannot keep the pointer key in %s (%s): this run hashes pointers with a key "
			    "of its own, and its hashes do not compare with other runs'",
			    path, ptrkey_strerror(r));
		return;
	}
	ptrkey_use(&k);
}

int run_daemon(const struct run_opts *o)
{
	struct daemon dm = { .o = o, .passed_fd = -1 };
	struct diag d = { 0 };
	struct config cfg;
	int r;

	raise_nofile();
	block_signals();
	r = load_config(o, &cfg, &d);
	if (r < 0) {
		print_diag(&d);
		return EXIT_CONFIG;
	}
	r = take_passed_socket(&dm);
	if (r >= 0)
		r = start(&dm, &cfg);
	if (r >= 0) {
		/* After start(): what keeps tracerd from starting is said first,
		 * and no record is rendered before the loop runs. */
		use_boot_pointer_key();
		r = setup_loop(&dm);
		if (r < 0)
			log_error("cannot set up the event loop: %s", strerror(-r));
		else
			r = setup_metrics(&dm);
	}
	if (r < 0) {
		config_free(&cfg);
		closep(&dm.passed_fd);
		http_server_free(dm.metrics);
		sd_event_source_unref(dm.cgroups);
		tracer_free(dm.t);
		sd_event_source_unref(dm.more);
		sd_event_unref(dm.event);
		return exit_status(r);
	}
	notify_status(&dm, "READY=1\n");
	dm.started = true;
	r = sd_event_loop(dm.event);
	http_server_free(dm.metrics);	/* no scrape of a tracer stopping */
	stop(&dm);
	sd_event_source_unref(dm.cgroups);	/* its fd is the tracer's */
	tracer_free(dm.t);
	sd_event_source_unref(dm.more);
	sd_event_unref(dm.event);
	return r < 0 ? 1 : 0;
}
