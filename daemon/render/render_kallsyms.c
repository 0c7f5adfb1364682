// SPDX-License-Identifier: GPL-2.0
/* %pS and %ps through /proc/kallsyms, loaded once: "name+0xoff/0xsize [mod]".
 * Without CAP_SYSLOG every address there reads 0 and nothing is loaded:
 * then no lookup succeeds, and the caller prints a hash. */
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

bool kallsyms_lookup_print(uint64_t addr, bool with_offset, struct strbuf *out)
{
	const struct ksym *s, *next;
	const char *mod;

	if (!loaded)
		load();
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
