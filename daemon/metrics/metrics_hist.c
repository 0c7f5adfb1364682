// SPDX-License-Identifier: GPL-2.0
/* Every Aggregate= histogram as metric families (issue 32):
 *   tracerd_hist_hits_total{selection,event,KEY...}
 *   tracerd_hist_sum_total{selection,event,field,KEY...}   per vals= sum
 * a label per key, named by its field, its value as the dump prints it;
 * and a histogram keyed by one .log2 or .buckets=N number also as a
 * Prometheus histogram, tracerd_hist{selection,event,field} (_bucket, _count,
 * and _sum when vals= sums the key's field: only then is the sum exact).
 * The counts are those since the slot began: what interval dumps cleared
 * (hist_total) and what the maps hold, read at the scrape and not cleared.
 * A stack key is no label (its values are unbounded): such a histogram
 * shows its total only. */
#include <stdlib.h>
#include <string.h>
#include "aggregate/hist_map.h"
#include "metrics_priv.h"
#include "util.h"

struct series {
	size_t labels;		/* ,name="value" per key: at fams.labels + this */
	uint64_t num;		/* the key's number (one-key histograms) */
	uint64_t hits, sums[TRACERD_AGG_VALS];
};

/* The three families, each written whole after the last slot, and the
 * series' labels of the slot at hand, in one buffer (no malloc a series). */
struct fams {
	struct strbuf hits, sums, buckets;
	struct strbuf labels, v;
	bool om;
	struct hist_format_opts o;
};

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A key's label name: its field's, unless that is one of ours. */
static void key_label(const struct hist *h, size_t i, struct strbuf *out)
{
	static const char *const ours[] = { "selection", "event", "field", "le", "quantile" };
	const char *n = h->keys[i].name;

	for (size_t k = 0; k < ARRAY_SIZE(ours); k++)
		if (!strcmp(n, ours[k]) || !strncmp(n, "__", 2)) {
			sb_puts(out, "key_");
			break;
		}
	for (; *n; n++)
		sb_putc(out, label_char(*n) ? *n : '_');
}

/* The series of a key's counts (or of the other keys': each key label
 * "other"); a stack histogram's one series has no key label. */
static void series_of(const struct hist *h, struct fams *f, const struct hist_count *e,
		      bool other, struct series *s)
{
	*s = (struct series){ .labels = f->labels.len, .hits = e->hitcount };
	memcpy(s->sums, e->sums, sizeof(s->sums));
	for (size_t i = 0; i < h->n_keys && !hist_has_stack(h); i++) {
		sb_reset(&f->v);
		if (!other)
			hist_format_key(h, i, e->key, &f->o, &f->v);
		sb_putc(&f->labels, ',');
		key_label(h, i, &f->labels);
		sb_putc(&f->labels, '=');
		metrics_value(&f->labels, other ? "other" : sb_str(&f->v));
	}
	sb_putc(&f->labels, '\0');
	if (!other && h->n_keys)
		s->num = hist_key_number(h, 0, e->key);
}

/* qsort has no context argument: the labels of the slot being sorted. */
static __thread const char *sorting;

static int cmp_labels(const void *a, const void *b)
{
	return strcmp(sorting + ((const struct series *)a)->labels,
		      sorting + ((const struct series *)b)->labels);
}

static int cmp_num(const void *a, const void *b)
{
	const struct series *x = a, *y = b;

	return x->num < y->num ? -1 : x->num > y->num;
}

/* Series of equal labels made one: the cgroups of one unit, keys that
 * print alike. */
static void merge_equal(const char *labels, struct series *v, size_t *n)
{
	size_t out = 0;

	sorting = labels;
	qsort_safe(v, *n, sizeof(*v), cmp_labels);
	for (size_t i = 1; i < *n; i++) {
		if (strcmp(labels + v[out].labels, labels + v[i].labels)) {
			v[++out] = v[i];
			continue;
		}
		v[out].hits += v[i].hits;
		for (size_t j = 0; j < TRACERD_AGG_VALS; j++)
			v[out].sums[j] += v[i].sums[j];
	}
	if (*n)
		*n = out + 1;
}

static void put_counts(struct fams *f, const struct hist *h, const char *sel,
		       const struct series *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *lb = sb_str(&f->labels) + v[i].labels;

		sb_puts(&f->hits, "tracerd_hist_hits_total{");
		metrics_event_labels(&f->hits, sel, h->e);
		sb_puts(&f->hits, lb);
		sb_puts(&f->hits, "} ");
		sb_put_u64(&f->hits, v[i].hits);
		sb_putc(&f->hits, '\n');
		for (size_t j = 0; j < h->n_vals; j++) {
			sb_puts(&f->sums, "tracerd_hist_sum_total{");
			metrics_event_labels(&f->sums, sel, h->e);
			sb_putc(&f->sums, ',');
			metrics_label(&f->sums, "field", h->vals[j].name);
			sb_puts(&f->sums, lb);
			sb_puts(&f->sums, "} ");
			sb_put_u64(&f->sums, v[i].sums[j]);
			sb_putc(&f->sums, '\n');
		}
	}
}

/* A one-key .log2 or .buckets=N histogram: a Prometheus histogram too. */
static bool is_distribution(const struct hist *h)
{
	const struct hist_key *k = &h->keys[0];

	return h->n_keys == 1 && !k->is_string &&
	       (k->mod == HM_LOG2 || (k->mod == HM_BUCKETS && !k->is_signed));
}

/* A bucket's upper bound, exact for integers: .log2 bucket k holds the v
 * whose roundup_pow_of_two(v) is 2^k, so v <= 2^k; .buckets=N bucket b
 * holds b..b+N-1. False: beyond u64, in +Inf only. */
static bool bucket_le(const struct hist_key *k, uint64_t num, uint64_t *le)
{
	if (k->mod == HM_LOG2) {
		if (num >= 64)
			return false;
		*le = 1ULL << num;
		return true;
	}
	if (num > UINT64_MAX - (k->buckets - 1))
		return false;
	*le = num + k->buckets - 1;
	return true;
}

/* The vals= sum of the key's own field: the histogram's exact _sum; -1: none. */
static int key_sum(const struct hist *h)
{
	for (size_t j = 0; j < h->n_vals; j++)
		if (!strcmp(h->vals[j].name, h->keys[0].name))
			return j;
	return -1;
}

/* _bucket per key (cumulative), +Inf with the other keys' counts, _count,
 * and _sum if exact. OpenMetrics has _count only beside a _sum. */
static void put_buckets(struct fams *f, const struct hist *h, const char *sel, struct series *v,
			size_t n, uint64_t other_hits, const uint64_t *other_sums)
{
	struct strbuf lb = { 0 };
	int js = key_sum(h);
	uint64_t cum = 0, sum = js >= 0 ? other_sums[js] : 0, le;

	metrics_event_labels(&lb, sel, h->e);
	sb_putc(&lb, ',');
	metrics_label(&lb, "field", h->keys[0].name);
	qsort_safe(v, n, sizeof(*v), cmp_num);
	for (size_t i = 0; i < n; i++) {
		cum += v[i].hits;
		sum += js >= 0 ? v[i].sums[js] : 0;
		if (bucket_le(&h->keys[0], v[i].num, &le))
			sb_printf(&f->buckets, "tracerd_hist_bucket{%s,le=\"%llu\"} %llu\n",
				  sb_str(&lb), (unsigned long long)le, (unsigned long long)cum);
	}
	cum += other_hits;
	sb_printf(&f->buckets, "tracerd_hist_bucket{%s,le=\"+Inf\"} %llu\n", sb_str(&lb),
		  (unsigned long long)cum);
	if (!f->om || js >= 0)
		sb_printf(&f->buckets, "tracerd_hist_count{%s} %llu\n", sb_str(&lb),
			  (unsigned long long)cum);
	if (js >= 0)
		sb_printf(&f->buckets, "tracerd_hist_sum{%s} %llu\n", sb_str(&lb),
			  (unsigned long long)sum);
	sb_free(&lb);
}

/* One slot's histogram: its counts since it began, as series. */
static int put_slot(struct tracer *t, const struct hist_peek *pk, const char *sel,
		    struct trace_slot *slot, struct fams *f)
{
	const struct hist *h = slot->hist;
	size_t cap = hist_has_stack(h) ? 0 : t->cfg.metrics_max_series, n = 0, ns = 0;
	_cleanup_free_ struct hist_count *v = NULL;
	_cleanup_free_ struct series *s = NULL;
	struct hist_counts cur = { 0 };
	struct hist_count other;
	bool has_other;
	int r;

	if (!slot->hist_total && !(slot->hist_total = calloc(1, sizeof(*slot->hist_total))))
		return -ENOMEM;
	r = hist_peek_slot(&t->hist_maps, pk, h, slot->id, &cur);
	if (r >= 0)
		r = hist_total_read(slot->hist_total, &cur, cap, &v, &n, &other);
	hist_counts_free(&cur);
	if (r < 0)
		return r;
	s = malloc((n + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	sb_reset(&f->labels);
	for (ns = 0; ns < n; ns++)
		series_of(h, f, &v[ns], false, &s[ns]);
	if (f->labels.oom)	/* the offsets point nowhere */
		return -ENOMEM;
	merge_equal(sb_str(&f->labels), s, &ns);
	has_other = slot->hist_total->has_other || !cap;
	if (has_other)
		series_of(h, f, &other, true, &s[ns++]);
	if (f->labels.oom)
		return -ENOMEM;
	put_counts(f, h, sel, s, ns);
	if (cap && is_distribution(h))
		put_buckets(f, h, sel, s, ns - has_other, other.hitcount, other.sums);
	return 0;
}

/* A family's head and samples, if it has any. */
static int put_family(struct strbuf *out, bool om, const char *name, const char *type,
		      const char *help, const struct strbuf *samples)
{
	if (samples->oom)
		return -ENOMEM;
	if (!samples->len)
		return 0;
	metrics_head(out, om, name, type, help);
	sb_put(out, sb_str(samples), samples->len);
	return 0;
}

int metrics_hist_write(struct tracer *t, struct strbuf *out, bool om)
{
	struct fams f = { .om = om, .o = { .raw_pointers = t->cfg.raw_pointers } };
	struct hist_peek pk = { 0 };
	bool any = false;
	int r;

	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++)
			any |= t->sels[i]->slots[k]->hist != NULL;
	if (!any)	/* no map read for nothing */
		return 0;
	r = hist_peek_read(&t->hist_maps, &pk);

	for (size_t i = 0; r >= 0 && i < t->n_sels; i++)
		for (size_t k = 0; r >= 0 && k < t->sels[i]->n_slots; k++)
			if (t->sels[i]->slots[k]->hist)
				r = put_slot(t, &pk, t->sels[i]->conf->name, t->sels[i]->slots[k], &f);
	if (r >= 0)
		r = put_family(out, om, "tracerd_hist_hits_total", "counter", "Events an Aggregate= "
			       "histogram counted, by key (a stack key's histogram: its total only).",
			       &f.hits);
	if (r >= 0)
		r = put_family(out, om, "tracerd_hist_sum_total", "counter",
			       "An Aggregate= histogram's vals= sums, by field and key.", &f.sums);
	if (r >= 0)
		r = put_family(out, om, "tracerd_hist", "histogram", "Aggregate= histograms keyed "
			       "by one .log2 or .buckets number, as distributions.", &f.buckets);
	hist_peek_free(&pk);
	sb_free(&f.hits);
	sb_free(&f.sums);
	sb_free(&f.buckets);
	sb_free(&f.labels);
	sb_free(&f.v);
	return r;
}
