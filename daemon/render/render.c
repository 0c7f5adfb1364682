// SPDX-License-Identifier: GPL-2.0
/* Rendering records: each event's print fmt is compiled once at attach
 * (render_compile.c). What the compiler refuses renders through
 * libtraceevent's own printing, and what libtraceevent cannot parse (or
 * would print raw pointers or wrong enum values for) as field=value pairs. */
#include <ctype.h>
#include <traceevent/event-parse.h>
#include "log.h"
#include "kernel-events/printfmt.h"
#include "render_priv.h"
#include "util.h"

/* A fallback prints through libtraceevent where it can, unless that would
 * print an address that is to be hashed; else as field=value pairs. */
static bool use_tep(const struct rprog *p, bool raw)
{
	return p->mode == RM_FALLBACK && p->tep_ok && (raw || !p->tep_leaks);
}

static const char *mode_name(const struct rprog *p)
{
	return p->mode == RM_COMPILED ? "compiled" : p->mode == RM_SYSCALL ?
	       "the kernel's syscall output" : p->tep_ok && !p->tep_leaks ? "libtraceevent" :
	       p->tep_ok ? "libtraceevent (field=value while pointers are hashed)" : "field=value";
}

/* Whether libtraceevent would print an address: it hashes nothing, and
 * prints a %pS it cannot symbolize (it has no kallsyms) as the address. */
static bool tep_leaks(const struct tp_event *e)
{
	for (size_t i = 0; i < e->n_fields; i++)
		if (!e->fields[i].is_common && e->fields[i].is_pointer)
			return true;
	for (const char *p = strstr(e->print_fmt, "%p"); p; p = strstr(p + 2, "%p")) {
		char ext[8] = "";

		for (size_t k = 0; k < sizeof(ext) - 1 && isalnum((unsigned char)p[2 + k]); k++)
			ext[k] = p[2 + k];
		if (render_ext_prints_address(ext))
			return true;
	}
	return false;
}

static void choose_fallback(struct tp_event *e, struct rprog *p)
{
	const struct tp_printfmt *pf = e->printfmt;

	render_mark_pointer_fields_text(e);
	p->mode = RM_FALLBACK;
	p->tep_ok = pf && pf->ev && !pf->unresolved;
	p->tep_leaks = tep_leaks(e);
	log_warning("%s:%s: tracerd cannot compile the print fmt (%s); rendering it %s",
		    strna(e->system), e->name, p->why ? p->why : "an unknown construct",
		    !p->tep_ok ? "as field=value pairs" : p->tep_leaks ?
		    "with libtraceevent, as field=value pairs while pointers are hashed" :
		    "with libtraceevent");
}

int render_prepare(struct tp_event *e)
{
	struct rprog *p = e->render;
	int r;

	if (p)	/* idempotent: nothing in it depends on the config */
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = rsys_compile(e, p);
	if (r == 0)
		r = rprog_compile(e, p);
	if (r == -ENOMEM) {
		free(p->why);
		free(p);
		return r;
	}
	if (r < 0)
		choose_fallback(e, p);
	e->render = p;
	return 0;
}

void render_release(struct tp_event *e)
{
	struct rprog *p = e->render;

	if (!p)
		return;
	rprog_free_segs(p);
	rsys_release(p);
	sb_free(&p->scratch);
	free(p->why);
	free(p);
	e->render = NULL;
}

/* NULL options: pointers hashed. */
static bool raw_pointers(const struct render_opts *o)
{
	return o && o->raw_pointers;
}

static void render_plain(const struct tp_event *e, bool raw, const uint8_t *rec, size_t len,
			 struct strbuf *out)
{
	bool first = true;

	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		if (f->is_common)
			continue;
		sb_printf(out, "%s%s=", first ? "" : " ", f->name);
		render_field_plain(f, rec, len, raw, out);
		first = false;
	}
}

static void render_tep(const struct tp_event *e, bool raw, const uint8_t *rec, size_t len,
		       struct strbuf *out)
{
	const struct tp_printfmt *pf = e->printfmt;
	struct tep_record r = { .data = (void *)rec, .size = len, .record_size = len };
	struct trace_seq s;

	/* libtraceevent trusts __data_loc words: check them before it reads. */
	if (tp_record_check(e, rec, len) != TP_REC_OK) {
		render_plain(e, raw, rec, len, out);
		return;
	}
	trace_seq_init(&s);
	tep_print_event(pf->tep, &s, &r, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	sb_put(out, s.buffer, s.len);
	trace_seq_destroy(&s);
}

void render_event(const struct tp_event *e, const struct render_opts *o, const uint8_t *rec,
		  size_t len, struct strbuf *out)
{
	const struct rprog *p = e->render;
	bool raw = raw_pointers(o), tep = p && use_tep(p, raw);
	size_t start = out->len;

	if (!p || (p->mode == RM_FALLBACK && !tep)) {
		render_plain(e, raw, rec, len, out);
		return;
	}
	if (p->mode == RM_SYSCALL) {
		rsys_render(p, raw, rec, len, out);
		return;
	}
	if (tep)
		render_tep(e, raw, rec, len, out);
	else
		rprog_render(p, raw, rec, len, out);
	/* The text ends at a NUL that a %c of 0 printed, as sinks that took it
	 * as a C string always printed it; then out->len is its length. */
	if ((tep || p->has_char) && out->buf) {
		out->len = start + strnlen(out->buf + start, out->len - start);
		out->buf[out->len] = 0;
	}
}

void render_user_strings(const struct tp_event *e, const uint8_t *rec, size_t len,
			 render_ustr_cb cb, void *ctx)
{
	const struct rprog *p = e->render;

	if (p && p->mode == RM_SYSCALL)
		rsys_user_strings(p, rec, len, cb, ctx);
}

bool render_names_itself(const struct tp_event *e)
{
	const struct rprog *p = e->render;

	return p && p->mode == RM_SYSCALL;
}

/* What the line shows for f (its span's text, padding trimmed), or without
 * a compiled span, f's table applied to the field alone. */
static void symbolized(const struct tp_event *e, bool raw, const struct tp_field *f,
		       const struct tp_symtab *t, const uint8_t *rec, size_t len,
		       struct strbuf *scratch, struct strbuf *val)
{
	const struct rspan *s = e->render ? rprog_span(e->render, f) : NULL;
	uint64_t v = 0;

	if (s) {
		size_t a = 0, b;

		rprog_render_span(e->render, raw, s, rec, len, scratch, val);
		for (b = val->len; b > 0 && val->buf[b - 1] == ' ';)
			b--;
		while (a < b && val->buf[a] == ' ')
			a++;
		if (val->buf) {
			memmove(val->buf, val->buf + a, b - a);
			val->buf[b - a] = 0;
			val->len = b - a;
		}
		return;
	}
	if (f->kind == TP_FIELD_SCALAR && f->offset + f->size <= len && f->size <= 8) {
		/* Sign-extended, as the kernel's unsigned long. */
		v = tracerd_load(rec + f->offset, f->size, f->is_signed);
		render_symbols(t, v, f->is_pointer && !raw, val);
		return;
	}
	render_field_plain(f, rec, len, raw, val);
}

void render_fields(const struct tp_event *e, const struct render_opts *o, const uint8_t *rec,
		   size_t len, render_field_cb cb, void *ctx)
{
	struct strbuf val = { 0 }, raw = { 0 }, scratch = { 0 };
	bool raw_ptrs = raw_pointers(o);

	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];
		const struct tp_symtab *t = f->is_common ? NULL : tp_event_symtab(e, f->name);

		if (f->is_common)
			continue;
		sb_reset(&val);
		sb_reset(&raw);
		render_field_plain(f, rec, len, raw_ptrs, t ? &raw : &val);
		if (t)
			symbolized(e, raw_ptrs, f, t, rec, len, &scratch, &val);
		cb(ctx, f, sb_str(&val), t ? sb_str(&raw) : NULL);
	}
	sb_free(&val);
	sb_free(&raw);
	sb_free(&scratch);
}

void render_field_shown(const struct tp_event *e, const struct render_opts *o,
			const struct tp_field *f, uint64_t v, struct strbuf *out)
{
	const struct tp_symtab *t = tp_event_symtab(e, f->name);
	struct strbuf scratch = { 0 };
	uint8_t *rec;

	if (!t || f->kind != TP_FIELD_SCALAR || f->size > 8 || f->offset + f->size > e->fixed_size ||
	    !(rec = calloc(1, e->fixed_size))) {
		sb_put_u64(out, v);
		return;
	}
	memcpy(rec + f->offset, &v, f->size);	/* little-endian: the low bytes */
	symbolized(e, raw_pointers(o), f, t, rec, e->fixed_size, &scratch, out);
	sb_free(&scratch);
	free(rec);
}

static void describe_table(const struct tp_symtab *t, FILE *out)
{
	fprintf(out, "  %s: %s", t->field ? t->field : "(expression)",
		t->kind == TP_SYM_FLAGS ? "__print_flags" : "__print_symbolic");
	if (t->kind == TP_SYM_FLAGS)
		fprintf(out, ", delimiter \"%s\"", t->delim);
	fprintf(out, "\n");
	for (size_t i = 0; i < t->n; i++)
		fprintf(out, "    0x%-18llx %s\n", (unsigned long long)t->syms[i].value, t->syms[i].name);
}

void render_describe(const struct tp_event *e, FILE *out)
{
	const struct rprog *p = e->render;

	if (tp_event_load_symbols((struct tp_event *)e) < 0) {
		fprintf(out, "symbol tables: cannot parse the print fmt\n");
		return;
	}
	if (p)
		fprintf(out, "rendering: %s%s%s\n", mode_name(p),
			p->why ? ", because tracerd cannot compile the print fmt: " : "", p->why ? p->why : "");
	fprintf(out, "symbol tables:%s\n", e->n_symtabs ? "" : " none");
	for (size_t i = 0; i < e->n_symtabs; i++)
		describe_table(&e->symtabs[i], out);
}
