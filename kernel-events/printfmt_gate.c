// SPDX-License-Identifier: GPL-2.0
/* What is handed to libtraceevent. It parses tracefs text as trusted and
 * crashes on malformed input (the format fuzzer found eight such inputs), so
 * a format goes to it only in the shape the kernel writes: field lines of
 * one strict form, and a print fmt that is a C string literal and a list of
 * C expressions. Anything else is rendered as field=value. Each rule below
 * names the crash it prevents; tests/fuzz/corpus/format/regress-* hold them. */
#include <ctype.h>
#include <string.h>
#include "printfmt.h"

/* libtraceevent folds constant flag values at parse time and divides by
 * zero with them (an FPE the fuzzer found): a divisor must be what kernels
 * write, a nonzero number or a sizeof. */
static bool divisor_ok(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return (*p >= '1' && *p <= '9') || !strncmp(p, "sizeof", 6);
}

/* After an operator comes an operand (or the rest of a two-character
 * operator), never a separator or the end: libtraceevent reads past a
 * dangling one (a SEGV from the fuzzer on `"", -`). */
static bool operand_follows(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return *p && !strchr(",)]}", *p);
}

/* A member access is of the record, REC->x or (REC)->x: libtraceevent
 * crashed on another name's ("m->p"). */
static bool arrow_ok(const char *start, const char *p)
{
	if (p > start && p[-1] == ')')
		p--;
	return p - start >= 3 && !strncmp(p - 3, "REC", 3) &&
	       (p - start == 3 || !(isalnum((unsigned char)p[-4]) || p[-4] == '_'));
}

/* Literals closed, brackets balanced and nested (an open one: a SEGV),
 * C's characters only (a stray '@': a SEGV), operators as above. */
/* A '.' is a member access, between an operand and a name ("-." was a
 * SEGV). */
static bool dot_ok(const char *start, const char *p)
{
	return p > start && (isalnum((unsigned char)p[-1]) || strchr("_)]", p[-1])) &&
	       (isalpha((unsigned char)p[1]) || p[1] == '_');
}

static bool print_fmt_well_formed(const char *p)
{
	const char *start = p;
	char stack[1024];	/* gfp masks nest about 30 deep */
	size_t depth = 0;

	if (*p != '"')
		return false;
	while (*p) {
		const char *open = strchr("([{", *p), *close = strchr(")]}", *p);

		if (*p == '"' || *p == '\'') {
			const char *q = p + 1;

			while (*q && *q != *p) {
				/* Printable text, tabs and newlines: a control
				 * byte in a literal was an FPE. */
				if (!isprint((unsigned char)*q) && *q != '\t' && *q != '\n')
					return false;
				q += q[0] == '\\' && q[1] ? 2 : 1;
			}
			if (!*q)
				return false;	/* not closed */
			p = q + 1;
			continue;
		}
		if (open && *open) {
			if (depth == sizeof(stack))
				return false;
			stack[depth++] = ")]}"[open - "([{"];
		} else if (close && *close) {
			if (!depth || stack[--depth] != *p)
				return false;
		} else if (!isalnum((unsigned char)*p) && !strchr("_ \t\n,.-><=!~&|^+*/%?:", *p)) {
			return false;	/* not a character of a C expression */
		} else if ((*p == '/' || *p == '%') && !divisor_ok(p + 1)) {
			return false;
		} else if (strchr("-+/%&|^!~<>=?:", *p) && !operand_follows(p + 1)) {
			return false;
		} else if (p[0] == '-' && p[1] == '>' && !arrow_ok(start, p)) {
			return false;
		} else if (*p == '.' && !dot_ok(start, p)) {
			return false;
		}
		p++;
	}
	return depth == 0;
}

/* Consumes the text lit, then at least one digit. */
static bool expect_number(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0 || !isdigit((unsigned char)(*p)[n]))
		return false;
	for (*p += n; isdigit((unsigned char)**p); (*p)++)
		;
	return true;
}

/* A type, a space, then the name: "type name", "type name[N]", "__data_loc
 * char[] name" (libtraceevent crashed on a declaration like "d[]c"). */
static bool decl_has_name(const char *decl, const char *end)
{
	const char *sp = NULL;

	for (const char *c = decl; c < end; c++)
		if (*c == ' ')
			sp = c;
	if (!sp || sp == decl)
		return false;
	while (*++sp == '*')
		;
	return sp < end && (isalpha((unsigned char)*sp) || *sp == '_');
}

/* "\tfield:<decl>;\toffset:N;\tsize:N;\tsigned:N;" to the letter: <decl> of
 * names, spaces, '*' and balanced [] or () (array sizes, sizeof(...)); a
 * stray byte in a declaration was a SEGV. */
static bool field_line_ok(const char *l, size_t len)
{
	const char *end = l + len, *c;
	unsigned depth = 0;

	if (strncmp(l, "\tfield:", 7) != 0)
		return false;
	for (c = l + 7; c < end && *c != ';'; c++) {
		if (*c == '[' || *c == '(')
			depth++;
		else if (*c == ']' || *c == ')') {
			if (!depth--)
				return false;
		} else if (!isalnum((unsigned char)*c) && !strchr("_ *", *c))
			return false;
	}
	if (c == l + 7 || depth || c == end || !decl_has_name(l + 7, c))
		return false;
	return expect_number(&c, ";\toffset:") && expect_number(&c, ";\tsize:") &&
	       expect_number(&c, ";\tsigned:") && c + 1 == end && *c == ';';
}

bool printfmt_tep_can_take(const char *format_text)
{
	const char *l = strstr(format_text, "\nformat:\n"), *fmt;

	fmt = strstr(format_text, "\nprint fmt: ");
	if (!l || !fmt || fmt < l)
		return false;
	for (l += strlen("\nformat:\n"); l <= fmt; ) {
		const char *end = strchrnul(l, '\n');

		if (end > l && !field_line_ok(l, end - l))
			return false;
		l = end + 1;
	}
	/* From "print fmt: " to the end: a print fmt may span lines. */
	return print_fmt_well_formed(fmt + strlen("\nprint fmt: "));
}
