/* SPDX-License-Identifier: GPL-2.0 */
/* --filter on stored records: the bytecode filter_compile() emits, run by
 * the BPF side's own interpreter (bpf/filter.bpf.h) built for userspace, so
 * that a filter means on read exactly what it means in the kernel. */
#ifndef TRACERD_STORE_FILTER_H
#define TRACERD_STORE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracerd_record.h"

bool store_filter_match(const struct event_desc *d, const struct trace_rec_hdr *h,
			const uint8_t *rec, size_t len);
/* The same on buf as it is, which holds 2 * TRACERD_MAX_RECORD bytes (as far
 * as the interpreter may look, as the BPF side's scratch buffer): for tests
 * that put something past len on purpose. */
bool store_filter_run(const struct event_desc *d, const struct trace_rec_hdr *h,
		      const uint8_t *buf, size_t len);

#endif
