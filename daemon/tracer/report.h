/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_REPORT_H
#define TRACERD_REPORT_H

#include <stdio.h>
#include "tracer.h"

void report_stats(struct tracer *t, bool final);
void report_events(struct tracer *t, FILE *out);
void report_suppressed(struct tracer *t);

#endif
