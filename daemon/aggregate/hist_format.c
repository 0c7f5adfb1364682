// SPDX-License-Identifier: GPL-2.0
/* Dumped histogram entries in the layout of the kernel's `hist` file
 * (kernel/trace/trace_events_hist.c, hist_trigger_show()):
 *
 *   # event histogram
 *   #
 *   # trigger info: hist:keys=next_comm:vals=hitcount:sort=hitcount:size=2048 [active]
 *   #
 *
 *   { next_comm: bash                                               } hitcount:         42
 *
 *   Totals:
 *       Hits: 42
 *       Entries: 1
 *       Dropped: 0
 *
 * Two differences: a flag or symbolic key (no modifier) shows the text the
 * event's line shows, then the number ("prev_state: S [1]" in the execname
 * layout), and addresses (.sym, .sym-offset, .hex of a kernel address) are
 * hashed as %p is unless RawPointers=yes. */
#include <inttypes.h>
#include "hist.h"
#include "kernel-events/cgroup.h"
#include "render/render_priv.h"
#include "util.h"

/* x86-64's kernel half: what .hex must not print raw. */
#define KERNEL_ADDR_MIN 0xffff800000000000ULL

static uint64_t key_num(const struct hist_key *k, const uint8_t *key)
{
	uint64_t v;

	memcpy(&v, key + k->key_off, sizeof(v));
	return v;
}

static const char *key_str(const struct hist_key *k, const uint8_t *key, size_t *n)
{
	const char *s = (const char *)key + k->key_off;

	*n = strnlen(s, k->width);
	return s;
}

/* printf's "%-*s" on a string that need not end in a NUL. */
static void put_padded(struct strbuf *out, const char *s, size_t n, size_t width)
{
	sb_put(out, s, n);
	while (n++ < width)
		sb_putc(out, ' ');
}

static void put_symbol(const struct hist_key *k, uint64_t v, const struct hist_format_opts *o,
		       struct strbuf *out)
{
	struct strbuf sym = { 0 };

	sb_putc(out, '[');
	if (o->raw_pointers)
		sb_printf(out, "%" PRIx64, v);
	else
		render_plain_pointer(v, false, out);
	sb_puts(out, "] ");
	/* Unknown to kallsyms: the kernel prints the address; hashed here
	 * unless RawPointers=yes, as the renderer's %pS does. */
	if (!kallsyms_lookup_print(v, k->mod == HM_SYM_OFFSET, &sym)) {
		if (o->raw_pointers)
			sb_printf(&sym, "0x%" PRIx64, v);
		else
			render_plain_pointer(v, false, &sym);
	}
	put_padded(out, sb_str(&sym), sym.len, k->mod == HM_SYM_OFFSET ? 55 : 45);
	sb_free(&sym);
}

/* A flag or symbolic field as the event's line shows it. */
static void put_symbolic(const struct hist *h, const struct hist_key *k, uint64_t v,
			 const struct hist_format_opts *o, struct strbuf *out)
{
	const struct render_opts ro = { .raw_pointers = o->raw_pointers };
	struct strbuf text = { 0 };

	render_field_shown(h->e, &ro, k->field, v, &text);
	put_padded(out, sb_str(&text), text.len, 16);
	sb_printf(out, "[%10" PRIu64 "]", v);
	sb_free(&text);
}

/* A frame as the kernel's %pS prints it, "func+0xoff/0xsize [module]";
 * an address in no symbol is hashed, as %p is, unless RawPointers=yes. */
static void put_frame(uint64_t ip, const struct hist_format_opts *o, struct strbuf *out)
{
	if (kallsyms_lookup_print(ip, true, out))
		return;
	if (o->raw_pointers)
		sb_printf(out, "0x%" PRIx64, ip);
	else
		render_plain_pointer(ip, false, out);
}

/* A common_stacktrace key (hist_stack.c made it): the frames, each after
 * sep, and a line that says so where the stack was cut at the depth. */
static void put_stack(const struct hist_key *k, const uint8_t *key, const char *sep,
		      const struct hist_format_opts *o, struct strbuf *out)
{
	uint64_t f[TRACERD_HIST_STACK_FRAMES];

	memcpy(f, key + k->key_off, sizeof(f));
	for (size_t i = 0; i < TRACERD_HIST_STACK_DEPTH && f[i]; i++) {
		sb_puts(out, sep);
		put_frame(f[i], o, out);
	}
	if (f[TRACERD_HIST_STACK_DEPTH] == HIST_STACK_CUT)
		sb_printf(out, "%s... (cut at %d frames)", sep, TRACERD_HIST_STACK_DEPTH);
}

/* A unit or cgroup key's name: the unit (or "-" for a cgroup of none, such
 * as the root's kernel threads), the cgroup's path; NULL: not known. */
static const char *cgroup_key_name(const struct hist_key *k, uint64_t id)
{
	const struct cgroup_info *c = cgroup_lookup(id);

	if (!c)
		return NULL;
	if (k->src == SRC_CGROUP)
		return c->path;
	return c->names.unit[0] ? c->names.unit : "-";
}

static void put_cgroup_key(const struct hist_key *k, uint64_t id, struct strbuf *out)
{
	const char *s = cgroup_key_name(k, id);
	char num[32];

	if (!s) {	/* gone before the dump: its id */
		snprintf(num, sizeof(num), "cgroup %" PRIu64, id);
		s = num;
	}
	put_padded(out, s, strlen(s), 50);
}

static void put_value(const struct hist *h, const struct hist_key *k, const uint8_t *key,
		      const struct hist_format_opts *o, struct strbuf *out)
{
	uint64_t v = k->is_string ? 0 : key_num(k, key);
	const char *s;
	size_t n;

	if (k->is_string) {
		s = key_str(k, key, &n);
		put_padded(out, s, n, 50);
		return;
	}
	if (k->src == SRC_CGROUP || k->src == SRC_UNIT) {
		put_cgroup_key(k, v, out);
		return;
	}
	switch (k->mod) {
	case HM_HEX:
		if (!o->raw_pointers && v >= KERNEL_ADDR_MIN)
			render_plain_pointer(v, false, out);
		else
			sb_printf(out, "%" PRIx64, v);
		return;
	case HM_SYM:
	case HM_SYM_OFFSET:
		put_symbol(k, v, o, out);
		return;
	case HM_EXECNAME:
		s = (const char *)key + k->key_off + 8;
		put_padded(out, s, strnlen(s, TRACERD_COMM_LEN), 16);
		sb_printf(out, "[%10" PRIu64 "]", v);
		return;
	case HM_SYSCALL:
		s = hist_syscall_name(v);
		put_padded(out, s ? s : "unknown_syscall", strlen(s ? s : "unknown_syscall"), 30);
		sb_printf(out, "[%3" PRIu64 "]", v);
		return;
	case HM_LOG2:
		sb_printf(out, "~ 2^%-2" PRIu64, v);
		return;
	case HM_BUCKETS:
		sb_printf(out, "~ %" PRIu64 "-%" PRIu64, v, v + k->buckets - 1);
		return;
	default:
		if (k->tab)
			put_symbolic(h, k, v, o, out);
		else
			sb_printf(out, "%10" PRIu64, v);
	}
}

void hist_format_key_kernel(const struct hist *h, size_t i, const uint8_t *key,
			    const struct hist_format_opts *o, struct strbuf *out)
{
	/* hist_trigger_print_key(): the name, then a frame per line after 9
	 * spaces ("%*c" of 1 + 8), whatever alias the trigger used */
	if (h->keys[i].is_stack) {
		sb_puts(out, "common_stacktrace:");
		put_stack(&h->keys[i], key, "\n         ", o, out);
		sb_putc(out, '\n');
		return;
	}
	sb_printf(out, "%s: ", h->keys[i].name);
	put_value(h, &h->keys[i], key, o, out);
}

uint64_t hist_key_number(const struct hist *h, size_t i, const uint8_t *key)
{
	return key_num(&h->keys[i], key);
}

void hist_format_key(const struct hist *h, size_t i, const uint8_t *key,
		     const struct hist_format_opts *o, struct strbuf *out)
{
	struct strbuf t = { 0 };
	size_t start = out->len;
	bool space = false;

	if (h->keys[i].is_stack) {	/* a frame per line */
		put_stack(&h->keys[i], key, "\n", o, &t);
		sb_puts(out, sb_str(&t) + (t.len ? 1 : 0));
		sb_free(&t);
		return;
	}
	/* The kernel's text, its padding taken out: "bash [1234]", "~ 2^10". */
	put_value(h, &h->keys[i], key, o, &t);
	for (const char *s = sb_str(&t); *s; s++) {
		if (*s == ' ') {
			space = true;
			continue;
		}
		if (space && out->len > start && out->buf[out->len - 1] != '[')
			sb_putc(out, ' ');
		space = false;
		sb_putc(out, *s);
	}
	sb_free(&t);
}

/* onmax()/onchange(): as the kernel's track_data_print(); an entry whose
 * value never moved from 0 shows 0 and nothing saved, as the kernel's
 * zeroed element does. */
static void format_track(const struct hist *h, const struct hist_entry *e, struct strbuf *out)
{
	const struct hist_trigger *t = &h->trig;

	sb_printf(out, "\n\t%s: %10" PRIu64, t->track == TRACK_MAX ? "max" : "changed",
		  e->tracked ? (uint64_t)e->track.val : 0);
	for (size_t i = 0; i < t->n_saves; i++) {
		const uint8_t *cell = e->track.saved + t->saves[i].off;
		const char *name = h->spec.track.saves[i].name;
		uint64_t v = 0;

		if (t->saves[i].src.kind == HOP_STR || t->saves[i].src.kind == HOP_COMM) {
			sb_printf(out, "  %s: %-32.*s", name, e->tracked ? TRACERD_TRACK_CELL : 0,
				  (const char *)cell);
			continue;
		}
		if (e->tracked)
			memcpy(&v, cell, sizeof(v));
		sb_printf(out, "  %s: %10" PRIu64, name, v);
	}
}

static void format_entry(const struct hist *h, const struct hist_entry *e,
			 const struct hist_format_opts *o, struct strbuf *out)
{
	bool multiline = false;

	sb_puts(out, "{ ");
	for (size_t i = 0; i < h->n_keys; i++) {
		if (i)
			sb_puts(out, ", ");
		hist_format_key_kernel(h, i, e->key, o, out);
		multiline |= h->keys[i].is_stack;
	}
	/* The kernel leaves the space out after a stack's last line. */
	sb_printf(out, "%s} hitcount: %10" PRIu64, multiline ? "" : " ", e->hitcount);
	for (size_t i = 0; i < h->n_vals; i++)
		sb_printf(out, h->vals[i].hex ? "  %s: %10" PRIx64 : "  %s: %10" PRIu64,
			  h->vals[i].name, e->sums[i]);
	if (h->trig.track)
		format_track(h, e, out);
	sb_putc(out, '\n');
}

void hist_format(const struct hist *h, const struct hist_entry *v, size_t n, uint64_t dropped,
		 const struct hist_format_opts *o, struct strbuf *out)
{
	uint64_t hits = dropped;

	sb_printf(out, "# event histogram\n#\n# trigger info: %s [active]\n#\n\n", h->trigger);
	for (size_t i = 0; i < n; i++) {
		format_entry(h, &v[i], o, out);
		hits += v[i].hitcount;
	}
	sb_printf(out, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %zu\n    Dropped: %" PRIu64 "\n",
		  hits, n, dropped);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_key(const struct hist_key *k, const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y;

	if (k->is_string)
		return strncmp((const char *)a + k->key_off, (const char *)b + k->key_off, k->width);
	if (k->is_stack)
		return memcmp(a + k->key_off, b + k->key_off, k->width);
	x = key_num(k, a);
	y = key_num(k, b);
	if (k->src == SRC_CGROUP || k->src == SRC_UNIT) {
		const char *s = cgroup_key_name(k, x), *t = cgroup_key_name(k, y);

		if (s && t && strcmp(s, t))
			return strcmp(s, t);
	}
	if (k->is_signed && k->mod != HM_LOG2)
		return (int64_t)x < (int64_t)y ? -1 : (int64_t)x > (int64_t)y;
	return cmp_u64(x, y);
}

/* The first id of each unit name met: the key all that unit's entries take. */
static uint64_t unit_representative(const struct hist_key *k, uint64_t id, uint64_t **seen,
				    size_t *n_seen, size_t *cap)
{
	const char *name = cgroup_key_name(k, id);

	if (!name)
		return id;
	for (size_t i = 0; i < *n_seen; i++)
		if (!strcmp(cgroup_key_name(k, (*seen)[i]), name))
			return (*seen)[i];
	if (GROW(*seen, *cap, *n_seen) < 0)
		return id;
	(*seen)[(*n_seen)++] = id;
	return id;
}

static __thread size_t merge_key_size;

static int cmp_key_bytes(const void *a, const void *b)
{
	return memcmp(((const struct hist_entry *)a)->key, ((const struct hist_entry *)b)->key,
		      merge_key_size);
}

void hist_merge_units(const struct hist *h, struct hist_entry *v, size_t *n)
{
	size_t out = 0;
	bool any = false;

	for (size_t i = 0; i < h->n_keys; i++)
		any |= h->keys[i].src == SRC_UNIT;
	if (!any)
		return;
	for (size_t i = 0; i < h->n_keys; i++) {
		_cleanup_free_ uint64_t *seen = NULL;
		size_t n_seen = 0, cap = 0;

		if (h->keys[i].src != SRC_UNIT)
			continue;
		for (size_t e = 0; e < *n; e++) {
			uint8_t *key = (uint8_t *)v[e].key + h->keys[i].key_off;
			uint64_t id;

			memcpy(&id, key, 8);
			id = unit_representative(&h->keys[i], id, &seen, &n_seen, &cap);
			memcpy(key, &id, 8);
		}
	}
	/* Entries now equal in their key bytes become one: sorted by them,
	 * neighbours. */
	merge_key_size = h->desc.key_size;
	qsort_safe(v, *n, sizeof(*v), cmp_key_bytes);
	for (size_t e = 0; e < *n; e++) {
		if (out && !memcmp(v[out - 1].key, v[e].key, merge_key_size)) {
			v[out - 1].hitcount += v[e].hitcount;
			for (size_t j = 0; j < TRACERD_AGG_VALS; j++)
				v[out - 1].sums[j] += v[e].sums[j];
			continue;
		}
		v[out++] = v[e];
	}
	*n = out;
}

/* qsort has no context argument: the histogram being sorted. */
static __thread const struct hist *sorting;

static int cmp_entries(const void *pa, const void *pb)
{
	const struct hist_entry *a = pa, *b = pb;
	const struct hist *h = sorting;
	int c = 0;

	for (size_t i = 0; i < h->n_sort && !c; i++) {
		const struct hist_sort *s = &h->sort[i];

		c = s->kind == HS_HITCOUNT ? cmp_u64(a->hitcount, b->hitcount) :
		    s->kind == HS_VAL ? cmp_u64(a->sums[s->idx], b->sums[s->idx]) :
		    cmp_key(&h->keys[s->idx], a->key, b->key);
		if (s->descending)
			c = -c;
	}
	for (size_t i = 0; i < h->n_keys && !c; i++)
		c = cmp_key(&h->keys[i], a->key, b->key);
	return c;
}

void hist_sort_entries(const struct hist *h, struct hist_entry *v, size_t n)
{
	sorting = h;
	qsort_safe(v, n, sizeof(*v), cmp_entries);
	sorting = NULL;
}
