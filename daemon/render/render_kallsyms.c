// SPDX-License-Identifier: GPL-2.0
/* %pS and %ps through /proc/kallsyms, loaded once: "name+0xoff/0xsize [mod]".
 * Without CAP_SYSLOG every address there reads 0 and nothing is loaded:
 * then a fallback, the kernel's own printf (attach/ksym.c), gives the
 * symbol, one BPF program run per address, remembered; without either no
 * lookup succeeds, and the caller prints a hash. */
#include <pthread.h>
#include "knobs.h"
#include "render_priv.h"
#include "util.h"

struct ksym {
	uint64_t addr;
	size_t order;		/* line in kallsyms: among aliases the first wins, as in the kernel */
	char *name;		/* "name" or "name [module]" */
};

static struct ksym *syms;
static size_t n_syms;
static bool loaded;

/* The fallback's answers: %pS text (NULL: no symbol) by address, a slot
 * per address hash; a colliding address takes the slot over. */
#define FALLBACK_CACHE 4096
static kallsyms_fallback_fn fallback;
static struct {
	uint64_t addr;
	bool valid;
	char *text;
} cache[FALLBACK_CACHE];

void kallsyms_set_fallback(kallsyms_fallback_fn fn)
{
	fallback = fn;
	for (size_t i = 0; i < FALLBACK_CACHE; i++) {
		free(cache[i].text);
		cache[i].text = NULL;
		cache[i].valid = false;
	}
}

static bool fallback_print(uint64_t addr, bool with_offset, struct strbuf *out)
{
	size_t i = (addr * 0x9e3779b97f4a7c15ULL) >> 52;	/* 12 bits: FALLBACK_CACHE */
	const char *t, *off, *end;

	if (!cache[i].valid || cache[i].addr != addr) {
		struct strbuf sb = { 0 };

		free(cache[i].text);
		cache[i].text = fallback(addr, true, &sb) && !sb.oom ? strdup(sb_str(&sb)) : NULL;
		sb_free(&sb);
		cache[i].addr = addr;
		cache[i].valid = true;
	}
	t = cache[i].text;
	if (!t)
		return false;
	off = with_offset ? NULL : strstr(t, "+0x");
	if (!off) {
		sb_puts(out, t);
		return true;
	}
	end = strchr(off, ' ');
	sb_put(out, t, off - t);
	if (end)
		sb_puts(out, end);
	return true;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void load(void)
{
	const char *path = knob_str(KNOB_KALLSYMS);	/* tests: a file without addresses */
	_cleanup_fclose_ FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	char line[512], name[256], mod[128], type;
	unsigned long long addr;
	size_t cap = 0;

	loaded = true;
	while (f && fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod);

		if (n < 3 || !addr || GROW(syms, cap, n_syms) < 0)
			continue;
		if (n == 4 ? asprintf(&syms[n_syms].name, "%s [%s]", name, mod) < 0 :
			     !(syms[n_syms].name = strdup(name)))
			continue;
		syms[n_syms].addr = addr;
		syms[n_syms].order = n_syms;
		n_syms++;
	}
	qsort_safe(syms, n_syms, sizeof(*syms), cmp_ksym);	/* none without CAP_SYSLOG */
}

/* The first symbol at the highest address <= addr. */
static const struct ksym *lookup(uint64_t addr)
{
	size_t lo = 0, hi = n_syms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	while (lo && syms[lo - 1].addr == syms[lo].addr)
		lo--;
	return &syms[lo];
}

static bool lookup_print(uint64_t addr, bool with_offset, struct strbuf *out)
{
	const struct ksym *s, *next;
	const char *mod;

	if (!loaded)
		load();
	if (!n_syms)
		return fallback && fallback_print(addr, with_offset, out);
	s = lookup(addr);
	next = s;
	while (next && next < syms + n_syms && next->addr == s->addr)
		next++;
	if (!s || next == syms + n_syms)
		return false;
	mod = strchr(s->name, ' ');
	sb_put(out, s->name, mod ? (size_t)(mod - s->name) : strlen(s->name));
	if (with_offset)
		sb_printf(out, "+0x%llx/0x%llx", (unsigned long long)(addr - s->addr),
			  (unsigned long long)(next->addr - s->addr));
	if (mod)
		sb_puts(out, mod);
	return true;
}

/* Under a lock: the consumer renders lines (%pS, stacks) while the sink
 * queue's writer renders the journal's fields, and the load, the
 * fallback's cache and its BPF program's .bss are one each. */
bool kallsyms_lookup_print(uint64_t addr, bool with_offset, struct strbuf *out)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	bool found;

	pthread_mutex_lock(&lock);
	found = lookup_print(addr, with_offset, out);
	pthread_mutex_unlock(&lock);
	return found;
}
