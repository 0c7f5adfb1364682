// SPDX-License-Identifier: GPL-2.0
/* filter_compile(): parse (filter_parse.c), then compile for the event
 * (filter_compile.c). */
#include <errno.h>
#include "filter.h"
#include "filter_compile.h"
#include "util.h"

int filter_compile(const char *expr, const struct tp_event *e, const struct conf_pos *pos,
		   struct event_desc *desc, struct diag *d)
{
	struct filter_text src = { .expr = expr, .pos = pos, .d = d };
	_cleanup_(fnode_freep) struct fnode *tree = NULL;
	int r;

	desc->n_insns = 0;
	if (!expr || !*expr)
		return 0;
	r = filter_parse(&src, &tree);
	if (r < 0)
		return r;
	r = filter_compile_tree(&src, tree, e, desc);
	if (r < 0)
		desc->n_insns = 0;
	return r;
}
