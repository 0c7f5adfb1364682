/* SPDX-License-Identifier: GPL-2.0 */
/* Records counted per CPU: a stream's numbering per CPU (FILE chunk:
 * first_record_cpus=, docs/STORE.md), what a block holds and what a reader
 * passed, so that the records MaxUse= deleted unread are known per CPU and
 * an export marks each CPU's where they were. */
#ifndef TRACERD_STORE_CPUS_H
#define TRACERD_STORE_CPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "strbuf.h"

/* CPUs past this in a file are taken for corruption, not counted. */
#define STORE_MAX_CPUS	8192

struct cpu_counts {
	uint64_t *v;		/* by CPU */
	size_t n;		/* CPUs v holds */
};

/* Adds k records on cpu; -ENOMEM, -ERANGE past STORE_MAX_CPUS. */
int cpu_counts_add(struct cpu_counts *c, unsigned cpu, uint64_t k);
/* Adds every CPU's of from. */
int cpu_counts_add_all(struct cpu_counts *to, const struct cpu_counts *from);
void cpu_counts_zero(struct cpu_counts *c);
static inline uint64_t cpu_counts_get(const struct cpu_counts *c, unsigned cpu)
{
	return cpu < c->n ? c->v[cpu] : 0;
}
/* "cpu:count,..." of the CPUs with records; "" none. */
void cpu_counts_format(const struct cpu_counts *c, struct strbuf *out);
/* The text cpu_counts_format() wrote; -EBADMSG if it is not that. */
int cpu_counts_parse(struct cpu_counts *c, const char *text);
void cpu_counts_free(struct cpu_counts *c);

#endif
