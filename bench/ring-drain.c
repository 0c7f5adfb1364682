// SPDX-License-Identifier: GPL-2.0
/* tracerd without rendering: the daemon's own code loads and attaches the
 * class program from a config (libtracerd.a), and its ring buffer reader
 * drains the records, counting them, on the daemon's schedule (an
 * edge-triggered wakeup past WakeupBytes, else every FlushIntervalMSec).
 *
 *   ring-drain CONFIG
 *
 * It is what ftrace's trace_pipe_raw drained to a file is to ftrace: the cost
 * of getting an event into tracerd's ring buffer and out of it, apart from
 * the cost of turning it into text. Prints "attached" when ready and, on
 * SIGINT/SIGTERM, "delivered=N lost=N" as the daemon's summary does. */
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "consume/ringbuf.h"
#include "sink/sink.h"
#include "tracer/tracer.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int count_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(unsigned long long *)ctx;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	unsigned long long delivered = 0, lost = 0;
	struct diag d = { 0 };
	struct rb_reader *rb;
	struct sink *sink = NULL;
	struct tracer *t;
	struct config cfg;
	int ep, fd, ms;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CONFIG\n", argv[0]);
		return 2;
	}
	if (config_load(argv[1], &cfg, &d) < 0 || tracer_new(&t, &cfg, &d) < 0 ||
	    sink_stdout_new(&sink, stdout) < 0) {
		diag_print(&d, stderr);
		return 1;
	}
	tracer_set_sink(t, sink, cfg.output, true);	/* as --foreground */
	if (tracer_apply(t, &cfg, &d) < 0) {
		diag_print(&d, stderr);
		return 1;
	}
	fd = tracer_ring_fd(t);
	ms = t->cfg.flush_interval_ms;
	ep = epoll_create1(0);
	if (rb_reader_new(&rb, fd) < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		perror("ring buffer");
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "ring-drain: attached\n");
	while (!stop) {
		if (rb_reader_consume(rb, count_record, &delivered, 65536, 0) == 0)
			epoll_wait(ep, &ev, 1, ms);
	}
	while (rb_reader_consume(rb, count_record, &delivered, 65536, 0) > 0)
		;
	/* Detaches, and renders the few records that came in meanwhile: the
	 * tracer counts those as delivered. */
	tracer_stop(t);
	for (size_t i = 0; i < t->n_sels; i++) {
		struct sel_totals tot;

		tracer_totals(t, t->sels[i], &tot);
		lost += tot.lost;
		delivered += tot.delivered;
	}
	fprintf(stderr, "ring-drain: delivered=%llu lost=%llu\n", delivered, lost);
	rb_reader_free(rb);
	tracer_free(t);
	return 0;
}
