/* SPDX-License-Identifier: GPL-2.0 */
/* The print fmt's symbol tables: for a field shown through __print_flags or
 * __print_symbolic, the table of {value, "NAME"} pairs, with constants
 * folded and enum names the kernel did not export resolved through BTF.
 * The renderer prints with them, the journal sink writes FIELD and
 * FIELD_RAW from them, and the filter compiler resolves names through them. */
#ifndef TRACERD_SYMBOLS_H
#define TRACERD_SYMBOLS_H

#include <stdint.h>
#include <stdio.h>
#include "events.h"
#include "strbuf.h"

enum tp_symtab_kind { TP_SYM_FLAGS, TP_SYM_SYMBOLIC };

struct tp_sym {
	uint64_t value;
	char *name;
	size_t len;		/* of name: printed for every record */
};

struct tp_symtab {
	char *field;		/* the field the table applies to; NULL when the
				 * print fmt applies it to an expression */
	enum tp_symtab_kind kind;
	char *delim;		/* __print_flags' delimiter, "|" mostly */
	struct tp_sym *syms;	/* in print fmt order: first match wins for flags */
	size_t n;
	const void *origin;	/* the libtraceevent print arg it came from */
};

/* Parses e's print fmt for its tables (once; later calls are free). */
int tp_event_load_symbols(struct tp_event *e);
/* The table for a field, or NULL when the print fmt shows it plainly. */
const struct tp_symtab *tp_event_symtab(const struct tp_event *e, const char *field);
void tp_event_free_symbols(struct tp_event *e);

/* v as the kernel's trace_print_flags_seq / trace_print_symbols_seq show it. */
void tp_symtab_print(const struct tp_symtab *t, uint64_t v, struct strbuf *out);
/* Whether tp_symtab_print prints v with names only, no number. */
bool tp_symtab_names_all(const struct tp_symtab *t, uint64_t v);

#endif
