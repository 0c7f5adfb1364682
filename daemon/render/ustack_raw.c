// SPDX-License-Identifier: GPL-2.0
/* User frames as bare addresses, the way ftrace's userstacktrace prints a
 * frame it cannot resolve. A stand-in with the symbolizer's signature, so
 * that the one call in render_stack.c stays when it takes over. */
#include <errno.h>
#include "render/render_stack.h"

int ustack_format_frame(struct ustack_syms *s, pid_t tgid, __u64 ip, struct strbuf *out)
{
	(void)s;
	(void)tgid;
	sb_printf(out, "<%016llx>", (unsigned long long)ip);
	return out->oom ? -ENOMEM : 0;
}
