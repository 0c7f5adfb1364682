// SPDX-License-Identifier: GPL-2.0
/* A filter's syntax tree to bytecode for one event: fields resolved against
 * its format, values read by the field's type (numbers in range, symbols from
 * the field's print fmt table, MAJOR:MINOR for dev_t, strings and globs),
 * emitted in postfix order, && and || as short-circuit skips over their right
 * side, for the stack machine in bpf/filter.bpf.h. */
#include <ctype.h>
#include "filter_compile.h"
#include "kernel-events/field_source.h"
#include "kernel-events/symbols.h"
#include "util.h"

/* A field as the filter reads it. */
struct fref {
	const char *name;
	const char *type;
	bool is_str;
	struct field_source s;
	struct filter_insn in;	/* src, off, size, is_signed; imm = array size for strings */
};

struct fcomp {
	const struct filter_text *src;
	const struct tp_event *e;
	struct event_desc *desc;
	unsigned n_strs;
};

static int parse_number(const char *s, uint64_t *u, bool *neg);

/* A syscall's user string argument compares as the string the class
 * program read when the selection reads it (the descriptor lists it) and
 * the predicate is about a string: ~, a quoted value or one that is no
 * number. Otherwise it is the pointer, as before (filename == 0). */
static int user_string(struct fcomp *c, const struct fnode *p, struct field_source *s)
{
	bool str = p->op == FO_GLOB, neg;
	uint64_t u;

	for (size_t i = 0; i < p->n_vals; i++)
		str |= p->vals[i].quoted || parse_number(p->vals[i].text, &u, &neg) < 0;
	if (!str)
		return 0;
	if (c->desc->ustr_off[s->ustr] != s->off)
		return filter_error(c->src, p->off, "%s is a user string that this selection does "
				    "not read (SyscallStrings=no, or Aggregate=): only its pointer can "
				    "be compared", s->name);
	field_source_as_user_string(c->e, s);
	return 0;
}

static int resolve_field(struct fcomp *c, const struct fnode *p, struct fref *ref)
{
	struct field_source *s = &ref->s;
	char why[1000];
	int r = field_source_resolve(c->e, p->field, s);

	ref->name = s->name;
	ref->type = s->type;
	if (r == -EMEDIUMTYPE)
		return filter_error(c->src, p->off,
				    "%s is %s, an array: a filter compares numbers and strings only",
				    s->name, s->type);
	if (r < 0) {
		field_source_explain(c->e, p->field, r, "common_pid, common_type, comm, cpu", why,
				     sizeof(why));
		return filter_error(c->src, p->off, "%s", why);
	}
	if (s->src == SRC_STACKTRACE)
		return filter_error(c->src, p->off, "%s is the event's call path: a key of "
				    "Aggregate= (keys=common_stacktrace), not a value a filter compares",
				    s->name);
	if (s->src == SRC_CGROUP || s->src == SRC_UNIT)
		return filter_error(c->src, p->off, "%s is a key of Aggregate= only: select units "
				    "with Unit= (or --unit)", s->name);
	if (s->ustr >= 0 && (r = user_string(c, p, s)) < 0)
		return r;
	ref->is_str = s->is_string;
	ref->in = (struct filter_insn){ .src = s->src, .off = s->off, .is_signed = s->is_signed,
					.size = s->is_string ? 0 : s->size, .imm = s->str_size };
	return 0;
}

static int emit(struct fcomp *c, int off, struct filter_insn in)
{
	if (c->desc->n_insns >= TRACERD_FILTER_INSNS)
		return filter_error(c->src, off, "filter too long for %s%s%s: more than %d instructions",
				    c->e->system ? c->e->system : "", c->e->system ? ":" : "",
				    c->e->name, TRACERD_FILTER_INSNS);
	c->desc->insns[c->desc->n_insns++] = in;
	return 0;
}

static bool is_ident_word(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	return !*s;
}

/* Column of a value's first character, for the caret. */
static int val_off(const struct fvalue *v)
{
	return v->off + v->quoted;
}

/* A symbol of the field's own __print_flags/__print_symbolic table. */
static int symbol_value(struct fcomp *c, const struct fref *ref, const struct fvalue *v,
			uint64_t *ret)
{
	const struct tp_symtab *t = tp_event_symtab(c->e, ref->name);
	char names[600];
	size_t n = 0;

	if (!t)
		return filter_error(c->src, val_off(v),
				    "expected a number for %s (%s): '%s' is not one, and %s has no "
				    "__print_flags or __print_symbolic table to name values", ref->name,
				    ref->type, v->text, ref->name);
	names[0] = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->syms[i].name, v->text)) {
			*ret = t->syms[i].value;
			return 0;
		}
		if (n < sizeof(names))
			n += snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "", t->syms[i].name);
	}
	return filter_error(c->src, val_off(v), "unknown symbol '%s' for %s: expected a number or "
			    "one of: %s", v->text, ref->name, names);
}

/* MAJOR:MINOR as the kernel's dev_t: major << 20 | minor. */
static int dev_value(struct fcomp *c, const struct fref *ref, const struct fvalue *v,
		     uint64_t *ret)
{
	unsigned long maj, min;
	char *end;

	if (!strstr(ref->type, "dev_t"))
		return filter_error(c->src, val_off(v), "MAJOR:MINOR needs a dev_t field; %s is %s",
				    ref->name, ref->type);
	maj = strtoul(v->text, &end, 10);
	min = strtoul(end + 1, NULL, 10);
	if (maj >= 1u << 12)
		return filter_error(c->src, val_off(v), "major %lu is out of range (0..4095)", maj);
	if (min >= 1u << 20)
		return filter_error(c->src, val_off(v), "minor %lu is out of range (0..1048575)", min);
	*ret = maj << 20 | min;
	return 0;
}

static bool is_dev(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n && s[n] == ':' && s[n + 1] && strspn(s + n + 1, "0123456789") == strlen(s + n + 1);
}

/* A number in C syntax (decimal, 0x hex, 0 octal, as the kernel's kstrtoull). */
static int parse_number(const char *s, uint64_t *u, bool *neg)
{
	char *end;

	*neg = s[0] == '-';
	if (!isdigit((unsigned char)s[*neg]))
		return -EINVAL;
	errno = 0;
	*u = strtoull(s + *neg, &end, 0);
	if (*end || errno)
		return errno ? -errno : -EINVAL;
	return 0;
}

/* Is (neg ? -u : u) a value of the field? Bit masks may use the unsigned
 * range of a signed field. */
static int check_range(struct fcomp *c, const struct fref *ref, const struct fvalue *v,
		       enum fpred_op op, uint64_t u, bool neg)
{
	unsigned bits = ref->in.size * 8;
	uint64_t umax = bits == 64 ? UINT64_MAX : (1ull << bits) - 1, smax = umax >> 1;
	bool mask = op == FO_BAND || op == FO_BALL;

	if (neg && !ref->in.is_signed)
		return filter_error(c->src, val_off(v), "%s is out of range for %s (%s, unsigned: 0..%llu)",
				    v->text, ref->name, ref->type, (unsigned long long)umax);
	if ((neg && u > smax + 1) || (!neg && u > (ref->in.is_signed && !mask ? smax : umax)))
		return ref->in.is_signed ?
			filter_error(c->src, val_off(v), "%s is out of range for %s (%s: %lld..%llu)",
				     v->text, ref->name, ref->type, -(long long)smax - 1,
				     (unsigned long long)(mask ? umax : smax)) :
			filter_error(c->src, val_off(v), "%s is out of range for %s (%s: 0..%llu)",
				     v->text, ref->name, ref->type, (unsigned long long)umax);
	return 0;
}

static int num_value(struct fcomp *c, const struct fref *ref, const struct fvalue *v,
		     enum fpred_op op, uint64_t *imm)
{
	uint64_t u = 0;
	bool neg;
	int r;

	if (v->quoted)
		return filter_error(c->src, v->off, "expected a number for %s (%s), not a string",
				    ref->name, ref->type);
	if (is_dev(v->text)) {
		r = dev_value(c, ref, v, &u);
		neg = false;
	} else if (is_ident_word(v->text))
		r = symbol_value(c, ref, v, &u), neg = false;
	else if (parse_number(v->text, &u, &neg) < 0)
		return filter_error(c->src, val_off(v), "expected a number for %s (%s), not '%s'",
				    ref->name, ref->type, v->text);
	else
		r = 0;
	if (r < 0)
		return r;
	r = check_range(c, ref, v, op, u, neg);
	if (r < 0)
		return r;
	*imm = neg ? -u : u;
	return 0;
}

/* The compiled glob runs lib/glob.c's algorithm in BPF; refuse what that
 * treats as literal by accident (an open class, a trailing backslash). */
static int check_glob(struct fcomp *c, const struct fvalue *v)
{
	const char *s = v->text;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\\') {
			if (!s[++i])
				return filter_error(c->src, val_off(v) + i - 1,
						    "a '\\' at the end of a glob: expected a character to escape");
		} else if (s[i] == '[') {
			size_t j = i + 1 + (s[i + 1] == '!');

			j += s[j] == ']';	/* a leading ']' is a member */
			while (s[j] && s[j] != ']')
				j++;
			if (!s[j])
				return filter_error(c->src, val_off(v) + i,
						    "unterminated '[' in a glob: expected ']'");
			i = j;
		}
	}
	return 0;
}

/* Index of the string constant in desc->strs, added once. */
static int str_value(struct fcomp *c, const struct fref *ref, const struct fvalue *v,
		     enum fpred_op op, uint8_t *idx)
{
	struct event_desc *d = c->desc;
	size_t len = strlen(v->text);
	int r;

	if (len >= TRACERD_FILTER_STR)
		return filter_error(c->src, val_off(v), "string of %zu bytes: at most %d", len,
				    TRACERD_FILTER_STR - 1);
	if (ref->in.imm && len >= ref->in.imm && op != FO_GLOB)
		return filter_error(c->src, val_off(v), "'%s' is longer than %s (%s) can hold",
				    v->text, ref->name, ref->type);
	if (op == FO_GLOB && (r = check_glob(c, v)) < 0)
		return r;
	for (unsigned i = 0; i < c->n_strs; i++)
		if (!strcmp(d->strs[i], v->text)) {
			*idx = i;
			return 0;
		}
	if (c->n_strs == TRACERD_FILTER_STRS)
		return filter_error(c->src, val_off(v), "more than %d different strings in one filter",
				    TRACERD_FILTER_STRS);
	memcpy(d->strs[c->n_strs], v->text, len + 1);
	*idx = c->n_strs++;
	return 0;
}

static const uint8_t num_cmp[] = {
	[FO_EQ] = FCMP_EQ, [FO_NE] = FCMP_NE, [FO_LT] = FCMP_LT, [FO_LE] = FCMP_LE,
	[FO_GT] = FCMP_GT, [FO_GE] = FCMP_GE, [FO_BAND] = FCMP_BAND, [FO_BALL] = FCMP_BALL,
	[FO_IN] = FCMP_EQ,
};

/* One compare of a value: a FOP_CMP or FOP_STRCMP. */
static int emit_compare(struct fcomp *c, const struct fnode *p, const struct fref *ref,
			const struct fvalue *v)
{
	struct filter_insn in = ref->in;
	int r;

	if (ref->is_str) {
		in.op = FOP_STRCMP;
		in.cmp = p->op == FO_GLOB ? FCMP_GLOB : p->op == FO_NE ? FCMP_NE : FCMP_EQ;
		r = str_value(c, ref, v, p->op, &in.str);
	} else {
		in.op = FOP_CMP;
		in.cmp = num_cmp[p->op];
		uint64_t imm = 0;

		r = num_value(c, ref, v, p->op, &imm);
		in.imm = imm;
	}
	return r < 0 ? r : emit(c, v->off, in);
}

static int check_op(struct fcomp *c, const struct fnode *p, const struct fref *ref)
{
	if (ref->is_str && p->op != FO_EQ && p->op != FO_NE && p->op != FO_GLOB && p->op != FO_IN)
		return filter_error(c->src, p->op_off,
				    "%s is a string (%s): expected ==, !=, ~ or in, not '%s'", ref->name,
				    ref->type, fpred_op_name(p->op));
	if (!ref->is_str && p->op == FO_GLOB)
		return filter_error(c->src, p->op_off,
				    "'~' is a glob and needs a string; %s is a number (%s): "
				    "expected ==, !=, <, <=, >, >=, &, &= or in", ref->name, ref->type);
	return 0;
}

static int compile_pred(struct fcomp *c, const struct fnode *p)
{
	struct fref ref = {};
	int r = resolve_field(c, p, &ref);

	if (r >= 0)
		r = check_op(c, p, &ref);
	/* in (a, b, c): a || b || c */
	for (size_t i = 0; r >= 0 && i < p->n_vals; i++) {
		if (i > 0)
			r = emit(c, p->vals[i].off, (struct filter_insn){ .op = FOP_ORSC, .imm = 1 });
		if (r >= 0)
			r = emit_compare(c, p, &ref, &p->vals[i]);
	}
	return r;
}

static int compile_node(struct fcomp *c, const struct fnode *n);

/* A chain a && b && c (the parser builds it left-deep): each operand but the
 * last is followed by a skip to the chain's end, so the first operand that
 * decides ends it. */
static int compile_chain(struct fcomp *c, const struct fnode *n)
{
	const struct fnode *ops[TRACERD_FILTER_INSNS + 1], *x = n;
	int at[TRACERD_FILTER_INSNS + 1], k = 0, r = 0;
	uint8_t op = n->kind == FN_AND ? FOP_ANDSC : FOP_ORSC;

	/* The right operands, last first; the tree has at most INSNS values. */
	for (; x->kind == n->kind && k < TRACERD_FILTER_INSNS; x = x->l)
		ops[k++] = x->r;
	ops[k++] = x;
	for (int i = k - 1; i >= 0 && r >= 0; i--) {
		r = compile_node(c, ops[i]);
		if (r >= 0 && i > 0) {
			r = emit(c, ops[i - 1]->off, (struct filter_insn){ .op = op });
			at[i] = c->desc->n_insns - 1;
		}
	}
	for (int i = 1; i < k && r >= 0; i++)
		c->desc->insns[at[i]].imm = c->desc->n_insns - at[i] - 1;
	return r;
}

static int compile_node(struct fcomp *c, const struct fnode *n)
{
	int r;

	switch (n->kind) {
	case FN_PRED:
		return compile_pred(c, n);
	case FN_NOT:
		r = compile_node(c, n->l);
		return r < 0 ? r : emit(c, n->off, (struct filter_insn){ .op = FOP_NOT });
	default:
		return compile_chain(c, n);
	}
}

/* How much of the record the filter reads (desc->filter_span): the class
 * program copies that prefix alone, runs the filter, and copies the rest of
 * the record (fixed tail and __data_loc payload) only for a record it keeps.
 * A rejected record then costs one short bpf_probe_read_kernel() instead of
 * one or two of the whole record. */
static uint32_t filter_span(const struct event_desc *d)
{
	uint32_t end = 8;	/* common_type, common_pid: rebuilt in the prefix */

	for (uint32_t i = 0; i < d->n_insns; i++) {
		const struct filter_insn *in = &d->insns[i];

		if (in->op != FOP_CMP && in->op != FOP_STRCMP)
			continue;
		if (in->src == SRC_DATA_LOC || in->src == SRC_REL_LOC || in->src == SRC_USER_STR)
			return 0;	/* the string is in the payload */
		if (in->src != SRC_RECORD && in->src != SRC_STR)
			continue;	/* pid, tgid, cpu, comm: not in the record */
		if (in->off + (in->op == FOP_CMP ? in->size : in->imm) > end)
			end = in->off + (in->op == FOP_CMP ? in->size : in->imm);
	}
	return end;
}

/* desc->filter_chain: c0 OP c1 OP ... cN, numeric compares, one OP. An
 * `in (...)` inside an || chain is more of the same ||. */
static uint32_t filter_chain(const struct event_desc *d)
{
	uint8_t op = d->n_insns > 1 ? d->insns[1].op : 0;

	if ((op != FOP_ANDSC && op != FOP_ORSC) || d->n_insns % 2 == 0)
		return 0;
	for (uint32_t i = 0; i < d->n_insns; i++)
		if (d->insns[i].op != (i % 2 ? op : FOP_CMP))
			return 0;
	return op;
}

int filter_compile_tree(const struct filter_text *src, const struct fnode *tree,
			const struct tp_event *e, struct event_desc *desc)
{
	struct fcomp c = { .src = src, .e = e, .desc = desc };
	int r;

	desc->n_insns = 0;
	desc->filter_span = 0;
	desc->filter_chain = 0;
	memset(desc->strs, 0, sizeof(desc->strs));
	if (!tree)
		return 0;
	/* Symbol tables are parsed from the print fmt once and cached in e. */
	tp_event_load_symbols((struct tp_event *)e);
	r = compile_node(&c, tree);
	if (r >= 0) {
		desc->filter_span = filter_span(desc);
		desc->filter_chain = filter_chain(desc);
	}
	return r;
}
