// SPDX-License-Identifier: GPL-2.0
/* Records counted per CPU (store_cpus.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store/store_cpus.h"

static int reserve(struct cpu_counts *c, size_t n)
{
	uint64_t *v;

	if (n <= c->n)
		return 0;
	if (n > STORE_MAX_CPUS)
		return -ERANGE;
	v = realloc(c->v, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + c->n, 0, (n - c->n) * sizeof(*v));
	c->v = v;
	c->n = n;
	return 0;
}

int cpu_counts_add(struct cpu_counts *c, unsigned cpu, uint64_t k)
{
	int r = reserve(c, (size_t)cpu + 1);

	if (r < 0)
		return r;
	c->v[cpu] += k;
	return 0;
}

int cpu_counts_add_all(struct cpu_counts *to, const struct cpu_counts *from)
{
	int r = reserve(to, from->n);

	for (size_t i = 0; r >= 0 && i < from->n; i++)
		to->v[i] += from->v[i];
	return r;
}

void cpu_counts_zero(struct cpu_counts *c)
{
	if (c->n)
		memset(c->v, 0, c->n * sizeof(*c->v));
}

void cpu_counts_format(const struct cpu_counts *c, struct strbuf *out)
{
	const char *sep = "";

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]) {
			sb_printf(out, "%s%zu:%llu", sep, i, (unsigned long long)c->v[i]);
			sep = ",";
		}
}

int cpu_counts_parse(struct cpu_counts *c, const char *text)
{
	const char *p = text;

	while (*p) {
		char *end;
		unsigned long cpu = strtoul(p, &end, 10);
		unsigned long long k;
		int r;

		if (end == p || *end != ':')
			return -EBADMSG;
		p = end + 1;
		k = strtoull(p, &end, 10);
		if (end == p || (*end && *end != ',') || cpu >= STORE_MAX_CPUS)
			return -EBADMSG;
		r = cpu_counts_add(c, cpu, k);
		if (r < 0)
			return r;
		p = *end ? end + 1 : end;
	}
	return 0;
}

void cpu_counts_free(struct cpu_counts *c)
{
	free(c->v);
	*c = (struct cpu_counts){ 0 };
}
