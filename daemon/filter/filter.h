/* SPDX-License-Identifier: GPL-2.0 */
/* Filter expressions: parsed against one event's fields and compiled into
 * the bytecode that bpf/filter.bpf.h runs before the ring-buffer reserve. */
#ifndef TRACERD_FILTER_H
#define TRACERD_FILTER_H

#include "config/config.h"
#include "diag.h"
#include "kernel-events/events.h"
#include "tracerd_record.h"

/* Fills desc->insns, n_insns and strs. An empty or NULL expression accepts
 * every record (n_insns = 0). Errors name pos's file:line:column. */
int filter_compile(const char *expr, const struct tp_event *e, const struct conf_pos *pos,
		   struct event_desc *desc, struct diag *d);

#endif
