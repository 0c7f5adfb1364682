// SPDX-License-Identifier: GPL-2.0
/* Flag and symbol tables from the parsed print fmt (libtraceevent has
 * already folded the constants in them to numbers). */
#include <traceevent/event-parse.h>
#include "printfmt.h"
#include "symbols.h"
#include "util.h"

static void symtab_clear(struct tp_symtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->syms[i].name);
	free(t->syms);
	free(t->field);
	free(t->delim);
}

void tp_event_free_symbols(struct tp_event *e)
{
	for (size_t i = 0; i < e->n_symtabs; i++)
		symtab_clear(&e->symtabs[i]);
	free(e->symtabs);
	e->symtabs = NULL;
	e->n_symtabs = 0;
	e->symbols_loaded = false;
}

static const struct tep_print_arg *skip_casts(const struct tep_print_arg *a)
{
	while (a && a->type == TEP_PRINT_TYPE)
		a = a->typecast.item;
	return a;
}

/* The field a flags or symbolic value is, through casts and a mask with a
 * constant (sched_switch's prev_state & (TASK_REPORT_MAX - 1)): a filter
 * can test the table's names against the field. NULL for other expressions. */
static const char *value_field(const struct tep_print_arg *a)
{
	a = skip_casts(a);
	if (a && a->type == TEP_PRINT_OP && !strcmp(a->op.op, "&")) {
		const struct tep_print_arg *l = skip_casts(a->op.left), *r = skip_casts(a->op.right);

		if (l && r && l->type == TEP_PRINT_FIELD && r->type != TEP_PRINT_FIELD)
			a = l;
		else if (l && r && r->type == TEP_PRINT_FIELD && l->type != TEP_PRINT_FIELD)
			a = r;
	}
	return a && a->type == TEP_PRINT_FIELD ? a->field.name : NULL;
}

static int fill(struct tp_symtab *t, const struct tep_print_arg *a)
{
	const struct tep_print_flag_sym *fs = a->type == TEP_PRINT_FLAGS ? a->flags.flags : a->symbol.symbols;
	const char *field = value_field(a->type == TEP_PRINT_FLAGS ? a->flags.field : a->symbol.field);
	size_t cap = 0;

	t->kind = a->type == TEP_PRINT_FLAGS ? TP_SYM_FLAGS : TP_SYM_SYMBOLIC;
	t->origin = a;
	if ((field && !(t->field = strdup(field))) ||
	    (t->kind == TP_SYM_FLAGS && !(t->delim = strdup(a->flags.delim ? a->flags.delim : ""))))
		return -ENOMEM;
	for (; fs; fs = fs->next) {
		if (GROW(t->syms, cap, t->n) < 0 || !(t->syms[t->n].name = strdup(fs->str)))
			return -ENOMEM;
		t->syms[t->n].len = strlen(fs->str);
		t->syms[t->n++].value = strtoull(fs->value, NULL, 0);
	}
	return 0;
}

static int collect(struct tp_event *e, const struct tep_print_arg *a, size_t *cap);

static int collect_list(struct tp_event *e, const struct tep_print_arg *a, size_t *cap)
{
	for (; a; a = a->next) {
		int r = collect(e, a, cap);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Every FLAGS and SYMBOL node of the tree, in print fmt order. */
static int collect(struct tp_event *e, const struct tep_print_arg *a, size_t *cap)
{
	int r;

	if (!a)
		return 0;
	switch (a->type) {
	case TEP_PRINT_FLAGS:
	case TEP_PRINT_SYMBOL:
		if (GROW(e->symtabs, *cap, e->n_symtabs) < 0)
			return -ENOMEM;
		memset(&e->symtabs[e->n_symtabs], 0, sizeof(*e->symtabs));
		r = fill(&e->symtabs[e->n_symtabs++], a);
		if (r < 0)
			return r;
		return collect(e, a->type == TEP_PRINT_FLAGS ? a->flags.field : a->symbol.field, cap);
	case TEP_PRINT_TYPE:
		return collect(e, a->typecast.item, cap);
	case TEP_PRINT_OP:
		r = collect(e, a->op.left, cap);
		return r < 0 ? r : collect(e, a->op.right, cap);
	case TEP_PRINT_FUNC:
		return collect_list(e, a->func.args, cap);
	default:
		return 0;
	}
}

int tp_event_load_symbols(struct tp_event *e)
{
	const struct tp_printfmt *p;
	size_t cap = 0;
	int r;

	if (e->symbols_loaded)
		return 0;
	r = tp_event_printfmt(e, &p);
	if (r < 0)
		return r;
	if (p->ev)
		r = collect_list(e, p->ev->print_fmt.args, &cap);
	if (r < 0) {
		tp_event_free_symbols(e);
		return r;
	}
	e->symbols_loaded = true;
	return 0;
}

const struct tp_symtab *tp_event_symtab(const struct tp_event *e, const char *field)
{
	for (size_t i = 0; i < e->n_symtabs; i++)
		if (e->symtabs[i].field && !strcmp(e->symtabs[i].field, field))
			return &e->symtabs[i];
	return NULL;
}

static void print_flags(const struct tp_symtab *t, uint64_t v, struct strbuf *out)
{
	bool first = true;

	/* The kernel's loop: first match in table order, a mask only when all its bits are set. */
	for (size_t i = 0; i < t->n && v; i++) {
		uint64_t mask = t->syms[i].value;

		if ((v & mask) != mask)
			continue;
		v &= ~mask;
		if (!first)
			sb_puts(out, t->delim);
		first = false;
		sb_put(out, t->syms[i].name, t->syms[i].len);
	}
	if (v) {
		if (!first)
			sb_puts(out, t->delim);
		sb_put(out, "0x", 2);
		sb_put_hex(out, v);
	}
}

bool tp_symtab_names_all(const struct tp_symtab *t, uint64_t v)
{
	for (size_t i = 0; i < t->n && (v || t->kind != TP_SYM_FLAGS); i++) {
		uint64_t mask = t->syms[i].value;

		if (t->kind != TP_SYM_FLAGS && mask == v)
			return true;
		if (t->kind == TP_SYM_FLAGS && (v & mask) == mask)
			v &= ~mask;	/* print_flags' loop */
	}
	return t->kind == TP_SYM_FLAGS && !v;
}

void tp_symtab_print(const struct tp_symtab *t, uint64_t v, struct strbuf *out)
{
	if (t->kind == TP_SYM_FLAGS) {
		print_flags(t, v, out);
		return;
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->syms[i].value == v) {
			sb_put(out, t->syms[i].name, t->syms[i].len);
			return;
		}
	sb_put(out, "0x", 2);
	sb_put_hex(out, v);
}
