// SPDX-License-Identifier: GPL-2.0
/* Kernel stack frames' symbols in store files: see store_ksyms.h. */
#include <stdlib.h>
#include <string.h>
#include "store/store_ksyms.h"
#include "tracerd_record.h"
#include "util.h"

static size_t slot_of(uint64_t addr, size_t cap)
{
	return (addr * 0x9e3779b97f4a7c15ULL) >> 20 & (cap - 1);
}

static int set_grow(struct ksym_set *s)
{
	struct ksym_set n = { .cap = s->cap ? s->cap * 2 : 1024 };

	n.addr = calloc(n.cap, sizeof(*n.addr));
	n.gen = calloc(n.cap, sizeof(*n.gen));
	if (!n.addr || !n.gen) {
		ksym_set_free(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->cap; i++)
		if (s->addr[i])
			(void)ksym_set_add(&n, s->addr[i], s->gen[i]);
	ksym_set_free(s);
	*s = n;
	return 0;
}

bool ksym_set_add(struct ksym_set *s, uint64_t addr, uint64_t gen)
{
	size_t i;

	if (!addr || ((s->n + 1) * 2 > s->cap && set_grow(s) < 0))
		return !!addr;	/* no memory: described again, never left out */
	for (i = slot_of(addr, s->cap); s->addr[i] && s->addr[i] != addr; i = (i + 1) & (s->cap - 1))
		;
	if (s->addr[i] == addr && s->gen[i] == gen)
		return false;
	if (!s->addr[i])
		s->n++;
	s->addr[i] = addr;
	s->gen[i] = gen;
	return true;
}

void ksym_set_free(struct ksym_set *s)
{
	free(s->addr);
	free(s->gen);
	*s = (struct ksym_set){ 0 };
}

void store_ksyms_frames(uint32_t flags, const uint8_t *rec, size_t len, struct bbuf *out)
{
	struct trace_stack_tail t;
	uint32_t off;

	if (!(flags & TRACERD_REC_STACKS) || !tracerd_stacks_split(rec, len, &t, &off))
		return;
	bbuf_put(out, rec + off, 8 * (size_t)t.n_kern);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct store_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int store_ksyms_parse(struct store_ksyms *t, const uint8_t *p, size_t len, uint32_t n)
{
	struct rcur rc = { p, p + len, false };

	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = rcur_varint(&rc);
		char *text = rcur_string(&rc);

		if (rc.bad || !text) {
			free(text);
			return rc.bad ? -EBADMSG : -ENOMEM;
		}
		if (GROW(t->v, t->cap, t->n) < 0) {
			free(text);
			return -ENOMEM;
		}
		t->v[t->n++] = (struct store_ksym){ addr, text };
	}
	t->sorted = false;
	return 0;
}

const char *store_ksyms_find(struct store_ksyms *t, uint64_t addr)
{
	struct store_ksym key = { .addr = addr }, *k;

	if (!t->sorted) {
		qsort_safe(t->v, t->n, sizeof(*t->v), cmp_ksym);
		t->sorted = true;
	}
	k = t->n ? bsearch(&key, t->v, t->n, sizeof(*t->v), cmp_ksym) : NULL;
	return k ? k->text : NULL;
}

void store_ksyms_free(struct store_ksyms *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].text);
	free(t->v);
	*t = (struct store_ksyms){ 0 };
}
