// SPDX-License-Identifier: GPL-2.0
/* Aggregate= to a hist_spec: the kernel's hist trigger grammar
 * (Documentation/trace/histogram.rst), the parts that make sense for a
 * service that writes histograms out:
 *
 *   hist:keys=FIELD[.MOD][,...][:vals=hitcount|FIELD[.hex][,...]]
 *        [:sort=NAME[.descending|.ascending][,NAME...]][:size=N]
 *        [:VAR=EXPR[,...]][:onmatch(SYS.EVENT).ACTION] [if FILTER]
 *
 * keys=/key=, vals=/val=/values= as the kernel takes them; variables and
 * onmatch() in hist_vars.c. The trailing "if FILTER" is the selection's
 * Filter= (tracer_apply.c takes it); name=, clock=, pause, cont, clear
 * have no meaning here and are refused. */
#include "hist_priv.h"
#include "util.h"

static const char *const mod_names[] = {
	[HM_NONE] = "", [HM_HEX] = "hex", [HM_SYM] = "sym", [HM_SYM_OFFSET] = "sym-offset",
	[HM_EXECNAME] = "execname", [HM_SYSCALL] = "syscall", [HM_LOG2] = "log2",
	[HM_BUCKETS] = "buckets", [HM_USECS] = "usecs",
};

const char *hist_mod_name(enum hist_mod m)
{
	return mod_names[m];
}

void hist_spec_done(struct hist_spec *spec)
{
	hist_vars_done(spec);
	for (size_t i = 0; i < spec->n_keys; i++)
		free(spec->keys[i].name);
	for (size_t i = 0; i < spec->n_vals; i++)
		free(spec->vals[i].name);
	for (size_t i = 0; i < spec->n_sort; i++)
		free(spec->sort[i].name);
	*spec = (struct hist_spec){ 0 };
}

static int parse_buckets(struct hparser *p, struct hist_fref *f)
{
	char *end;
	unsigned long long n;
	int start = p->i;

	if (p->s[p->i] != '=')
		return filter_error(p->src, p->i, "expected '=N' after .buckets: the bucket size");
	start = ++p->i;
	errno = 0;
	n = strtoull(p->s + start, &end, 0);
	if (end == p->s + start || errno || !n || p->s[start] == '-')
		return filter_error(p->src, start, "expected a bucket size above 0 after .buckets=");
	p->i = end - p->s;
	f->buckets = n;
	return 0;
}

/* .MOD after a key or value name. */
static int parse_modifier(struct hparser *p, struct hist_fref *f)
{
	int start;
	size_t n;

	if (p->s[p->i] != '.')
		return 0;
	start = ++p->i;
	while (hist_is_word(p->s[p->i]) || p->s[p->i] == '-')
		p->i++;
	n = p->i - start;
	f->mod_off = start;
	for (size_t m = HM_HEX; m < ARRAY_SIZE(mod_names); m++)
		if (strlen(mod_names[m]) == n && !strncmp(p->s + start, mod_names[m], n)) {
			f->mod = m;
			return m == HM_BUCKETS ? parse_buckets(p, f) : 0;
		}
	return filter_error(p->src, start, "unknown modifier '.%.*s': expected .hex, .sym, "
			    ".sym-offset, .execname, .syscall, .log2, .buckets=N or .usecs", (int)n,
			    p->s + start);
}

static int parse_frefs(struct hparser *p, struct hist_fref *v, size_t max, size_t *n,
		       bool vals)
{
	do {
		struct hist_fref f = { 0 };
		int r;

		if (vals && !strncmp(p->s + p->i, "hitcount", 8) && !hist_is_word(p->s[p->i + 8]) &&
		    p->s[p->i + 8] != '.') {
			p->i += 8;	/* always counted */
			continue;
		}
		if (*n >= max)
			return filter_error(p->src, p->i, "too many %s: at most %zu", vals ?
					    "values besides hitcount" : "keys", max);
		r = hist_parse_name(p, &f.name, &f.off, vals ? "a field to sum, or hitcount" : "a key field");
		if (r < 0)
			return r;
		v[(*n)++] = f;
		r = parse_modifier(p, &v[*n - 1]);
		if (r < 0)
			return r;
	} while (p->s[p->i] == ',' && ++p->i);
	return 0;
}

static int parse_sort(struct hparser *p, struct hist_spec *spec)
{
	do {
		struct hist_sortref *k;
		int r;

		if (spec->n_sort >= HIST_SORT_KEYS)
			return filter_error(p->src, p->i, "too many sort keys: at most %d",
					    HIST_SORT_KEYS);
		k = &spec->sort[spec->n_sort];
		r = hist_parse_name(p, &k->name, &k->off, "a key or value to sort by");
		if (r < 0)
			return r;
		spec->n_sort++;
		if (p->s[p->i] == '.') {
			const char *m = p->s + ++p->i;

			if (!strncmp(m, "descending", 10) && !hist_is_word(m[10]))
				k->descending = true, p->i += 10;
			else if (!strncmp(m, "ascending", 9) && !hist_is_word(m[9]))
				p->i += 9;
			else
				return filter_error(p->src, p->i, "expected .descending or .ascending");
		}
	} while (p->s[p->i] == ',' && ++p->i);
	return 0;
}

/* size=N: the kernel rounds up to a power of two, 2^7 to 2^17. */
static int parse_hist_size(struct hparser *p, struct hist_spec *spec)
{
	int start = p->i;
	unsigned long long n;
	char *end;
	uint32_t r = 1;

	errno = 0;
	n = strtoull(p->s + start, &end, 0);
	if (end == p->s + start || errno || p->s[start] == '-')
		return filter_error(p->src, start, "expected a number of entries after size=");
	p->i = end - p->s;
	while (r < n && r <= (1u << HIST_SIZE_MAX_BITS))
		r <<= 1;
	if (r < (1u << HIST_SIZE_MIN_BITS) || r > (1u << HIST_SIZE_MAX_BITS))
		return filter_error(p->src, start, "size=%llu is out of range: the kernel takes "
				    "%u to %u entries (rounded up to a power of two)", n,
				    (1u << (HIST_SIZE_MIN_BITS - 1)) + 1, 1u << HIST_SIZE_MAX_BITS);
	spec->size = r;
	return 0;
}

/* One NAME=... between colons. */
static int parse_assignment(struct hparser *p, struct hist_spec *spec, bool *have_keys,
			    bool *have_vals)
{
	static const char *const refused[] = { "name", "clock", "pause", "cont", "continue",
					       "clear" };
	int start = p->i, r;
	size_t n;

	while (hist_is_word(p->s[p->i]))
		p->i++;
	n = p->i - start;
#define IS(w) (n == strlen(w) && !strncmp(p->s + start, w, n))
	for (size_t k = 0; k < ARRAY_SIZE(refused); k++)
		if (IS(refused[k]))
			return filter_error(p->src, start, "'%s' is not supported here", refused[k]);
	if (IS("onmatch"))
		return hist_parse_onmatch(p, spec, start);
	if (IS("onmax") || IS("onchange"))
		return hist_parse_ontrack(p, spec, start, IS("onmax") ? TRACK_MAX : TRACK_CHANGE);
	if (p->s[p->i] != '=')
		return filter_error(p->src, p->i, "expected keys=, vals=, sort=, size=, a variable "
				    "(NAME=EXPR) or onmatch()");
	p->i++;
	if (IS("keys") || IS("key")) {
		if (*have_keys)
			return filter_error(p->src, start, "keys= given twice");
		*have_keys = true;
		r = parse_frefs(p, spec->keys, TRACERD_AGG_KEYS, &spec->n_keys, false);
	} else if (IS("vals") || IS("val") || IS("values")) {
		if (*have_vals)
			return filter_error(p->src, start, "vals= given twice");
		*have_vals = true;
		r = parse_frefs(p, spec->vals, TRACERD_AGG_VALS, &spec->n_vals, true);
	} else if (IS("sort")) {
		r = spec->n_sort ? filter_error(p->src, start, "sort= given twice") : parse_sort(p, spec);
	} else if (IS("size")) {
		r = parse_hist_size(p, spec);
	} else {
		char *name = strndup(p->s + start, n);

		r = name ? hist_parse_vars(p, spec, name, start) : -ENOMEM;
	}
#undef IS
	return r;
}

/* " if " outside quotes and parentheses: the kernel's trigger filter. */
size_t hist_split_if(const char *expr, size_t *end)
{
	int depth = 0;
	char quote = 0;

	for (size_t i = 0; expr[i]; i++) {
		char c = expr[i];

		if (quote) {
			if (c == '\\' && expr[i + 1])
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			depth--;
		} else if (!depth && isspace((unsigned char)c) && !strncmp(expr + i + 1, "if", 2) &&
			   expr[i + 3] && isspace((unsigned char)expr[i + 3])) {
			size_t f = i + 3;

			*end = i;
			while (isspace((unsigned char)expr[f]))
				f++;
			return f;
		}
	}
	*end = strlen(expr);
	return 0;
}

int hist_parse(const struct filter_text *src, struct hist_spec *spec)
{
	struct hparser p = { .src = src, .s = src->expr };
	bool have_keys = false, have_vals = false;
	size_t end;
	int r;

	hist_split_if(src->expr, &end);
	p.end = end;

	*spec = (struct hist_spec){ .size = HIST_SIZE_DEFAULT };
	while (isspace((unsigned char)p.s[p.i]))
		p.i++;
	if (strncmp(p.s + p.i, "hist:", 5))
		return filter_error(src, p.i, "expected 'hist:', the kernel's hist trigger command");
	p.i += 5;
	for (;;) {
		r = parse_assignment(&p, spec, &have_keys, &have_vals);
		if (r < 0)
			goto fail;
		while (isspace((unsigned char)p.s[p.i]))
			p.i++;
		if (p.i >= p.end)
			break;
		if (p.s[p.i] != ':') {
			r = filter_error(src, p.i, "expected ':' or ',' or the end");
			goto fail;
		}
		p.i++;
	}
	if (!have_keys) {
		r = filter_error(src, 0, "a histogram needs keys=");
		goto fail;
	}
	return 0;
fail:
	hist_spec_done(spec);
	return r;
}
