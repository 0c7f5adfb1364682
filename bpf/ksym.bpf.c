// SPDX-License-Identifier: GPL-2.0
/* A symbol for an address, as the kernel's own printf writes it: for %pS
 * and %ps when /proc/kallsyms shows tracerd no addresses (it lacks
 * CAP_SYSLOG, on purpose). Run by BPF_PROG_TEST_RUN; bpf_snprintf's %pB
 * needs no CAP_SYSLOG, and only a name and an offset come back. %pB is
 * the backtrace form: it looks up address - 1 and prints the offset + 1,
 * so addr + 1 goes in, the symbol of addr comes out, its offset one too
 * high (daemon/attach/ksym.c takes the one off). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 addr;		/* in */
char sym[256];		/* out: "name+0xoff/0xsize [module]", or the address */

SEC("raw_tp")
int ksym(void *ctx)
{
	__u64 a = addr + 1;

	(void)ctx;
	bpf_snprintf(sym, sizeof(sym), "%pB", &a, sizeof(a));
	return 0;
}
