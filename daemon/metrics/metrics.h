/* SPDX-License-Identifier: GPL-2.0 */
/* GET /metrics: what tracerd counts, in the Prometheus text exposition
 * format, read at the scrape from the counters the reports read. */
#ifndef TRACERD_METRICS_H
#define TRACERD_METRICS_H

#include <stdbool.h>
#include "strbuf.h"
#include "tracer/tracer.h"

struct http_stats;

/* The exposition, appended to out: the text format 0.0.4, or OpenMetrics
 * 1.0.0 (om); reads the BPF counters and maps first, clears nothing. With
 * server, the metrics server's own counts too. */
int metrics_write(struct tracer *t, const struct http_stats *server, bool om, struct strbuf *out);
/* Does an Accept header's value prefer OpenMetrics to the text format? */
bool metrics_wants_openmetrics(const char *accept);

#endif
