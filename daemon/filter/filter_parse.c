// SPDX-License-Identifier: GPL-2.0
/* Filter expressions to a syntax tree: the kernel's ftrace filter grammar
 * (Documentation/trace/events.rst) plus &=, "in (...)", symbols and
 * MAJOR:MINOR, which are bare words here and read by the compiler.
 *
 *   or   := and ('||' and)*
 *   and  := not ('&&' not)*
 *   not  := '!' not | '(' or ')' | pred
 *   pred := FIELD OP value | FIELD 'in' '(' value (',' value)* ')'
 */
#include <ctype.h>
#include <stdarg.h>
#include "filter_ast.h"
#include "util.h"

#define MAX_DEPTH 32	/* nesting of ( and !, so that recursion stays small */
#include "tracerd_record.h"

struct parser {
	const struct filter_text *src;
	const char *s;
	int i;
	int depth;
	int n_values;	/* a value is at least one instruction: bounds the tree */
};

static const char *const op_names[] = {
	[FO_EQ] = "==", [FO_NE] = "!=", [FO_LT] = "<", [FO_LE] = "<=", [FO_GT] = ">",
	[FO_GE] = ">=", [FO_BAND] = "&", [FO_BALL] = "&=", [FO_GLOB] = "~", [FO_IN] = "in",
};

const char *fpred_op_name(enum fpred_op op)
{
	return op_names[op];
}

int filter_error(const struct filter_text *src, int off, const char *fmt, ...)
{
	const struct conf_pos *pos = src->pos;
	char msg[sizeof(src->d->msg)];
	va_list ap;

	if (!src->d)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_set(src->d, pos ? pos->file : NULL, pos ? pos->line : 0,
		 (pos && pos->col > 0 ? pos->col : 1) + off, "%s", msg);
	snprintf(src->d->source, sizeof(src->d->source), "%s",
		 pos && pos->source ? pos->source : src->expr);
	return -EINVAL;
}

void fnode_free(struct fnode *n)
{
	if (!n)
		return;
	fnode_free(n->l);
	fnode_free(n->r);
	free(n->field);
	for (size_t i = 0; i < n->n_vals; i++)
		free(n->vals[i].text);
	free(n->vals);
	free(n);
}

static void skip_ws(struct parser *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

/* Consumes tok (after blanks) if it is next. */
static bool accept(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(p);
	if (strncmp(p->s + p->i, tok, n))
		return false;
	p->i += n;
	return true;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static struct fnode *node_new(enum fnode_kind kind, int off)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->off = off;
	}
	return n;
}

static int parse_or(struct parser *p, struct fnode **ret);

static int add_value(struct parser *p, struct fnode *n, char *text, int off, int quoted)
{
	struct fvalue *v;

	if (++p->n_values > TRACERD_FILTER_INSNS) {
		free(text);
		return filter_error(p->src, off, "filter too long: more than %d values",
				    TRACERD_FILTER_INSNS);
	}
	v = realloc(n->vals, (n->n_vals + 1) * sizeof(*v));
	if (!v) {
		free(text);
		return -ENOMEM;
	}
	n->vals = v;
	v[n->n_vals++] = (struct fvalue){ .text = text, .off = off, .quoted = quoted };
	return 0;
}

/* A quoted string ("..." or '...', as the kernel takes) or a bare word up
 * to a blank, ')', ',', '&' or '|'. */
static int parse_value(struct parser *p, struct fnode *n)
{
	int start, len;
	char q;

	skip_ws(p);
	start = p->i;
	q = p->s[p->i];
	if (q == '"' || q == '\'') {
		const char *end = strchr(p->s + start + 1, q);

		if (!end)
			return filter_error(p->src, start, "unterminated string: expected a closing %c", q);
		len = end - (p->s + start + 1);
		p->i = start + len + 2;
		return add_value(p, n, strndup(p->s + start + 1, len), start, 1);
	}
	while (p->s[p->i] && !isspace((unsigned char)p->s[p->i]) && !strchr("),&|(", p->s[p->i]))
		p->i++;
	if (p->i == start)
		return filter_error(p->src, start, "expected a value: a number, a symbol or a string");
	return add_value(p, n, strndup(p->s + start, p->i - start), start, 0);
}

/* in (v, v, ...) */
static int parse_set(struct parser *p, struct fnode *n)
{
	int open, r;

	skip_ws(p);
	open = p->i;
	if (!accept(p, "("))
		return filter_error(p->src, p->i, "expected '(' after 'in'");
	do {
		r = parse_value(p, n);
		if (r < 0)
			return r;
	} while (accept(p, ","));
	if (!accept(p, ")"))
		return filter_error(p->src, p->i, "expected ',' or ')' to close the '(' at column %d",
				    (p->src->pos && p->src->pos->col > 0 ? p->src->pos->col : 1) + open);
	return 0;
}

static int parse_op(struct parser *p, enum fpred_op *op)
{
	static const struct { const char *tok; enum fpred_op op; } ops[] = {
		{ "==", FO_EQ }, { "!=", FO_NE }, { "<=", FO_LE }, { ">=", FO_GE },
		{ "&=", FO_BALL }, { "<", FO_LT }, { ">", FO_GT }, { "~", FO_GLOB },
	};
	const char *s;

	skip_ws(p);
	s = p->s + p->i;
	if (s[0] == '&' && s[1] != '&') {
		*op = s[1] == '=' ? FO_BALL : FO_BAND;
		p->i += s[1] == '=' ? 2 : 1;
		return 0;
	}
	if (!strncmp(s, "in", 2) && !is_ident(s[2])) {
		*op = FO_IN;
		p->i += 2;
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(ops); k++)
		if (!strncmp(s, ops[k].tok, strlen(ops[k].tok))) {
			*op = ops[k].op;
			p->i += strlen(ops[k].tok);
			return 0;
		}
	return filter_error(p->src, p->i,
			    "expected an operator: ==, !=, <, <=, >, >=, &, &=, ~ or in%s",
			    s[0] == '=' ? " (comparing is '==')" : "");
}

static int parse_pred(struct parser *p, struct fnode **ret)
{
	_cleanup_(fnode_freep) struct fnode *n = NULL;
	int start, r;

	skip_ws(p);
	start = p->i;
	if (!is_ident_start(p->s[start]))
		return filter_error(p->src, start, p->s[start] ?
				    "expected a field name, '!' or '('" :
				    "expected a field name, '!' or '(' before the end of the filter");
	while (is_ident(p->s[p->i]))
		p->i++;
	n = node_new(FN_PRED, start);
	if (!n || !(n->field = strndup(p->s + start, p->i - start)))
		return -ENOMEM;
	skip_ws(p);
	n->op_off = p->i;
	r = parse_op(p, &n->op);
	if (r < 0)
		return r;
	r = n->op == FO_IN ? parse_set(p, n) : parse_value(p, n);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(n);
	return 0;
}

static int parse_not(struct parser *p, struct fnode **ret)
{
	_cleanup_(fnode_freep) struct fnode *n = NULL;
	int start, r;

	skip_ws(p);
	start = p->i;
	if (++p->depth > MAX_DEPTH)
		return filter_error(p->src, start, "nested too deep: at most %d levels of '(' and '!'",
				    MAX_DEPTH);
	if (accept(p, "!") ) {
		n = node_new(FN_NOT, start);
		if (!n)
			return -ENOMEM;
		r = parse_not(p, &n->l);
	} else if (accept(p, "(")) {
		r = parse_or(p, &n);
		if (r >= 0 && !accept(p, ")"))
			r = filter_error(p->src, p->i, "expected ')' to close the '(' at column %d",
					 (p->src->pos && p->src->pos->col > 0 ? p->src->pos->col : 1) + start);
	} else
		r = parse_pred(p, &n);
	p->depth--;
	if (r < 0)
		return r;
	*ret = TAKE_PTR(n);
	return 0;
}

/* Left-associative chain of one binary operator over sub-parses. */
static int parse_chain(struct parser *p, const char *tok, enum fnode_kind kind,
		       int (*sub)(struct parser *, struct fnode **), struct fnode **ret)
{
	_cleanup_(fnode_freep) struct fnode *l = NULL;
	int r = sub(p, &l);

	if (r < 0)
		return r;
	for (;;) {
		struct fnode *n;

		skip_ws(p);
		if (!accept(p, tok))
			break;
		n = node_new(kind, p->i - 2);
		if (!n)
			return -ENOMEM;
		n->l = TAKE_PTR(l);
		l = n;
		r = sub(p, &n->r);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(l);
	return 0;
}

static int parse_and(struct parser *p, struct fnode **ret)
{
	return parse_chain(p, "&&", FN_AND, parse_not, ret);
}

static int parse_or(struct parser *p, struct fnode **ret)
{
	return parse_chain(p, "||", FN_OR, parse_and, ret);
}

int filter_parse(const struct filter_text *src, struct fnode **ret)
{
	struct parser p = { .src = src, .s = src->expr };
	_cleanup_(fnode_freep) struct fnode *n = NULL;
	int r;

	*ret = NULL;
	skip_ws(&p);
	if (!p.s[p.i])
		return 0;
	r = parse_or(&p, &n);
	if (r < 0)
		return r;
	skip_ws(&p);
	if (p.s[p.i])
		return filter_error(src, p.i, p.s[p.i] == ')' ?
				    "unbalanced ')': expected '&&', '||' or the end of the filter" :
				    "expected '&&', '||' or the end of the filter");
	*ret = TAKE_PTR(n);
	return 0;
}
