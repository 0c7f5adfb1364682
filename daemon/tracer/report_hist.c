// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include "report.h"
#include "sink/sink.h"
#include "util.h"
#include "aggregate/hist_map.h"
#include "log.h"
#include "tracer.h"

/* Aggregate='s dumps: each AggregateIntervalSec= (then cleared), and the
 * last one when a slot is detached (at stop, or when a reload changes its
 * selection). With --foreground or Output=stdout, a dump is the kernel's
 * hist file on stdout; in the journal, one entry per key (TRACE_HIST=, the
 * keys and values as fields) and one of the totals. The daemon reads the
 * maps per interval: its work grows with the entries, not with the events. */
static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		n -= k;
	}
}

static void put_stdout(const struct sel_state *st, const struct trace_slot *slot,
		       const struct hist_dump *dump, const char *why, bool raw)
{
	const struct hist_format_opts o = { .raw_pointers = raw };
	struct strbuf sb = { 0 };

	sb_printf(&sb, "# selection: %s, event: %s:%s, dump: %s\n", st->conf->name,
		  slot->event->system, slot->event->name, why);
	hist_format(slot->hist, dump->v, dump->n, dump->dropped, &o, &sb);
	sb_putc(&sb, '\n');
	/* Whole blocks, between the record lines the sink writes. */
	write_all(STDOUT_FILENO, sb_str(&sb), sb.len);
	sb_free(&sb);
}

#define HIST_FIELDS (4 + TRACERD_AGG_KEYS + 1 + TRACERD_AGG_VALS + 1 + TRACERD_TRACK_SAVES)

/* onmax()/onchange(): TRACE_HIST_MAX= (or _CHANGED=) and each saved field
 * as TRACE_SAVED_<FIELD>=. */
static size_t put_track(const struct hist *h, const struct hist_entry *e, char (*f)[2048])
{
	const struct hist_trigger *t = &h->trig;
	char name[128];
	size_t n = 0;

	snprintf(f[n++], sizeof(f[0]), "TRACE_HIST_%s=%" PRIu64,
		 t->track == TRACK_MAX ? "MAX" : "CHANGED", e->tracked ? (uint64_t)e->track.val : 0);
	for (size_t i = 0; i < t->n_saves; i++) {
		const uint8_t *cell = e->track.saved + t->saves[i].off;
		char full[160];
		uint64_t v = 0;

		snprintf(full, sizeof(full), "saved_%s", h->spec.track.saves[i].name);
		journal_field_name(full, name, sizeof(name));
		if (t->saves[i].src.kind == HOP_STR || t->saves[i].src.kind == HOP_COMM) {
			snprintf(f[n++], sizeof(f[0]), "%s=%.*s", name,
				 e->tracked ? TRACERD_TRACK_CELL : 0, (const char *)cell);
			continue;
		}
		if (e->tracked)
			memcpy(&v, cell, sizeof(v));
		snprintf(f[n++], sizeof(f[0]), "%s=%" PRIu64, name, v);
	}
	return n;
}

/* One journal entry per key: MESSAGE is the kernel's line for it. */
static void put_entry(struct tracer *t, const struct sel_state *st, const struct trace_slot *slot,
		      const struct hist_entry *e, const char *why)
{
	const struct hist *h = slot->hist;
	const struct hist_format_opts o = { .raw_pointers = t->cfg.raw_pointers };
	/* a common_stacktrace key's frames, a line each: ~16 x 70 bytes */
	char f[HIST_FIELDS][2048], name[128];
	const char *fields[HIST_FIELDS];
	struct strbuf v = { 0 }, msg = { 0 };
	size_t n = 0;

	snprintf(f[n++], sizeof(f[0]), "TRACE_HIST=%s", st->conf->name);
	snprintf(f[n++], sizeof(f[0]), "TRACE_EVENT=%s:%s", slot->event->system, slot->event->name);
	snprintf(f[n++], sizeof(f[0]), "TRACE_HIST_DUMP=%s", why);
	for (size_t i = 0; i < h->n_keys; i++) {
		sb_reset(&v);
		hist_format_key(h, i, e->key, &o, &v);
		/* TRACE_COMMON_STACKTRACE=, whatever alias the trigger used */
		journal_field_name(h->keys[i].is_stack ? "common_stacktrace" : h->keys[i].name,
				   name, sizeof(name));
		snprintf(f[n++], sizeof(f[0]), "%s=%s", name, sb_str(&v));
	}
	snprintf(f[n++], sizeof(f[0]), "TRACE_HITCOUNT=%" PRIu64, e->hitcount);
	for (size_t i = 0; i < h->n_vals; i++) {
		journal_field_name(h->vals[i].name, name, sizeof(name));
		snprintf(f[n++], sizeof(f[0]), "%s=%" PRIu64, name, e->sums[i]);
	}
	if (h->trig.track)
		n += put_track(h, e, f + n);
	for (size_t i = 0; i < n; i++)
		fields[i] = f[i];
	hist_format(h, e, 1, 0, &o, &msg);	/* the entry is after the header */
	{
		/* its lines (a stack key's several) end before Totals' blank line */
		const char *line = strstr(sb_str(&msg), "\n{ ");
		const char *end = line ? strstr(line + 1, "\n\n") : NULL;

		sink_message(t->sink, st->conf->priority, fields, n, "%.*s",
			     line && end ? (int)(end - line - 1) : 0, line ? line + 1 : "");
	}
	sb_free(&v);
	sb_free(&msg);
}

static void put_journal(struct tracer *t, const struct sel_state *st,
			const struct trace_slot *slot, const struct hist_dump *dump, const char *why)
{
	char f[7][320];
	const char *fields[7];
	uint64_t hits = dump->dropped;

	for (size_t i = 0; i < dump->n; i++) {
		put_entry(t, st, slot, &dump->v[i], why);
		hits += dump->v[i].hitcount;
	}
	snprintf(f[0], sizeof(f[0]), "TRACE_HIST=%s", st->conf->name);
	snprintf(f[1], sizeof(f[1]), "TRACE_EVENT=%s:%s", slot->event->system, slot->event->name);
	snprintf(f[2], sizeof(f[2]), "TRACE_HIST_DUMP=%s", why);
	snprintf(f[3], sizeof(f[3]), "TRACE_HIST_TOTALS=1");
	snprintf(f[4], sizeof(f[4]), "TRACE_HIST_HITS=%" PRIu64, hits);
	snprintf(f[5], sizeof(f[5]), "TRACE_HIST_ENTRIES=%zu", dump->n);
	snprintf(f[6], sizeof(f[6]), "TRACE_HIST_DROPPED=%" PRIu64, dump->dropped);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		fields[i] = f[i];
	sink_message(t->sink, st->conf->priority, fields, ARRAY_SIZE(f),
		     "%s %s:%s %s: Totals: Hits: %" PRIu64 " Entries: %zu Dropped: %" PRIu64,
		     st->conf->name, slot->event->system, slot->event->name, why, hits,
		     dump->n, dump->dropped);
}

/* Reads out generation gen of slot (one or both), sorted. */
static int collect(struct tracer *t, const struct trace_slot *slot, int gen, struct hist_dump *d)
{
	struct hist_dump other = { 0 };
	int r;

	r = hist_collect(&t->hist_maps, slot->hist, slot->id, gen < 0 ? 0 : gen, d);
	if (r >= 0 && gen < 0) {
		/* Both: what an interval flip left in the other generation too.
		 * The same key in both is one entry of the dump. */
		r = hist_collect(&t->hist_maps, slot->hist, slot->id, 1, &other);
		for (size_t i = 0; r >= 0 && i < other.n; i++) {
			size_t k;

			for (k = 0; k < d->n; k++)
				if (!memcmp(d->v[k].key, other.v[i].key, d->key_size))
					break;
			if (k < d->n) {
				d->v[k].hitcount += other.v[i].hitcount;
				for (size_t j = 0; j < TRACERD_AGG_VALS; j++)
					d->v[k].sums[j] += other.v[i].sums[j];
				continue;
			}
			if (GROW(d->v, d->cap, d->n) < 0) {
				r = -ENOMEM;
				break;
			}
			d->v[d->n++] = other.v[i];
		}
		d->dropped += other.dropped;
		d->stack_cut += other.stack_cut;
		/* other's keys stay allocated while d points into them */
		if (r >= 0 && other.n) {
			d->extra = other.keys;
			other.keys = NULL;
		}
		hist_dump_free(&other);
	}
	if (r >= 0) {
		hist_merge_units(slot->hist, d->v, &d->n);
		hist_sort_entries(slot->hist, d->v, d->n);
	}
	return r;
}

/* GET /metrics: the counts an interval dump cleared stay counted there
 * (a stack key is no label: its histogram counts as "other" alone). */
static void keep_total(struct tracer *t, const struct sel_state *st, struct trace_slot *slot,
		       const struct hist_dump *d)
{
	size_t cap = hist_has_stack(slot->hist) ? 0 : t->cfg.metrics_max_series;
	int r;

	if (!slot->hist_total)
		slot->hist_total = calloc(1, sizeof(*slot->hist_total));
	r = slot->hist_total ? hist_total_add(slot->hist_total, d, cap) : -ENOMEM;
	if (r < 0)
		log_warning("selection %s: the metrics of %s:%s miss a dump's counts: %s",
			    st->conf->name, slot->event->system, slot->event->name, strerror(-r));
}

static void dump_slot(struct tracer *t, const struct sel_state *st, struct trace_slot *slot,
		      int gen, const char *why)
{
	struct hist_dump d = { 0 };
	int r = collect(t, slot, gen, &d);

	if (r < 0)
		log_warning("selection %s: cannot read the histogram of %s:%s: %s",
			    st->conf->name, slot->event->system, slot->event->name,
			    strerror(-r));
	/* An interval in which the event never came says nothing: with
	 * Events=syscalls:* it would be hundreds of empty dumps a minute. */
	else if (!d.n && !d.dropped && !strcmp(why, "interval"))
		;
	else if (t->hist_stdout)
		put_stdout(st, slot, &d, why, t->cfg.raw_pointers);
	else
		put_journal(t, st, slot, &d, why);
	if (r >= 0)
		out_slot_hist_cut(slot->out, d.stack_cut);
	if (r >= 0 && t->metrics && gen >= 0)
		keep_total(t, st, slot, &d);
	hist_dump_free(&d);
}

void hist_out_last(struct tracer *t, const struct sel_state *st, struct trace_slot *slot,
		   const char *why)
{
	struct hist_dump d = { 0 };

	if (!slot->hist)
		return;
	/* The maps are cleared either way: a later slot of this id starts empty. */
	if (slot->hist_done)
		collect(t, slot, -1, &d);
	else
		dump_slot(t, st, slot, -1, why);
	hist_dump_free(&d);
	hist_free(slot->hist);
	slot->hist = NULL;
}

void hist_out_stop(struct tracer *t)
{
	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++)
			hist_out_last(t, t->sels[i], t->sels[i]->slots[k], "final");
}

/* Flips every slot of st, waits until no event that saw the old generation
 * is still counting in it, then dumps it. Without a flip there is nothing to
 * dump: the slot keeps counting and shows it at the next interval. */
static void dump_interval(struct tracer *t, struct sel_state *st)
{
	uint32_t old[st->n_slots ? st->n_slots : 1];
	bool flipped[st->n_slots ? st->n_slots : 1], any = false;
	int r;

	for (size_t k = 0; k < st->n_slots; k++) {
		struct trace_slot *slot = st->slots[k];

		flipped[k] = slot->hist &&
			     hist_flip(&t->hist_maps, slot->id, &slot->hist->desc, &old[k]) >= 0;
		any |= flipped[k];
	}
	if (!any)
		return;
	r = hist_wait_programs(&t->hist_maps);
	if (r < 0) {
		/* Reading now could lose counts: the old generation stays,
		 * and counts on when a later flip brings it back. */
		log_warning("selection %s: cannot wait for the BPF programs (%s); "
			    "its counts stay in the maps for a later dump",
			    st->conf->name, strerror(-r));
		return;
	}
	for (size_t k = 0; k < st->n_slots; k++)
		if (flipped[k])
			dump_slot(t, st, st->slots[k], old[k], "interval");
}

void hist_out_tick(struct tracer *t, uint64_t now_usec)
{
	for (size_t i = 0; i < t->n_sels; i++) {
		struct sel_state *st = t->sels[i];
		unsigned iv = st->conf->aggregate_interval_sec;

		if (!st->conf->aggregate || !*st->conf->aggregate || !iv) {
			st->hist_due_usec = 0;
			continue;
		}
		/* A new selection, or a reload changed its interval. */
		if (!st->hist_due_usec || st->hist_interval_sec != iv) {
			st->hist_interval_sec = iv;
			st->hist_due_usec = now_usec + iv * 1000000ULL;
			continue;
		}
		if (now_usec < st->hist_due_usec)
			continue;
		dump_interval(t, st);
		st->hist_due_usec += iv * 1000000ULL;
		if (st->hist_due_usec <= now_usec)	/* a stalled loop: no catching up */
			st->hist_due_usec = now_usec + iv * 1000000ULL;
	}
}
