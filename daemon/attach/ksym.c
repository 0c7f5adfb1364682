// SPDX-License-Identifier: GPL-2.0
/* %pS and %ps through the kernel's own printf: bpf/ksym.bpf.c, run by
 * BPF_PROG_TEST_RUN, formats addr + 1 with bpf_snprintf's %pB. That needs
 * CAP_BPF and CAP_PERFMON, which tracerd has, not CAP_SYSLOG, which reading
 * addresses from /proc/kallsyms needs and the unit does not grant. The
 * address stays in the kernel; a name and an offset come back. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include "attach/ksym.h"
#include "ksym.skel.h"
#include "util.h"

static struct ksym_bpf *skel;
static bool failed;

void ksym_close(void)
{
	ksym_bpf__destroy(skel);
	skel = NULL;
	failed = false;
}

/* The kernel's %pB of addr + 1: the symbol of addr, its offset one high. */
static const char *kernel_pB(uint64_t addr)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);

	if (!skel && !failed && !(skel = ksym_bpf__open_and_load()))
		failed = true;
	if (!skel)
		return NULL;
	skel->bss->addr = addr;
	skel->bss->sym[0] = 0;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ksym), &run) < 0)
		return NULL;
	skel->bss->sym[sizeof(skel->bss->sym) - 1] = 0;
	return skel->bss->sym;
}

bool ksym_print(uint64_t addr, bool with_offset, struct strbuf *out)
{
	const char *s = kernel_pB(addr), *plus, *slash, *rest;
	unsigned long long off, size;
	char *end;

	/* Without a symbol the kernel prints the address itself: never that. */
	plus = s ? strstr(s, "+0x") : NULL;
	if (!plus || plus == s)
		return false;
	off = strtoull(plus + 3, &end, 16);
	slash = end;
	if (strncmp(slash, "/0x", 3) || !off)
		return false;
	size = strtoull(slash + 3, &end, 16);
	rest = end;
	if (*rest && *rest != ' ')
		return false;
	sb_put(out, s, plus - s);
	if (with_offset)
		sb_printf(out, "+0x%llx/0x%llx", off - 1, size);
	sb_puts(out, rest);
	return true;
}
