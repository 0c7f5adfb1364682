// SPDX-License-Identifier: GPL-2.0
/* An event's life: loaded from tracefs, freed with its print fmt and symbol
 * tables. Not in format.c: printfmt.c and symbols.c use the parser, so the
 * parser freeing what they attach would make the files call each other in a
 * circle. */
#include "events.h"
#include "printfmt.h"
#include "symbols.h"
#include "util.h"

void tp_event_free(struct tp_event *e)
{
	if (!e)
		return;
	free(e->system);
	/* The enum table is the event's, not the print fmt's: tp_event_add_enum
	 * (printfmt.c) fills it from BTF, or a store reader from its file, and
	 * tp_printfmt_free leaves it. */
	for (size_t i = 0; i < e->n_enums; i++)
		free(e->enums[i].name);
	free(e->enums);
	tp_event_free_symbols(e);
	tp_printfmt_free(e->printfmt);
	tp_format_free(e);
}

int tp_event_load(const char *system, const char *name, struct tp_event **ret)
{
	_cleanup_free_ char *text = NULL;
	struct tp_event *e;
	char rel[512];
	int r;

	snprintf(rel, sizeof(rel), "events/%s/%s/format", system, name);
	r = tracefs_read_file(rel, &text);
	if (r < 0)
		return r;
	r = tp_format_parse(text, &e, NULL);
	if (r < 0)
		return r;
	e->system = strdup(system);
	if (!e->system) {
		tp_event_free(e);
		return -ENOMEM;
	}
	*ret = e;
	return 0;
}
