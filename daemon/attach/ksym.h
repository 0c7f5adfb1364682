/* SPDX-License-Identifier: GPL-2.0 */
/* Symbols for %pS and %ps from the kernel itself (bpf/ksym.bpf.c), where
 * /proc/kallsyms shows no addresses: tracerd runs without CAP_SYSLOG. */
#ifndef TRACERD_KSYM_H
#define TRACERD_KSYM_H

#include <stdbool.h>
#include <stdint.h>
#include "strbuf.h"

/* Writes "name+0xoff/0xsize [module]" for addr as the kernel's %pS does,
 * or "name [module]" (%ps, !with_offset). False, writing nothing, where the
 * kernel has no symbol for addr or the program cannot run. */
bool ksym_print(uint64_t addr, bool with_offset, struct strbuf *out);
/* Unloads the program (loaded at the first ksym_print). */
void ksym_close(void);

#endif
