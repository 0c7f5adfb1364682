// SPDX-License-Identifier: GPL-2.0
/* Compiling libtraceevent's parse of a print fmt into segments and
 * expression trees (render_priv.h), once per event. What the compiler does
 * not handle is named in prog->why, and the caller falls back. */
#include <ctype.h>
#include <traceevent/event-parse.h>
#include "kernel-events/printfmt.h"
#include "render_priv.h"
#include "util.h"

struct cc {
	struct tp_event *e;
	struct rprog *p;
	const struct tep_print_arg *next;	/* the next unused argument */
};

static int refuse(struct cc *c, const char *fmt, const char *what)
{
	if (!c->p->why && asprintf(&c->p->why, fmt, what) < 0)
		c->p->why = NULL;
	return -EOPNOTSUPP;
}

static void rn_free(struct rnode *n)
{
	if (!n)
		return;
	rn_free(n->a);
	rn_free(n->b);
	rn_free(n->c);
	free(n->text);
	free(n);
}

static struct rnode *rn_new(enum rn_kind k)
{
	struct rnode *n = calloc(1, sizeof(*n));

	if (n)
		n->kind = k;
	return n;
}

static int compile_arg(struct cc *c, const struct tep_print_arg *a, struct rnode **ret);

static int field_node(struct cc *c, const char *name, enum rn_kind want, struct rnode **ret)
{
	const struct tp_field *f = name ? tp_event_field(c->e, name) : NULL;
	struct rnode *n;
	bool dyn;

	if (!f)
		return refuse(c, "unknown field '%s'", name ? name : "?");
	dyn = f->kind == TP_FIELD_DATA_LOC || f->kind == TP_FIELD_REL_LOC;
	if (want == RN_FIELD)
		want = dyn ? RN_DYN : f->kind == TP_FIELD_SCALAR ? RN_FIELD : RN_ARRAY;
	if ((want == RN_DYN || want == RN_DYN_LEN) && !dyn)
		return refuse(c, "'%s' used as a dynamic array", f->name);
	if (!(n = rn_new(want)))
		return -ENOMEM;
	n->field = f;
	n->off = f->offset;
	n->size = f->size;
	n->elem_size = f->elem_size ? f->elem_size : 1;
	n->is_signed = f->is_signed;
	n->is_string = f->is_string;
	n->is_rel = f->kind == TP_FIELD_REL_LOC;
	if (want == RN_ARRAY && f->kind == TP_FIELD_FLEX)
		n->size = 0;	/* to the end of the record */
	*ret = n;
	return 0;
}

static int atom_node(struct cc *c, const char *atom, struct rnode **ret)
{
	struct rnode *n = rn_new(RN_CONST);
	char *end;

	if (!n || !(n->text = strdup(atom))) {
		free(n);
		return -ENOMEM;
	}
	n->text_len = strlen(atom);
	n->num = strtoull(atom, &end, 0);
	/* A number keeps C's type: signed unless it says U. */
	n->is_signed = !strpbrk(end, "uU");
	if (atom[0] == '\'' && atom[1])
		n->num = (unsigned char)atom[1];
	*ret = n;
	(void)c;
	return 0;
}

/* (size, signedness) of a cast's type. */
static int cast_node(struct cc *c, const char *type, struct rnode **ret)
{
	struct rnode *n;

	if (strstr(type, "struct") || strstr(type, "union"))
		return refuse(c, "cast to '%s'", type);
	if (!(n = rn_new(RN_CAST)))
		return -ENOMEM;
	n->is_signed = !strstr(type, "unsigned") && !strchr(type, '*') && type[0] != 'u' &&
		       strncmp(type, "__u", 3) && strncmp(type, "bool", 4) && strncmp(type, "size_t", 6);
	if (strchr(type, '*') || strstr(type, "long") || strstr(type, "64") || strstr(type, "size_t"))
		n->size = 8;
	else if (strstr(type, "short") || strstr(type, "16"))
		n->size = 2;
	else if (strstr(type, "char") || strstr(type, "8") || strstr(type, "bool"))
		n->size = 1;
	else
		n->size = 4;
	*ret = n;
	return 0;
}

static int op_node(struct cc *c, const struct tep_print_arg *a, struct rnode **ret)
{
	const char *op = a->op.op;
	bool unary = !a->op.left || a->op.left->type == TEP_PRINT_NULL;
	struct rnode *n;
	int r;

	if (strlen(op) > 2)
		return refuse(c, "operator '%s'", op);
	if (!strcmp(op, "?")) {
		const struct tep_print_arg *rt = a->op.right;

		if (!rt || rt->type != TEP_PRINT_OP || strcmp(rt->op.op, ":"))
			return refuse(c, "%s", "a malformed ?: expression");
		if (!(n = rn_new(RN_COND)))
			return -ENOMEM;
		*ret = n;
		r = compile_arg(c, a->op.left, &n->a);
		if (r >= 0)
			r = compile_arg(c, rt->op.left, &n->b);
		return r < 0 ? r : compile_arg(c, rt->op.right, &n->c);
	}
	if (!(n = rn_new(!strcmp(op, "[") ? RN_INDEX : unary ? RN_UNARY : RN_BINARY)))
		return -ENOMEM;
	*ret = n;
	memcpy(n->op, op, strlen(op) + 1);
	r = unary ? 0 : compile_arg(c, a->op.left, &n->a);
	return r < 0 ? r : compile_arg(c, a->op.right, unary ? &n->a : &n->b);
}

static int symtab_node(struct cc *c, const struct tep_print_arg *a, struct rnode **ret)
{
	struct rnode *n = rn_new(RN_SYMTAB);

	if (!n)
		return -ENOMEM;
	*ret = n;
	for (size_t i = 0; i < c->e->n_symtabs; i++)
		if (c->e->symtabs[i].origin == a)
			n->tab = &c->e->symtabs[i];
	if (!n->tab)
		return refuse(c, "%s", "a flag table not collected");
	return compile_arg(c, a->type == TEP_PRINT_FLAGS ? a->flags.field : a->symbol.field, &n->a);
}

static int two(struct cc *c, enum rn_kind k, const struct tep_print_arg *x,
	       const struct tep_print_arg *y, const struct tep_print_arg *z, struct rnode **ret)
{
	struct rnode *n = rn_new(k);
	int r;

	if (!n)
		return -ENOMEM;
	*ret = n;
	r = compile_arg(c, x, &n->a);
	if (r >= 0)
		r = compile_arg(c, y, &n->b);
	if (r >= 0 && z)
		r = compile_arg(c, z, &n->c);
	return r;
}

static int compile_arg(struct cc *c, const struct tep_print_arg *a, struct rnode **ret)
{
	int r;

	if (!a)
		return refuse(c, "%s", "a missing argument");
	switch (a->type) {
	case TEP_PRINT_ATOM:
		return atom_node(c, a->atom.atom, ret);
	case TEP_PRINT_FIELD:
		return field_node(c, a->field.name, RN_FIELD, ret);
	case TEP_PRINT_STRING:
	case TEP_PRINT_BSTRING:
		return field_node(c, a->string.string, RN_DYN, ret);
	case TEP_PRINT_DYNAMIC_ARRAY:
		return field_node(c, a->dynarray.field ? a->dynarray.field->name : NULL, RN_DYN, ret);
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		return field_node(c, a->dynarray.field ? a->dynarray.field->name : NULL, RN_DYN_LEN, ret);
	case TEP_PRINT_BITMASK:
	case TEP_PRINT_CPUMASK:
		if (!(*ret = rn_new(RN_BITMASK)))
			return -ENOMEM;
		return field_node(c, a->bitmask.bitmask, RN_DYN, &(*ret)->a);
	case TEP_PRINT_TYPE:
		r = cast_node(c, a->typecast.type, ret);
		return r < 0 ? r : compile_arg(c, a->typecast.item, &(*ret)->a);
	case TEP_PRINT_OP:
		return op_node(c, a, ret);
	case TEP_PRINT_FLAGS:
	case TEP_PRINT_SYMBOL:
		return symtab_node(c, a, ret);
	case TEP_PRINT_HEX:
	case TEP_PRINT_HEX_STR:
		return two(c, a->type == TEP_PRINT_HEX ? RN_HEX : RN_HEX_STR, a->hex.field,
			   a->hex.size, NULL, ret);
	case TEP_PRINT_INT_ARRAY:
		if (!a->int_array.el_size)
			return refuse(c, "%s", "__print_array without an element size");
		return two(c, RN_INT_ARRAY, a->int_array.field, a->int_array.count,
			   a->int_array.el_size, ret);
	case TEP_PRINT_FUNC:
		return refuse(c, "%s", "a function call");
	default:
		return refuse(c, "%s", "an empty argument");
	}
}

static int take_arg(struct cc *c, struct rnode **ret)
{
	const struct tep_print_arg *a = c->next;

	if (!a)
		return refuse(c, "%s", "more conversions than arguments");
	c->next = a->next;
	return compile_arg(c, a, ret);
}

/* "%-08.3llx": flags, width, precision, length; returns past the conversion. */
static int parse_spec(struct cc *c, const char *p, struct rseg *s, const char **end)
{
	static const char flag_chars[] = "-+ #0";
	int r;

	s->width = s->prec = -1;
	for (const char *f; *p && (f = strchr(flag_chars, *p)); p++)
		s->flags |= 1u << (f - flag_chars);
	if (*p == '*') {
		r = take_arg(c, &s->width_arg);
		if (r < 0)
			return r;
		p++;
	} else if (isdigit((unsigned char)*p))
		s->width = strtol(p, (char **)&p, 10);
	if (*p == '.') {
		p++;
		if (*p == '*') {
			r = take_arg(c, &s->prec_arg);
			if (r < 0)
				return r;
			p++;
		} else
			s->prec = strtol(p, (char **)&p, 10);
	}
	s->int_size = 4;
	if (p[0] == 'h')
		s->int_size = p[1] == 'h' ? 1 : 2;
	while (*p && strchr("hlLzjtq", *p)) {
		if (*p != 'h')
			s->int_size = 8;
		p++;
	}
	s->conv = *p;
	if (!*p || !strchr("diuxXocsp", *p)) {
		char conv[2] = { *p ? *p : '?', 0 };

		return refuse(c, "the conversion '%%%s'", conv);
	}
	p++;
	if (s->conv == 'c')
		c->p->has_char = true;
	/* The kernel's vsprintf takes every letter and digit after %p as the extension. */
	for (size_t k = 0; s->conv == 'p' && isalnum((unsigned char)*p); p++)
		if (k < sizeof(s->ext) - 1)
			s->ext[k++] = *p;
	*end = p;
	return take_arg(c, &s->arg);
}

static char unescape(char ch)
{
	switch (ch) {
	case 'n': return '\n';
	case 't': return '\t';
	default: return ch;
	}
}

static int push_seg(struct rprog *p, struct strbuf *lit, struct rseg *s, size_t *cap)
{
	if (GROW(p->segs, *cap, p->n_segs) < 0 || lit->oom)
		return -ENOMEM;
	s->lit_len = lit->len;
	s->lit = lit->len ? strndup(lit->buf, lit->len) : NULL;
	if (lit->len && !s->lit)
		return -ENOMEM;
	p->segs[p->n_segs++] = *s;
	memset(s, 0, sizeof(*s));
	sb_reset(lit);
	return 0;
}

static int compile_format(struct cc *c, const char *fmt)
{
	struct strbuf lit = { 0 };
	struct rseg s = { 0 };
	size_t cap = 0;
	int r = 0;

	for (const char *p = fmt; *p && r >= 0;) {
		if (p[0] == '\\' && p[1]) {
			sb_putc(&lit, unescape(p[1]));
			p += 2;
		} else if (p[0] != '%' || p[1] == '%') {
			sb_putc(&lit, *p);
			p += p[0] == '%' ? 2 : 1;
		} else {
			r = parse_spec(c, p + 1, &s, &p);
			if (r >= 0)
				r = push_seg(c->p, &lit, &s, &cap);
		}
	}
	if (r >= 0 && lit.len)
		r = push_seg(c->p, &lit, &s, &cap);
	if (r < 0) {
		rn_free(s.arg);
		rn_free(s.width_arg);
		rn_free(s.prec_arg);
	}
	sb_free(&lit);
	return r;
}

/* Whether n prints field f's table (tab) or reads f at all (!tab). */
static bool rn_shows(const struct rnode *n, const struct tp_field *f, bool tab)
{
	if (!n)
		return false;
	if (tab && n->kind == RN_SYMTAB && n->tab->field && !strcmp(n->tab->field, f->name))
		return true;
	if (!tab && n->kind == RN_FIELD && n->off == f->offset && n->size == f->size)
		return true;
	return rn_shows(n->a, f, tab) || rn_shows(n->b, f, tab) || rn_shows(n->c, f, tab);
}

/* A %s conversion that touches f and follows the previous one without text
 * in between: part of what the line shows for f ("R" then "+"). */
static bool seg_extends(const struct rseg *s, const struct tp_field *f)
{
	return s->conv == 's' && rn_shows(s->arg, f, false);
}

/* The span of f: the first conversion that prints f's table, widened over
 * neighbouring %s conversions of f with no literal between. A second place
 * that prints the table (xfs_extent_busy prints its type twice, alike) is
 * left out. */
static bool find_span(const struct rprog *p, const struct tp_field *f, struct rspan *ret)
{
	size_t a, b;

	for (a = 0; a < p->n_segs && !rn_shows(p->segs[a].arg, f, true); a++)
		;
	if (a == p->n_segs)
		return false;
	for (b = a; b + 1 < p->n_segs && !p->segs[b + 1].lit_len && seg_extends(&p->segs[b + 1], f);)
		b++;
	while (a > 0 && !p->segs[a].lit_len && seg_extends(&p->segs[a - 1], f))
		a--;
	*ret = (struct rspan){ .field = f, .first = a, .last = b };
	return true;
}

static int find_spans(const struct tp_event *e, struct rprog *p)
{
	size_t cap = 0;

	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];
		struct rspan s;

		if (f->is_common || !tp_event_symtab(e, f->name) || !find_span(p, f, &s))
			continue;
		if (GROW(p->spans, cap, p->n_spans) < 0)
			return -ENOMEM;
		p->spans[p->n_spans++] = s;
	}
	return 0;
}

void rprog_free_segs(struct rprog *p)
{
	for (size_t i = 0; i < p->n_segs; i++) {
		free(p->segs[i].lit);
		rn_free(p->segs[i].arg);
		rn_free(p->segs[i].width_arg);
		rn_free(p->segs[i].prec_arg);
	}
	free(p->segs);
	p->segs = NULL;
	p->n_segs = 0;
	free(p->spans);
	p->spans = NULL;
	p->n_spans = 0;
}

/* Marks the subtrees made only of numbers (fields, constants, casts,
 * operators, ?:), which render_eval.c evaluates on a faster path. */
static bool mark_numeric(struct rnode *n)
{
	bool a, b, c;

	if (!n)
		return true;
	a = mark_numeric(n->a);
	b = mark_numeric(n->b);
	c = mark_numeric(n->c);
	switch (n->kind) {
	case RN_CONST: case RN_FIELD:
		n->numeric = true;
		break;
	case RN_CAST: case RN_UNARY: case RN_BINARY: case RN_COND:
		n->numeric = a && b && c;
		break;
	default:
		n->numeric = false;
	}
	return n->numeric;
}

static bool is_addr(const struct rnode *n)
{
	return n && n->addr;
}

/* Marks the nodes whose value is an address: a pointer field, cast to a
 * type as wide, chosen by ?: or read from an array of pointers; and the
 * tables over such a value. */
static void mark_addr(struct rnode *n)
{
	if (!n)
		return;
	mark_addr(n->a);
	mark_addr(n->b);
	mark_addr(n->c);
	if (n->kind == RN_FIELD)
		n->addr = n->field->is_pointer;
	else if (n->kind == RN_CAST)
		n->addr = n->size == 8 && is_addr(n->a);
	else if (n->kind == RN_COND)
		n->addr = is_addr(n->b) || is_addr(n->c);
	else if (n->kind == RN_INDEX)
		n->addr = n->a && n->a->field && n->a->field->is_pointer;
	else if (n->kind == RN_SYMTAB)
		n->addr = is_addr(n->a);
}

/* Pointer fields first (those a %p prints), then what holds their values. */
static void mark_addresses(struct tp_event *e, struct rprog *p)
{
	for (size_t i = 0; i < p->n_segs; i++)
		if (p->segs[i].conv == 'p' && render_ext_prints_address(p->segs[i].ext))
			render_mark_pointer_fields(e, p->segs[i].arg);
	for (size_t i = 0; i < p->n_segs; i++) {
		struct rseg *s = &p->segs[i];

		mark_addr(s->arg);
		s->addr = s->conv && strchr("diuxXo", s->conv) && is_addr(s->arg);
	}
}

int rprog_compile(struct tp_event *e, struct rprog *p)
{
	const struct tp_printfmt *pf;
	struct cc c = { .e = e, .p = p };
	int r = tp_event_printfmt(e, &pf);

	if (r < 0)
		return r;
	r = tp_event_load_symbols(e);
	if (r < 0)
		return r;
	if (pf->unresolved)
		return refuse(&c, "the name '%s', which neither tracefs nor BTF resolves",
			      pf->unresolved);
	if (!pf->ev)
		return refuse(&c, "%s", "libtraceevent cannot parse it");
	c.next = pf->ev->print_fmt.args;
	r = compile_format(&c, pf->ev->print_fmt.format);
	if (r >= 0)
		r = find_spans(e, p);
	if (r < 0) {
		rprog_free_segs(p);
		return r;
	}
	mark_addresses(e, p);
	for (size_t i = 0; i < p->n_segs; i++) {
		struct rseg *s = &p->segs[i];

		mark_numeric(s->arg);
		mark_numeric(s->width_arg);
		mark_numeric(s->prec_arg);
		/* A scalar field printed as a number or a plain %p: most of them. */
		if (s->arg && s->arg->kind == RN_FIELD && !s->width_arg && !s->prec_arg)
			s->fast = s->conv && strchr("diuxXo", s->conv) ? RS_FIELD_NUMBER :
				  s->conv == 'p' && !s->ext[0] ? RS_FIELD_POINTER : RS_TREE;
	}
	return r;
}
