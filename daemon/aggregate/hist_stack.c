// SPDX-License-Identifier: GPL-2.0
/* common_stacktrace keys as dumped from the map, made into what the kernel's
 * hist file shows: the tracing machinery's leading frames taken off
 * (kernel-events/stack_skip.c), then at most TRACERD_HIST_STACK_DEPTH frames
 * from the tracepoint's caller on. Two stacks the program kept apart only
 * by those frames (__traceiter_<event> is there while another tracer
 * probes the same tracepoint) or by frames past the depth are then one
 * entry: their counts are added. */
#include "hist_map.h"
#include "kernel-events/stack_skip.h"
#include "render/render_priv.h"
#include "util.h"

/* %ps: kallsyms, or without its addresses the kernel's own printf. */
static bool function_of(uint64_t ip, struct strbuf *out, void *ctx)
{
	(void)ctx;
	return kallsyms_lookup_print(ip, false, out);
}

/* One key's frames, in place: frames 0..DEPTH-1 from the caller on, then
 * HIST_STACK_CUT at DEPTH if the stack went deeper (or may have: the
 * program's buffer was full), zeros after. True: cut. */
static bool canon_stack(uint8_t *p)
{
	uint64_t f[TRACERD_HIST_STACK_FRAMES] = { 0 };
	size_t n = 0, skip, keep;

	memcpy(f, p, sizeof(f));
	while (n < TRACERD_HIST_STACK_FRAMES && f[n])
		n++;
	skip = stack_skip(f, n, function_of, NULL);
	keep = n - skip;
	memset(p, 0, sizeof(f));
	memcpy(p, f + skip, (keep < TRACERD_HIST_STACK_DEPTH ? keep : TRACERD_HIST_STACK_DEPTH) * 8);
	if (keep > TRACERD_HIST_STACK_DEPTH || n == TRACERD_HIST_STACK_FRAMES) {
		uint64_t cut = HIST_STACK_CUT;

		memcpy(p + TRACERD_HIST_STACK_DEPTH * 8, &cut, 8);
		return true;
	}
	return false;
}

bool hist_has_stack(const struct hist *h)
{
	for (size_t i = 0; i < h->n_keys; i++)
		if (h->keys[i].is_stack)
			return true;
	return false;
}

void hist_stack_canon(const struct hist *h, struct hist_dump *d)
{
	if (!hist_has_stack(h) || !d->n)
		return;
	/* Counted here, where the skip is known: the program cannot tell a
	 * 17-frame stack under one skipped frame (whole) from one without
	 * (cut), so the count is the hitcounts of what the dump shows cut. */
	for (size_t i = 0; i < d->n; i++) {
		bool cut = false;

		for (size_t k = 0; k < h->n_keys; k++)
			if (h->keys[k].is_stack)
				cut |= canon_stack((uint8_t *)d->v[i].key + h->keys[k].key_off);
		if (cut)
			d->stack_cut += d->v[i].hitcount;
	}
	hist_dump_merge(d);
}
