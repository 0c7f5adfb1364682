/* SPDX-License-Identifier: GPL-2.0 */
/* An event's print fmt, parsed once by libtraceevent into its argument tree.
 * Enum names the kernel never exported with TRACE_DEFINE_ENUM are replaced
 * by their BTF values first, or libtraceevent would read them as 0. */
#ifndef TRACERD_PRINTFMT_H
#define TRACERD_PRINTFMT_H

#include <stdbool.h>
#include <stdint.h>
#include "events.h"

struct tep_handle;
struct tep_event;

struct tp_printfmt {
	struct tep_handle *tep;		/* one handle per event: tep is not thread-safe */
	struct tep_event *ev;		/* NULL when libtraceevent could not parse it */
	char *unresolved;		/* first name neither tracefs nor BTF resolves */
};

/* Parses e's print fmt (once; later calls return the cached result). */
int tp_event_printfmt(struct tp_event *e, const struct tp_printfmt **ret);
void tp_printfmt_free(struct tp_printfmt *p);
/* e's format file as libtraceevent is given it: the print fmt's enum names
 * replaced by their values (tracefs left them as names) and its constant
 * groups folded. For readers of the format other than tracerd's own. */
struct strbuf;
int tp_event_format_resolved(struct tp_event *e, struct strbuf *out);

/* printfmt_gate.c: whether libtraceevent may parse this format text. */
bool printfmt_tep_can_take(const char *format_text);

/* btf_enums.c: an enumerator's value from vmlinux BTF; -ENOENT if unknown. */
int btf_enum_value(const char *name, size_t len, int64_t *ret);

/* constfold.c: folds constant parenthesized groups into numbers. */
struct strbuf;
void printfmt_fold_constants(struct strbuf *sb);

#endif
