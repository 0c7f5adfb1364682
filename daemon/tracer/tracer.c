// SPDX-License-Identifier: GPL-2.0
/* The tracer's life: the stages set up and wired, stopped in order (halt
 * the programs, drain, close the sink; then detach) and freed. A config is
 * applied by tracer_apply.c, the ring drained by tracer_drain.c; the
 * accounting read across the stages is report.c's. */
#include "attach/ksym.h"
#include "log.h"
#include "sink/sink.h"
#include "tracer.h"
#include "attach/cgroup_watch.h"
#include "util.h"

int tracer_new(struct tracer **ret, const struct config *cfg, struct diag *d)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->hist_maps = (struct hist_maps){ .sync_outer = -1, .sync_inner = -1 };
	r = registry_new(&t->reg, cfg->synth, cfg->n_synth, d);
	if (r >= 0)
		r = loader_new(&t->ld, cfg->ring_buffer_size, cfg->wakeup_bytes, d);
	if (r >= 0) {
		r = loader_hist_maps(t->ld, &t->hist_maps);
		if (r < 0)
			diag_set(d, NULL, 0, 0, "cannot set up the histograms' maps: %s", strerror(-r));
	}
	if (r >= 0) {
		r = consumer_new(&t->cons, loader_ring_fd(t->ld));
		if (r < 0)
			diag_set(d, NULL, 0, 0, "cannot set up the ring buffer: %s", strerror(-r));
	}
	if (r < 0) {
		tracer_free(t);
		return r;
	}
	t->task_comm_off = loader_task_comm(tp_classes_task_comm(&t->reg->classes));
	/* %pS without CAP_SYSLOG: symbols from the kernel, not hashes. */
	kallsyms_set_fallback(ksym_print);
	*ret = t;
	return 0;
}

static int emit_to_sink(void *out, const struct out_record *r)
{
	return sink_emit(out, r);
}

static void flush_sink(void *out)
{
	sink_flush(out);
}

void tracer_set_sink(struct tracer *t, struct sink *s, enum output def, bool to_stdout)
{
	t->sink = s;
	t->hist_stdout = to_stdout || def == OUTPUT_STDOUT;
	consumer_set_output(t->cons, emit_to_sink, flush_sink, s);
	consumer_set_outputs(t->cons, def, to_stdout);
}

void tracer_set_progress(struct tracer *t, loader_progress_fn fn, void *userdata)
{
	loader_set_progress(t->ld, fn, userdata);
}

int tracer_ring_fd(struct tracer *t)
{
	return loader_ring_fd(t->ld);
}

void tracer_refresh_clock(struct tracer *t)
{
	consumer_refresh_clock(t->cons);
}

/* Stopped in this order so that a SIGKILL during the long detach (the
 * stop timeout) loses nothing: the programs stop counting, the ring is
 * drained, the histograms' last dumps go out, and every output writes out
 * and syncs what it was given. Then the counters are final. */
void tracer_halt(struct tracer *t)
{
	int r;

	if (t->halted)
		return;
	tracer_retire(t);	/* a reload's old selections, if still there */
	t->halted = true;
	loader_stop_programs(t->ld);
	/* A program that read the flag before it was set may still write. */
	r = hist_wait_programs(&t->hist_maps);
	if (r < 0)
		log_warning("cannot wait for the BPF programs (%s): an event that fired as "
			    "tracerd stopped may be counted but not written", strerror(-r));
	tracer_drain_all(t);
	/* Nothing counts any more: the histograms' last dumps are exact. */
	hist_out_stop(t);
	sink_close(t->sink);
}

void tracer_stop(struct tracer *t)
{
	_cleanup_free_ struct attachment **all = NULL;
	size_t n = tracer_attached(t);

	tracer_halt(t);
	all = calloc(n ? n : 1, sizeof(*all));
	n = 0;
	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++) {
			struct attachment *a = &t->sels[i]->slots[k]->att;

			if (!a->attached)
				continue;
			if (all)
				all[n++] = a;
			else	/* no memory: one by one */
				loader_detach(t->ld, a);
		}
	if (all)
		loader_detach_many(t->ld, all, n, NULL, NULL);
}

void tracer_free(struct tracer *t)
{
	if (!t)
		return;
	/* The sink queue's writer reads events and slots: stop it first. */
	if (t->sink)
		tracer_stop(t);
	tracer_apply_finish(t, NULL, NULL);	/* no sink: nothing to drain to */
	for (size_t i = 0; i < t->n_sels; i++)
		sel_state_free(t, t->sels[i]);
	free(t->sels);
	for (size_t i = 0; i < t->n_removed; i++)
		sel_past_free(&t->removed[i]);
	free(t->removed);
	sink_free(t->sink);
	consumer_free(t->cons);
	hist_maps_close(&t->hist_maps);
	kallsyms_set_fallback(NULL);
	ksym_close();
	cgroup_watch_free(t->cgroup_watch);
	loader_free(t->ld);
	free(t->lost_seen);
	registry_free(t->reg, render_release);
	config_free(&t->cfg);
	free(t);
}

size_t tracer_attached(struct tracer *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_sels; i++)
		n += t->sels[i]->n_slots;
	return n;
}

int tracer_prog_count(struct tracer *t)
{
	return loader_prog_count(t->ld);
}
