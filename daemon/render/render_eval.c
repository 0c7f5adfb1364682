// SPDX-License-Identifier: GPL-2.0
/* Rendering a record through a compiled print fmt. Every read of the record
 * is bounds-checked: a bad record prints a marker, never memory past it. */
#include "render_priv.h"
#include "util.h"

static struct rval bad(const char *why)
{
	return (struct rval){ .kind = RV_BAD, .why = why };
}

static struct rval num(uint64_t n, bool is_signed)
{
	return (struct rval){ .kind = RV_NUM, .n = n, .is_signed = is_signed };
}

static struct rval eval_field(const struct rnode *n, const struct rctx *c)
{
	uint32_t loc, off, len;

	if (n->off + n->size > c->len)
		return bad("[field past the record]");
	switch (n->kind) {
	case RN_FIELD:
		return num(tracerd_load(c->rec + n->off, n->size, n->is_signed), n->is_signed);
	case RN_ARRAY:
		return (struct rval){ .kind = RV_BUF, .p = c->rec + n->off, .is_string = n->is_string,
				      .len = n->size ? n->size : c->len - n->off };
	default:
		break;
	}
	memcpy(&loc, c->rec + n->off, 4);
	off = tracerd_loc_off(loc, n->off, n->is_rel);
	len = tracerd_loc_len(loc);
	if (!tracerd_span_fits(off, len, c->len))
		return bad("[bad __data_loc]");
	if (n->kind == RN_DYN_LEN)
		return num(len, true);
	return (struct rval){ .kind = RV_BUF, .p = c->rec + off, .len = len, .is_string = n->is_string };
}

static struct rval eval_binary(const char *op, struct rval a, struct rval b)
{
	bool s = a.is_signed && b.is_signed;
	int64_t x = a.n, y = b.n;

#define CMP(o) num(s ? x o y : a.n o b.n, true)
	switch (op[0] | op[1] << 8) {
	case '+': return num(a.n + b.n, s);
	case '-': return num(a.n - b.n, s);
	case '*': return num(a.n * b.n, s);
	case '/': case '%':
		if (!b.n || (s && y == -1))
			return bad("[division by zero]");
		if (op[0] == '/')
			return num(s ? (uint64_t)(x / y) : a.n / b.n, s);
		return num(s ? (uint64_t)(x % y) : a.n % b.n, s);
	case '<' | '<' << 8: return num(b.n < 64 ? a.n << b.n : 0, a.is_signed);
	case '>' | '>' << 8: return num(b.n >= 64 ? 0 : a.is_signed ? (uint64_t)(x >> b.n) : a.n >> b.n, a.is_signed);
	case '&': return num(a.n & b.n, s);
	case '|': return num(a.n | b.n, s);
	case '^': return num(a.n ^ b.n, s);
	case '&' | '&' << 8: return num(a.n && b.n, true);
	case '|' | '|' << 8: return num(a.n || b.n, true);
	case '=' | '=' << 8: return num(a.n == b.n, true);
	case '!' | '=' << 8: return num(a.n != b.n, true);
	case '<': return CMP(<);
	case '>': return CMP(>);
	case '<' | '=' << 8: return CMP(<=);
	case '>' | '=' << 8: return CMP(>=);
	default: return bad("[operator]");
	}
#undef CMP
}

static struct rval eval_unary(const char *op, struct rval a)
{
	switch (op[0]) {
	case '!': return num(!a.n, true);
	case '~': return num(~a.n, a.is_signed);
	case '-': return num(-a.n, a.is_signed);
	case '+': return a;
	default: return bad("[operator]");
	}
}

static struct rval eval_index(const struct rnode *n, const struct rctx *c)
{
	struct rval a = rn_eval(n->a, c), i = rn_eval(n->b, c);
	unsigned es = n->a->elem_size ? n->a->elem_size : 1;

	if (a.kind == RV_BAD || i.kind == RV_BAD)
		return a.kind == RV_BAD ? a : i;
	if (a.kind != RV_BUF || i.kind != RV_NUM)
		return bad("[bad index]");
	if (i.n >= a.len / es)
		return es == 1 && i.n == a.len ? num(0, true) : bad("[index past the array]");
	return num(tracerd_load(a.p + i.n * es, es, n->a->is_signed), n->a->is_signed);
}

/* A value and its signedness: small enough to come back in registers. */
struct nval {
	uint64_t n;
	bool is_signed;
};

/* A numeric subtree (rnode.numeric) without a struct rval at every level.
 * Sets *bad where rn_eval() would print a marker; the caller then asks
 * rn_eval() for it. */
static struct nval eval_num(const struct rnode *n, const struct rctx *c, bool *bad)
{
	struct nval a, b;
	struct rval r;

	switch (n->kind) {
	case RN_CONST:
		return (struct nval){ n->num, n->is_signed };
	case RN_FIELD:
		if (n->off + n->size > c->len) {
			*bad = true;
			return (struct nval){ 0, false };
		}
		return (struct nval){ tracerd_load(c->rec + n->off, n->size, n->is_signed), n->is_signed };
	case RN_CAST:
		a = eval_num(n->a, c, bad);
		return (struct nval){ tracerd_widen(a.n, n->size, n->is_signed), n->is_signed };
	case RN_COND:
		a = eval_num(n->a, c, bad);
		return eval_num(a.n ? n->b : n->c, c, bad);
	case RN_UNARY:
		a = eval_num(n->a, c, bad);
		r = eval_unary(n->op, num(a.n, a.is_signed));
		break;
	default:	/* RN_BINARY */
		a = eval_num(n->a, c, bad);
		b = eval_num(n->b, c, bad);
		r = eval_binary(n->op, num(a.n, a.is_signed), num(b.n, b.is_signed));
		break;
	}
	if (r.kind != RV_NUM)
		*bad = true;
	return (struct nval){ r.n, r.is_signed };
}

/* Helpers that print into the scratch buffer: their value is that text. */
static struct rval eval_text(const struct rnode *n, const struct rctx *c)
{
	struct strbuf *sb = c->scratch;
	struct rval a = rn_eval(n->a, c), b = n->b ? rn_eval(n->b, c) : num(0, false);
	size_t start = sb->len;

	if (a.kind == RV_BAD || b.kind == RV_BAD)
		return a.kind == RV_BAD ? a : b;
	if (n->kind == RN_SYMTAB) {
		if (a.kind != RV_NUM)
			return bad("[not a number]");
		render_symbols(n->tab, a.n, n->addr && !c->raw, sb);
	} else if (a.kind != RV_BUF) {
		return bad("[not an array]");
	} else if (n->kind == RN_BITMASK) {
		render_bitmap(a.p, a.len, a.len * 8, false, sb);
	} else if (n->kind == RN_INT_ARRAY) {
		struct rval es = rn_eval(n->c, c);

		if (es.kind != RV_NUM || !es.n || b.n > a.len / es.n)
			return bad("[array past the record]");
		render_int_array(a.p, b.n, es.n, sb);
	} else {
		if (b.kind != RV_NUM || b.n > a.len)
			return bad("[array past the record]");
		render_hex(a.p, b.n, n->kind == RN_HEX_STR, sb);
	}
	if (sb->oom)
		return bad("[out of memory]");
	return (struct rval){ .kind = RV_BUF, .len = sb->len - start, .is_string = true,
			      .p = sb->len > start ? (const uint8_t *)sb->buf + start : (const uint8_t *)"" };
}

struct rval rn_eval(const struct rnode *n, const struct rctx *c)
{
	struct rval a, b;

	switch (n->kind) {
	case RN_CONST:
		a = num(n->num, n->is_signed);
		a.p = (const uint8_t *)n->text;
		a.len = n->text_len;
		return a;
	case RN_FIELD: case RN_ARRAY: case RN_DYN: case RN_DYN_LEN:
		return eval_field(n, c);
	case RN_CAST:
		a = rn_eval(n->a, c);
		return a.kind == RV_NUM ? num(tracerd_widen(a.n, n->size, n->is_signed), n->is_signed) : a;
	case RN_COND:
		a = rn_eval(n->a, c);
		return a.kind == RV_BAD ? a : rn_eval(a.n ? n->b : n->c, c);
	case RN_INDEX:
		return eval_index(n, c);
	case RN_UNARY:
		a = rn_eval(n->a, c);
		return a.kind == RV_NUM ? eval_unary(n->op, a) : a.kind == RV_BAD ? a : bad("[not a number]");
	case RN_BINARY:
		a = rn_eval(n->a, c);
		b = rn_eval(n->b, c);
		if (a.kind != RV_NUM || b.kind != RV_NUM)
			return a.kind == RV_BAD ? a : b.kind == RV_BAD ? b : bad("[not a number]");
		return eval_binary(n->op, a, b);
	default:
		return eval_text(n, c);
	}
}

/* The segment with its width and precision taken from the record. */
static const struct rseg *dynamic_spec(const struct rseg *seg, const struct rctx *c,
				       struct rseg *s)
{
	struct rval v;

	*s = *seg;
	if (s->width_arg) {
		v = rn_eval(s->width_arg, c);
		s->width = v.kind == RV_NUM ? (int)v.n : -1;
		if (s->width < -1) {
			s->flags |= RF_MINUS;
			s->width = -s->width;
		}
	}
	if (s->prec_arg) {
		v = rn_eval(s->prec_arg, c);
		s->prec = v.kind == RV_NUM && (int)v.n >= 0 ? (int)v.n : -1;
	}
	return s;
}

/* A number; an address printed as one ("%lx" of a pointer) is hashed too. */
static void number(const struct rseg *s, uint64_t v, bool raw, struct strbuf *out)
{
	render_number(s, s->addr && !raw ? render_hash_pointer(v) : v, out);
}

static void print_value(const struct rseg *s, const struct rval *v, const struct rctx *c,
			struct strbuf *out)
{
	if (v->kind == RV_BAD)
		sb_puts(out, v->why);
	else if (s->conv == 'p')
		render_pointer(s, v, c->raw, out);
	else if (s->conv == 's' && v->p)
		render_str(s, (const char *)v->p, v->len, out);
	else if (s->conv == 's')
		sb_puts(out, "[string pointer]");
	else if (v->kind != RV_NUM)
		sb_puts(out, "[not a number]");
	else if (s->conv == 'c')
		sb_putc(out, (char)v->n);
	else
		number(s, v->n, c->raw, out);
}

/* Most arguments are numbers, fields or a few operators over them: their
 * value comes back in registers, and no struct rval is passed around
 * (reading one back just after the callee stored it was a stall per
 * conversion). False if the argument prints a marker instead. */
static bool print_number(const struct rseg *s, const struct rnode *arg, const struct rctx *c,
			 struct strbuf *out)
{
	bool bad = false;
	struct nval x = eval_num(arg, c, &bad);
	struct rval v;

	if (bad)
		return false;
	if (s->conv == 'p') {
		v = num(x.n, x.is_signed);
		render_pointer(s, &v, c->raw, out);
	} else if (s->conv == 'c') {
		sb_putc(out, (char)x.n);
	} else {
		number(s, x.n, c->raw, out);
	}
	return true;
}

/* A plain %s of a flag or symbol table, printed straight into out. */
static bool print_symbols(const struct rseg *s, const struct rctx *c, struct strbuf *out)
{
	const struct rnode *a = s->arg->a;
	bool bad = false;
	struct nval x;

	if (!a->numeric)
		return false;
	x = eval_num(a, c, &bad);
	if (bad)
		return false;
	render_symbols(s->arg->tab, x.n, s->arg->addr && !c->raw, out);
	return true;
}

static void render_seg(const struct rseg *s, const struct rctx *c, struct strbuf *out)
{
	struct rseg dyn;
	struct rval v;

	if (s->width_arg || s->prec_arg)
		s = dynamic_spec(s, c, &dyn);
	if (c->scratch->len)
		sb_reset(c->scratch);
	if (s->arg->numeric && s->conv != 's' && print_number(s, s->arg, c, out))
		return;
	if (s->arg->kind == RN_SYMTAB && s->conv == 's' && s->width < 0 && s->prec < 0 &&
	    print_symbols(s, c, out))
		return;
	v = rn_eval(s->arg, c);
	print_value(s, &v, c, out);
}

void rprog_render(const struct rprog *p, bool raw, const uint8_t *rec, size_t len,
		  struct strbuf *out)
{
	struct rctx c = { .rec = rec, .len = len, .prog = p, .raw = raw,
			  .scratch = &((struct rprog *)p)->scratch };

	for (size_t i = 0; i < p->n_segs; i++) {
		const struct rseg *s = &p->segs[i];

		if (s->lit_len)
			sb_put(out, s->lit, s->lit_len);
		if (s->fast && s->arg->off + s->arg->size <= len) {
			uint64_t v = tracerd_load(rec + s->arg->off, s->arg->size, s->arg->is_signed);

			if (s->fast == RS_FIELD_POINTER)
				render_plain_pointer(v, raw, out);
			else
				number(s, v, raw, out);
		} else if (s->conv) {
			render_seg(s, &c, out);
		}
	}
}

void rprog_render_span(const struct rprog *p, bool raw, const struct rspan *s, const uint8_t *rec,
		       size_t len, struct strbuf *scratch, struct strbuf *out)
{
	struct rctx c = { .rec = rec, .len = len, .prog = p, .raw = raw, .scratch = scratch };

	for (size_t i = s->first; i <= s->last && i < p->n_segs; i++)
		if (p->segs[i].conv)
			render_seg(&p->segs[i], &c, out);
}

const struct rspan *rprog_span(const struct rprog *p, const struct tp_field *f)
{
	if (p->mode != RM_COMPILED)
		return NULL;
	for (size_t i = 0; i < p->n_spans; i++)
		if (p->spans[i].field == f)
			return &p->spans[i];
	return NULL;
}
