/* SPDX-License-Identifier: GPL-2.0 */
/* Which leading frames of a kernel stack taken at a tracepoint are the
 * tracing machinery's own, so that the first frame shown is the
 * tracepoint's caller (fcntl_setlk for filelock:fcntl_setlk), as the issue
 * and the kernel's hist file want it. One rule for every stack tracerd
 * takes at a tracepoint. */
#ifndef TRACERD_STACK_SKIP_H
#define TRACERD_STACK_SKIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "strbuf.h"

/* Is func (a symbol name, "name" or "name [module]", a compiler suffix such
 * as ".isra.0" allowed) a frame of the tracing machinery when it leads a
 * stack? Only leading frames are taken off: the same names further down
 * are the traced code's (synchronize_rcu_expedited from
 * perf_trace_event_unreg is a call path like any other). */
bool stack_frame_is_tracing(const char *func);

/* Puts the function of ip ("name" or "name [module]", no offset) in out;
 * false when no symbol holds it. */
typedef bool (*stack_symbol_fn)(uint64_t ip, struct strbuf *out, void *ctx);

/* The number of leading frames of ips (n return addresses, the innermost
 * first) to take off, their functions given by sym(ip, out, ctx): the
 * running kernel's, or those a store file kept; a frame in no symbol
 * ends them. */
size_t stack_skip(const uint64_t *ips, size_t n, stack_symbol_fn sym, void *ctx);

#endif
