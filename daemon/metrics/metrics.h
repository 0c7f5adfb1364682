/* SPDX-License-Identifier: GPL-2.0 */
/* GET /metrics: what tracerd counts, in the Prometheus text exposition
 * format, read at the scrape from the counters the reports read. */
#ifndef TRACERD_METRICS_H
#define TRACERD_METRICS_H

#include "strbuf.h"
#include "tracer/tracer.h"

/* The exposition, appended to out; reads the BPF counters first. */
int metrics_write(struct tracer *t, struct strbuf *out);

#endif
