// SPDX-License-Identifier: GPL-2.0
/* Which fields hold kernel addresses, so that they are hashed wherever they
 * are printed (RawPointers=no): a field is a pointer if its type is one
 * (format.c) or if the print fmt prints it with a %p conversion that shows
 * the address (%p, %pS, %ps, %pB, %pF, %pK, %px...; not %pI4, %pM, %pU,
 * %pb, which print the bytes the argument points to). */
#include <ctype.h>
#include "render_priv.h"

bool render_ext_prints_address(const char *ext)
{
	return !ext[0] || !strchr("IiMmUbhE", ext[0]);
}

/* Compiled: the fields n reads for its value (not for a ?: condition or
 * an index). */
void render_mark_pointer_fields(struct tp_event *e, const struct rnode *n)
{
	if (!n)
		return;
	if (n->field && (n->kind == RN_FIELD || n->kind == RN_ARRAY))
		e->fields[n->field - e->fields].is_pointer = true;
	if (n->kind != RN_COND)
		render_mark_pointer_fields(e, n->a);
	if (n->kind != RN_INDEX)
		render_mark_pointer_fields(e, n->b);
	render_mark_pointer_fields(e, n->c);
}

/* Past the string literal at p ('"' ... '"'), or NULL. */
static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : NULL;
}

/* Past one top-level argument: to the next ',' outside (), [], {} and strings. */
static const char *skip_arg(const char *p)
{
	int depth = 0;

	while (*p && (depth || *p != ',')) {
		if (*p == '"') {
			if (!(p = skip_string(p)))
				return NULL;
			continue;
		}
		depth += !!strchr("([{", *p) - !!strchr(")]}", *p);
		p++;
	}
	return p;
}

/* Marks the fields that argument [a, end) names as REC->name. */
static void mark_named(struct tp_event *e, const char *a, const char *end)
{
	for (const char *p = a; (p = strstr(p, "REC->")) && p < end; p += 5)
		for (size_t i = 0; i < e->n_fields; i++) {
			const char *name = e->fields[i].name;
			size_t n = strlen(name);

			if (!strncmp(p + 5, name, n) && p + 5 + n <= end &&
			    !isalnum((unsigned char)p[5 + n]) && p[5 + n] != '_')
				e->fields[i].is_pointer = true;
		}
}

/* One conversion at p (past the '%'): bit i of *addr set if it prints
 * argument i as an address; *arg counts the arguments taken. */
static const char *conversion(const char *p, unsigned *arg, uint64_t *addr)
{
	char ext[8] = "";

	p += strspn(p, "-+ #0");
	if (*p == '*' && ++p)
		(*arg)++;
	p += strspn(p, "0123456789");
	if (*p == '.' && *++p == '*' && ++p)
		(*arg)++;
	p += strspn(p, "0123456789hlLzjtq");
	if (*p != 'p')
		return *p ? (++*arg, p + 1) : p;
	for (size_t k = 0; isalnum((unsigned char)*++p);)
		if (k < sizeof(ext) - 1)
			ext[k++] = *p;
	if (render_ext_prints_address(ext))
		*addr |= *arg < 64 ? 1ULL << *arg : ~0ULL;	/* past 64: all of them */
	(*arg)++;
	return p;
}

/* The leading string literals ("a" "b"): their conversions, and where the
 * arguments start; NULL if the text is not that. */
static const char *conversions(const char *p, uint64_t *addr)
{
	unsigned arg = 0;

	while (*p == '"' || isspace((unsigned char)*p)) {
		if (*p != '"') {
			p++;
			continue;
		}
		for (p++; *p && *p != '"';) {
			if (*p == '\\' && p[1])
				p += 2;
			else if (*p == '%' && p[1] == '%')
				p += 2;
			else if (*p == '%')
				p = conversion(p + 1, &arg, addr);
			else
				p++;
		}
		if (*p++ != '"')
			return NULL;
	}
	return *p == ',' ? p + 1 : NULL;
}

/* Not compiled: pairs the conversions with the arguments by their text.
 * The argument of a %p that prints an address marks the fields it names;
 * text that does not pair up marks every field the print fmt names, if it
 * has such a %p at all. */
void render_mark_pointer_fields_text(struct tp_event *e)
{
	const char *args, *p, *end;
	uint64_t addr = 0;

	if (!e->print_fmt)
		return;
	args = conversions(e->print_fmt, &addr);
	if (!addr)
		return;
	for (p = args, end = NULL; p; p = *end ? end + 1 : NULL, addr >>= addr == ~0ULL ? 0 : 1) {
		if (!(end = skip_arg(p)))
			break;
		if (addr & 1)
			mark_named(e, p, end);
	}
	if (!args || (p && !end))
		mark_named(e, e->print_fmt, e->print_fmt + strlen(e->print_fmt));
}
