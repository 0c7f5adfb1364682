// SPDX-License-Identifier: GPL-2.0
/* The user stack symbolizer (render/ustack.c) from the command line, for
 * tests/integration/ustack.sh to hold against ftrace's userstacktrace:
 * reads "TGID IP" lines (IP in hex) and prints each frame as tracerd's
 * <user stack trace> block does (" => FRAME"). */
#include <stdio.h>
#include "render/ustack.h"

int main(void)
{
	_cleanup_ustack_syms_ struct ustack_syms *s = NULL;
	struct strbuf sb = { 0 };
	unsigned long long ip;
	int tgid;

	if (ustack_syms_new(&s) < 0)
		return 1;
	while (scanf("%d %llx", &tgid, &ip) == 2) {
		sb_reset(&sb);
		sb_puts(&sb, " => ");
		ustack_format_frame(s, tgid, ip, &sb);
		puts(sb_str(&sb));
	}
	sb_free(&sb);
	return 0;
}
