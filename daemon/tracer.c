// SPDX-License-Identifier: GPL-2.0
/* The tracer's life: the stages set up and wired, stopped in order (detach,
 * drain, close the sink), freed; and the accounting read across them. */
#include "render/render.h"
#include "sink/sink.h"
#include "tracer.h"
#include "util.h"

int tracer_new(struct tracer **ret, const struct config *cfg, struct diag *d)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	r = registry_new(&t->reg, d);
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

void tracer_set_sink(struct tracer *t, struct sink *s)
{
	t->sink = s;
	consumer_set_output(t->cons, emit_to_sink, flush_sink, s);
}

void tracer_set_progress(struct tracer *t, loader_progress_fn fn, void *userdata)
{
	loader_set_progress(t->ld, fn, userdata);
}

int tracer_drain(struct tracer *t)
{
	return consumer_drain(t->cons);
}

void tracer_drain_all(struct tracer *t)
{
	if (t->cons)
		consumer_drain_all(t->cons);
}

int tracer_ring_fd(struct tracer *t)
{
	return loader_ring_fd(t->ld);
}

void tracer_refresh_clock(struct tracer *t)
{
	consumer_refresh_clock(t->cons);
}

void tracer_stop(struct tracer *t)
{
	_cleanup_free_ struct attachment **all = NULL;
	size_t n = tracer_attached(t);

	all = calloc(n ? n : 1, sizeof(*all));
	n = 0;
	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++) {
			struct attachment *a = &t->sels[i]->slots[k]->att;

			if (!a->link)
				continue;
			if (all)
				all[n++] = a;
			else	/* no memory: one by one */
				loader_detach(t->ld, a);
		}
	if (all)
		loader_detach_many(t->ld, all, n);
	tracer_drain_all(t);
	/* Nothing counts any more: the histograms' last dumps are exact. */
	hist_out_stop(t);
	sink_close(t->sink);
}

void tracer_free(struct tracer *t)
{
	if (!t)
		return;
	/* The sink queue's writer reads events and slots: stop it first. */
	if (t->sink)
		tracer_stop(t);
	for (size_t i = 0; i < t->n_sels; i++)
		sel_state_free(t, t->sels[i]);
	free(t->sels);
	sink_free(t->sink);
	consumer_free(t->cons);
	loader_free(t->ld);
	registry_free(t->reg, render_release);
	config_free(&t->cfg);
	free(t);
}

void tracer_slot_totals(struct tracer *t, const struct trace_slot *slot, struct sel_totals *tot)
{
	struct event_stats bpf = { 0 };

	loader_slot_stats(t->ld, slot->id, &bpf);
	tot->hits += bpf.hits;
	tot->filtered += bpf.filtered;
	tot->lost += bpf.lost;
	tot->truncated += bpf.truncated;
	tot->aggregated += bpf.aggregated;
	tot->agg_dropped += bpf.agg_dropped;
	trace_slot_add_counts(slot, tot);
}

void tracer_totals(struct tracer *t, const struct sel_state *s, struct sel_totals *tot)
{
	memset(tot, 0, sizeof(*tot));
	for (size_t i = 0; i < s->n_slots; i++)
		tracer_slot_totals(t, s->slots[i], tot);
}

void tracer_all_totals(struct tracer *t, struct sel_totals *sum)
{
	*sum = (struct sel_totals){ 0 };
	for (size_t i = 0; i < t->n_sels; i++) {
		struct sel_totals tot;

		tracer_totals(t, t->sels[i], &tot);
		sum->delivered += tot.delivered;
		sum->lost += tot.lost;
		sum->suppressed += tot.suppressed;
		sum->sink_errors += tot.sink_errors;
		sum->agg_dropped += tot.agg_dropped;
	}
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

uint64_t tracer_skipped(struct tracer *t)
{
	return loader_skipped(t->ld);
}

const struct record_counts *tracer_record_counts(struct tracer *t)
{
	return &t->cons->counts;
}
