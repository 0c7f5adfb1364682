// SPDX-License-Identifier: GPL-2.0
/* Folding constant parenthesized expressions of a print fmt into numbers.
 * libtraceevent forgets parentheses when it rebalances operators: it reads
 * "REC->flags & (0x40000 | 0x80000)" as "(REC->flags & 0x40000) | 0x80000".
 * A constant group folded to one number leaves nothing to rebalance. */
#include <ctype.h>
#include "printfmt.h"
#include "strbuf.h"
#include "util.h"

struct lex {
	const char *p, *end;
	bool bad;
};

static void skip_space(struct lex *l)
{
	while (l->p < l->end && isspace((unsigned char)*l->p))
		l->p++;
}

static int prec_of(const char *p, size_t *len)
{
	static const struct { const char *op; int prec; } ops[] = {
		{ "<<", 5 }, { ">>", 5 }, { "|", 1 }, { "^", 2 }, { "&", 3 },
		{ "+", 6 }, { "-", 6 }, { "*", 7 }, { "/", 7 }, { "%", 7 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strncmp(p, ops[i].op, strlen(ops[i].op))) {
			*len = strlen(ops[i].op);
			/* "&&", "||" are not folded */
			return (p[0] == '&' || p[0] == '|') && p[1] == p[0] ? -1 : ops[i].prec;
		}
	return -1;
}

static uint64_t unary(struct lex *l)
{
	char *e;
	uint64_t v;

	skip_space(l);
	if (l->p < l->end && strchr("~-!", *l->p)) {
		char op = *l->p++;

		v = unary(l);
		return op == '~' ? ~v : op == '-' ? -v : !v;
	}
	if (l->p >= l->end || !isdigit((unsigned char)*l->p)) {
		l->bad = true;
		return 0;
	}
	v = strtoull(l->p, &e, 0);
	while (e < l->end && strchr("uUlL", *e))
		e++;
	l->p = e;
	return v;
}

static uint64_t apply(char op, char op2, uint64_t a, uint64_t b, bool *bad)
{
	switch (op) {
	case '<': return b < 64 ? a << b : 0;
	case '>': return b < 64 ? a >> b : 0;
	case '|': return a | b;
	case '^': return a ^ b;
	case '&': return a & b;
	case '+': return a + b;
	case '-': return a - b;
	case '*': return a * b;
	default:
		if (!b)
			return *bad = true, 0;
		(void)op2;
		return op == '/' ? a / b : a % b;
	}
}

static uint64_t binary(struct lex *l, int min_prec)
{
	uint64_t v = unary(l);

	for (;;) {
		size_t len = 0;
		int prec;
		char op, op2;

		skip_space(l);
		if (l->bad || l->p >= l->end || (prec = prec_of(l->p, &len)) < min_prec)
			return v;
		op = l->p[0];
		op2 = l->p[1];
		l->p += len;
		v = apply(op, op2, v, binary(l, prec + 1), &l->bad);
	}
}

/* Unsigned arithmetic is only exact for non-negative operands: fold only
 * groups free of a leading minus. */
static bool fold(const char *p, size_t n, uint64_t *ret)
{
	struct lex l = { p, p + n, false };

	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)p[i]) && !strchr(" \txXuUlL|^&<>+*/%~", p[i]))
			return false;
	*ret = binary(&l, 0);
	skip_space(&l);
	return !l.bad && l.p == l.end;
}

/* One pass over the innermost groups; true if anything was folded. */
static bool fold_pass(struct strbuf *sb)
{
	struct strbuf out = { 0 };
	const char *s = sb_str(sb), *open = NULL;
	bool changed = false;
	size_t copied = 0;

	for (size_t i = 0; s[i]; i++) {
		uint64_t v;

		if (s[i] == '"' || s[i] == '\'') {
			for (char q = s[i++]; s[i] && s[i] != q; i++)
				i += s[i] == '\\' && s[i + 1];
			open = NULL;
			if (!s[i])
				break;
		} else if (s[i] == '(') {
			open = s + i;
		} else if (s[i] == ')' && open && (open == s || !(isalnum((unsigned char)open[-1]) || open[-1] == '_')) &&
			   fold(open + 1, s + i - open - 1, &v)) {
			sb_put(&out, s + copied, open - s - copied);
			sb_printf(&out, "%llu", (unsigned long long)v);
			copied = i + 1;
			changed = true;
			open = NULL;
		} else if (s[i] == ')') {
			open = NULL;
		}
	}
	sb_puts(&out, s + copied);
	sb_free(sb);
	*sb = out;
	return changed;
}

void printfmt_fold_constants(struct strbuf *sb)
{
	while (fold_pass(sb) && !sb->oom)
		;
}
