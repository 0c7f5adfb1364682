// SPDX-License-Identifier: GPL-2.0
/* Parsing a print fmt with libtraceevent, after substituting BTF values for
 * the enum names tracefs left in it. One tep handle per event: handles are
 * not thread-safe, and no plugins are loaded (they change the text). */
#include <ctype.h>
#include <traceevent/event-parse.h>
#include "printfmt.h"
#include "strbuf.h"
#include "util.h"

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool is_keyword(const char *s, size_t n)
{
	static const char *const kw[] = {
		"REC", "unsigned", "signed", "int", "long", "short", "char", "void", "const",
		"bool", "struct", "union", "enum", "sizeof", "volatile", "true", "false",
	};
	for (size_t i = 0; i < ARRAY_SIZE(kw); i++)
		if (strlen(kw[i]) == n && !memcmp(kw[i], s, n))
			return true;
	return false;
}

static const char *skip_literal(const char *p)
{
	char q = *p++;

	while (*p && *p != q)
		p += p[0] == '\\' && p[1] ? 2 : 1;
	return *p ? p + 1 : p;
}

static char prev_nonspace(const char *start, const char *p)
{
	while (p > start && isspace((unsigned char)p[-1]))
		p--;
	return p > start ? p[-1] : 0;
}

static char next_nonspace(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return *p;
}

/* A name that is a member (REC->x, a.b), a function, a keyword or a type in a cast. */
static bool leave_alone(const char *start, const char *id, size_t n, bool after_tag)
{
	char prev = prev_nonspace(start, id), next = next_nonspace(id + n);

	if (after_tag || prev == '.' || (prev == '>' && id - start >= 2 && id[-2] == '-'))
		return true;
	if (next == '(' || is_keyword(id, n))
		return true;
	return (prev == '(' || prev == 't' /* const */) && (next == ')' || next == '*');
}

int tp_event_add_enum(struct tp_event *e, const char *name, size_t len, long long value)
{
	char *n = strndup(name, len);

	if (!n || GROW(e->enums, e->cap_enums, e->n_enums) < 0) {
		free(n);
		return -ENOMEM;
	}
	e->enums[e->n_enums++] = (struct tp_enum){ n, value };
	return 0;
}

/* An enum name's value: from the event's own table (kept from an earlier
 * lookup, or given by a store file), else from BTF, remembered. */
static int enum_value(struct tp_event *e, const char *name, size_t len, int64_t *v)
{
	for (size_t i = 0; i < e->n_enums; i++)
		if (strlen(e->enums[i].name) == len && !memcmp(e->enums[i].name, name, len)) {
			*v = e->enums[i].value;
			return 0;
		}
	if (e->enums_given || btf_enum_value(name, len, v) < 0)
		return -ENOENT;
	(void)tp_event_add_enum(e, name, len, *v);	/* without it, only the store misses it */
	return 0;
}

static void substitute(struct tp_event *e, const char *fmt, struct strbuf *out, char **unresolved)
{
	const char *p = fmt;
	bool after_tag = false;

	while (*p) {
		const char *s = p;
		int64_t v;

		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
			sb_put(out, s, p - s);
			continue;
		}
		if (!is_ident(*p)) {
			sb_putc(out, *p++);
			continue;
		}
		while (is_ident(*p))
			p++;
		if (isdigit((unsigned char)*s) || leave_alone(fmt, s, p - s, after_tag)) {
			after_tag = (p - s == 6 && !memcmp(s, "struct", 6)) ||
				    (p - s == 5 && !memcmp(s, "union", 5)) ||
				    (p - s == 4 && !memcmp(s, "enum", 4));
			sb_put(out, s, p - s);
			continue;
		}
		after_tag = false;
		if (enum_value(e, s, p - s, &v) == 0) {
			sb_printf(out, "%lld", (long long)v);
			continue;
		}
		if (!*unresolved)
			*unresolved = strndup(s, p - s);
		sb_put(out, s, p - s);
	}
}

/* The format file with the print fmt line rewritten. */
static void rewrite(struct tp_event *e, struct strbuf *out, char **unresolved)
{
	const char *line = strstr(e->format_text, "\nprint fmt: ");
	struct strbuf subst = { 0 };
	const char *end;

	if (!line) {
		sb_puts(out, e->format_text);
		return;
	}
	line += strlen("\nprint fmt: ");
	sb_put(out, e->format_text, line - e->format_text);
	end = strchrnul(line, '\n');
	substitute(e, e->print_fmt, &subst, unresolved);
	printfmt_fold_constants(&subst);
	sb_puts(out, sb_str(&subst));
	sb_free(&subst);
	sb_puts(out, end);
}

int tp_event_format_resolved(struct tp_event *e, struct strbuf *out)
{
	_cleanup_free_ char *unresolved = NULL;

	if (!e->format_text)
		return -EINVAL;
	rewrite(e, out, &unresolved);
	return out->oom ? -ENOMEM : 0;
}

void tp_printfmt_free(struct tp_printfmt *p)
{
	if (!p)
		return;
	if (p->tep)
		tep_free(p->tep);
	free(p->unresolved);
	free(p);
}

/* The first REC->name (or (REC)->name) that is not a field of e, or NULL. libtraceevent
 * dereferences the missing field (a SEGV found by tests/fuzz/fuzz_format.c);
 * a kernel never writes one, so such a print fmt is not handed to it. */
static char *unknown_rec_field(const struct tp_event *e)
{
	/* The whole print fmt: it may span lines, e->print_fmt is the first. */
	const char *p = strstr(e->format_text, "\nprint fmt: ");

	while (p && *p) {
		const char *s;

		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
			continue;
		}
		/* printfmt_gate.c let "->" follow only REC or (REC). */
		if (strncmp(p, "->", 2) != 0) {
			p++;
			continue;
		}
		s = p += 2;
		while (is_ident(*p))
			p++;
		{
			_cleanup_free_ char *name = strndup(s, p - s);
			char *rec;

			if (name && tp_event_field(e, name))
				continue;
			return asprintf(&rec, "REC->%.*s", (int)(p - s), s) < 0 ? NULL : rec;
		}
	}
	return NULL;
}

static int parse(struct tp_event *e, struct tp_printfmt *p)
{
	struct strbuf text = { 0 };
	struct tep_event *ev = NULL;

	p->tep = tep_alloc();
	if (!p->tep)
		return -ENOMEM;
	tep_set_long_size(p->tep, sizeof(long));
	tep_set_file_bigendian(p->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(p->tep, TEP_LITTLE_ENDIAN);
	tep_set_page_size(p->tep, getpagesize());
	if (!e->format_text || !printfmt_tep_can_take(e->format_text))
		return 0;	/* p->ev stays NULL: rendered as field=value */
	p->unresolved = unknown_rec_field(e);
	if (p->unresolved)
		return 0;
	rewrite(e, &text, &p->unresolved);
	if (text.oom) {
		sb_free(&text);
		return -ENOMEM;
	}
	tep_parse_format(p->tep, &ev, text.buf, text.len, e->system ? e->system : "unknown");
	sb_free(&text);
	/* The return code says 0 even when parsing failed: check the flag. */
	p->ev = ev && !(ev->flags & TEP_EVENT_FL_FAILED) ? ev : NULL;
	return 0;
}

int tp_event_printfmt(struct tp_event *e, const struct tp_printfmt **ret)
{
	struct tp_printfmt *p;
	int r;

	if (!e->printfmt) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		r = parse(e, p);
		if (r < 0) {
			tp_printfmt_free(p);
			return r;
		}
		e->printfmt = p;
	}
	*ret = e->printfmt;
	return 0;
}
