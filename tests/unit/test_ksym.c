// SPDX-License-Identifier: GPL-2.0
/* attach/ksym.c, the symbols tracerd prints for %pS and %ps without
 * CAP_SYSLOG (the kernel's own printf through bpf/ksym.bpf.c), against
 * /proc/kallsyms read as root, the way render_kallsyms.c prints them with
 * CAP_SYSLOG (root). Addresses from every 30th text symbol: its first byte,
 * the next, its middle and its last: the two must print the same, with and
 * without the offset. An address in no symbol prints nothing (never the
 * address the kernel would give back). */
#include <stdio.h>
#include <stdlib.h>
#include "attach/ksym.h"
#include "render/render_priv.h"
#include "test.h"
#include "util.h"

struct sym {
	uint64_t addr;
	char type;
};

/* Text symbols of /proc/kallsyms in address order; 0 without CAP_SYSLOG. */
static size_t text_symbols(struct sym **ret)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/kallsyms", "re");
	unsigned long long a;
	struct sym *v = NULL;
	size_t n = 0, cap = 0;
	char line[512], t;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c", &a, &t) == 2 && a && (t == 't' || t == 'T') &&
		    GROW(v, cap, n) >= 0)
			v[n++] = (struct sym){ a, t };
	*ret = v;
	return n;
}

static int compare(uint64_t addr, bool with_offset, unsigned *bad)
{
	struct strbuf want = { 0 }, got = { 0 };
	bool w = kallsyms_lookup_print(addr, with_offset, &want);
	bool g = ksym_print(addr, with_offset, &got);

	if (w != g || strcmp(sb_str(&want), sb_str(&got))) {
		if ((*bad)++ < 5)
			EXPECT(0, "%llx%s: kallsyms '%s' (%d), kernel '%s' (%d)", (unsigned long long)addr,
			       with_offset ? "" : " (%ps)", sb_str(&want), w, sb_str(&got), g);
	}
	sb_free(&want);
	sb_free(&got);
	return w;
}

static void the_kernel_prints_what_kallsyms_says(void)
{
	_cleanup_free_ struct sym *v = NULL;
	size_t n = text_symbols(&v);
	unsigned bad = 0, done = 0;

	EXPECT(n > 10000, "%zu text symbols in /proc/kallsyms (root needed)", n);
	for (size_t i = 0; i + 1 < n; i += 30) {
		uint64_t a = v[i].addr, next = a;

		for (size_t k = i + 1; k < n && next == a; k++)
			next = v[k].addr;
		if (next == a)
			break;
		uint64_t at[] = { a, a + 1, a + (next - a) / 2, next - 1 };
		for (size_t k = 0; k < ARRAY_SIZE(at); k++) {
			compare(at[k], true, &bad);
			compare(at[k], false, &bad);
			done += 2;
		}
	}
	printf("# %u addresses compared, %u differ\n", done, bad);
	EXPECT(done > 1000 && !bad, "%u of %u differ", bad, done);
	ksym_close();
}

static void no_symbol_prints_nothing(void)
{
	struct strbuf sb = { 0 };

	EXPECT(!ksym_print(0x1000, true, &sb) && !sb.len, "0x1000 printed '%s'", sb_str(&sb));
	EXPECT(!ksym_print(0xffffffff00000000ULL, false, &sb) && !sb.len, "printed '%s'", sb_str(&sb));
	sb_free(&sb);
	ksym_close();
}

int main(void)
{
	RUN(the_kernel_prints_what_kallsyms_says);
	RUN(no_symbol_prints_nothing);
	return TEST_EXIT();
}
