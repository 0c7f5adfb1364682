/* SPDX-License-Identifier: GPL-2.0 */
/* Inside daemon/metrics: the exposition's pieces, shared by the counts
 * (metrics.c) and the histograms (metrics_hist.c). */
#ifndef TRACERD_METRICS_PRIV_H
#define TRACERD_METRICS_PRIV_H

#include <stdbool.h>
#include "strbuf.h"
#include "tracer/tracer.h"

/* name="value", the value's backslash, double quote and newline escaped. */
void metrics_label(struct strbuf *out, const char *name, const char *v);
/* "value", escaped as a label's. */
void metrics_value(struct strbuf *out, const char *v);
/* HELP and TYPE of a metric family. In OpenMetrics (om) a counter's family
 * is named without its samples' "_total". */
void metrics_head(struct strbuf *out, bool om, const char *name, const char *type,
		  const char *help);
/* selection="...",event="SYS:EVENT" */
void metrics_event_labels(struct strbuf *out, const char *sel, const struct tp_event *e);
/* Every Aggregate= histogram: hits and sums per key, and a Prometheus
 * histogram of those keyed by one .log2 or .buckets number. */
int metrics_hist_write(struct tracer *t, struct strbuf *out, bool om);

#endif
