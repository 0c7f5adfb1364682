/* SPDX-License-Identifier: GPL-2.0 */
/* The filter compiler: a parsed expression to one event's bytecode. */
#ifndef TRACERD_FILTER_COMPILE_H
#define TRACERD_FILTER_COMPILE_H

#include "kernel-events/events.h"
#include "filter_ast.h"
#include "tracerd_record.h"

/* Fills desc->insns, n_insns and strs; a NULL tree accepts every record. */
int filter_compile_tree(const struct filter_text *src, const struct fnode *tree,
			const struct tp_event *e, struct event_desc *desc);

#endif
