// SPDX-License-Identifier: GPL-2.0
/* The value types of config keys (struct config_type): each reads a value
 * into its field and says what a value must look like. The table
 * (config_table.c) gives each key one, with its limits. */
#include <ctype.h>
#include <strings.h>
#include "config_parser.h"
#include "kernel-events/events.h"
#include "kernel-events/unit_path.h"
#include "sockaddr_spec.h"

typedef unsigned long long ull;

int parse_size(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')	/* tolerate KiB, MB */
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (*end)
		return -EINVAL;
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = v << shift;
	return 0;
}

/* Most parse errors: "expected WHAT, got 'V'", WHAT from the type. */
static int bad_value(struct config_parser *p, const struct config_item *it, const char *v, int col)
{
	char what[256];

	it->type->expects(it, what, sizeof(what));
	return config_error(p, col, "expected %s, got '%s'", what, v);
}

static int parse_uint(struct config_parser *p, const struct config_item *it, const char *v, int col,
		      void *field, _unused_ void *section)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end || errno || x < it->min || x > it->max)
		return bad_value(p, it, v, col);
	*(unsigned *)field = x;
	return 0;
}

static void expects_uint(const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a whole number from %llu to %llu", (ull)it->min, (ull)it->max);
}

const struct config_type config_type_uint = { "unsigned", parse_uint, expects_uint };

static int parse_size_value(struct config_parser *p, const struct config_item *it, const char *v,
			    int col, void *field, _unused_ void *section)
{
	uint64_t sz;

	if (parse_size(v, &sz) < 0 || sz < it->min || sz > it->max)
		return bad_value(p, it, v, col);
	*(uint64_t *)field = sz;
	return 0;
}

static void expects_size(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a size such as 256K");
}

const struct config_type config_type_size = { "size", parse_size_value, expects_size };

static int parse_pow2(struct config_parser *p, const struct config_item *it, const char *v, int col,
		      void *field, void *section)
{
	uint64_t sz;

	/* Checked first, so that a bad value gets this type's message. */
	if (parse_size(v, &sz) < 0 || (sz & (sz - 1)))
		return bad_value(p, it, v, col);
	return parse_size_value(p, it, v, col, field, section);
}

/* 4096 as "4K": the largest suffix that divides it. */
static void format_size(uint64_t v, char *buf, size_t size)
{
	static const char suffix[] = "GMK";

	for (int i = 0; i < 3; i++) {
		unsigned shift = 30 - 10 * i;

		if (v && !(v & ((1ULL << shift) - 1))) {
			snprintf(buf, size, "%llu%c", (ull)(v >> shift), suffix[i]);
			return;
		}
	}
	snprintf(buf, size, "%llu", (ull)v);
}

static void expects_pow2(const struct config_item *it, char *buf, size_t size)
{
	char lo[32], hi[32];

	format_size(it->min, lo, sizeof(lo));
	format_size(it->max, hi, sizeof(hi));
	snprintf(buf, size, "a power of two from %s to %s", lo, hi);
}

const struct config_type config_type_pow2 = { "size, a power of two", parse_pow2, expects_pow2 };

static int parse_bool(struct config_parser *p, const struct config_item *it, const char *v, int col,
		      void *field, _unused_ void *section)
{
	static const char *const yes[] = { "1", "yes", "true", "on" }, *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(v, yes[i]))
			return *(bool *)field = true, 0;
		if (!strcasecmp(v, no[i]))
			return *(bool *)field = false, 0;
	}
	return bad_value(p, it, v, col);
}

static void expects_bool(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a boolean (yes or no)");
}

const struct config_type config_type_bool = { "boolean", parse_bool, expects_bool };

static size_t n_names(const struct config_item *it)
{
	size_t n = 0;

	while (it->names[n])
		n++;
	return n;
}

/* One of the names, exactly as written; the field (an int or an enum) gets
 * its index. */
static int parse_enum(struct config_parser *p, const struct config_item *it, const char *v, int col,
		      void *field, _unused_ void *section)
{
	for (int i = 0; it->names[i]; i++)
		if (!strcmp(v, it->names[i]))
			return *(int *)field = i, 0;
	return bad_value(p, it, v, col);
}

static void expects_enum(const struct config_item *it, char *buf, size_t size)
{
	size_t n = n_names(it);

	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		char q[64];

		snprintf(q, sizeof(q), "'%s'", it->names[i]);
		config_list_append(buf, size, i, n, q);
	}
}

const struct config_type config_type_enum = { "enum", parse_enum, expects_enum };

/* A syslog level: a name in any case, or its number (names[] has at most 10). */
static int parse_priority(struct config_parser *p, const struct config_item *it, const char *v,
			  int col, void *field, _unused_ void *section)
{
	for (int i = 0; it->names[i]; i++)
		if (!strcasecmp(v, it->names[i]) || (v[0] == '0' + i && !v[1]))
			return *(int *)field = i, 0;
	return bad_value(p, it, v, col);
}

static void expects_priority(const struct config_item *it, char *buf, size_t size)
{
	size_t n = n_names(it);

	snprintf(buf, size, "a syslog priority (%s..%s or 0..%zu)", it->names[0], it->names[n - 1], n - 1);
}

const struct config_type config_type_priority = { "syslog priority", parse_priority, expects_priority };

static int parse_name(struct config_parser *p, const struct config_item *it, const char *v, int col,
		      void *field, _unused_ void *section)
{
	char **s = field, what[256];

	it->type->expects(it, what, sizeof(what));
	for (const char *q = v; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr("-_.", *q))
			return config_error(p, col + (int)(q - v), "expected %s", what);
	if (!*v)
		return config_error(p, col, "expected a name");
	free(*s);
	*s = strdup(v);
	return *s ? 0 : -ENOMEM;
}

static void expects_name(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a name of letters, digits, '-', '_' and '.'");
}

const struct config_type config_type_name = { "name", parse_name, expects_name };

static int parse_path(struct config_parser *p, const struct config_item *it, const char *v, int col,
		      void *field, _unused_ void *section)
{
	char **s = field, what[64];

	if (v[0] != '/') {
		it->type->expects(it, what, sizeof(what));
		return config_error(p, col, "expected %s, got '%s'", what, v);
	}
	free(*s);
	*s = strdup(v);
	return *s ? 0 : -ENOMEM;
}

static void expects_path(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "an absolute path");
}

const struct config_type config_type_path = { "path", parse_path, expects_path };

static void events_reset(struct selection *s)
{
	strv_free(s->events, s->n_events);
	free(s->event_lines);
	free(s->event_cols);
	s->events = NULL;
	s->event_lines = s->event_cols = NULL;
	s->n_events = s->cap_events = 0;
}

/* Room for one more glob in the three parallel arrays. */
static int events_grow(struct selection *s)
{
	size_t cap = s->cap_events;

	if (s->n_events < s->cap_events)
		return 0;
	if (GROW(s->event_lines, cap, s->n_events) < 0)
		return -ENOMEM;
	cap = s->cap_events;
	if (GROW(s->event_cols, cap, s->n_events) < 0)
		return -ENOMEM;
	return GROW(s->events, s->cap_events, s->n_events);
}

/* Adds the globs of one line to the selection's list (its events, where
 * each was written, and the file); an empty value resets the list, as in
 * systemd. */
static int parse_events(struct config_parser *p, const struct config_item *it, const char *v,
			int vcol, _unused_ void *field, void *section)
{
	struct selection *s = section;
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;

	if (!*v)
		return events_reset(s), 0;
	free(s->events_file);
	if (!(s->events_file = strdup(p->file)) || !(copy = strdup(v)))
		return -ENOMEM;
	for (char *g = strtok_r(copy, " \t", &save); g; g = strtok_r(NULL, " \t", &save)) {
		const char *colon = strchr(g, ':');
		int col = vcol + (int)(g - copy);

		if (!colon || colon == g || !colon[1] || strchr(colon + 1, ':'))
			return bad_value(p, it, g, col);
		if (events_grow(s) < 0 || !(s->events[s->n_events] = strdup(g)))
			return -ENOMEM;
		config_locate(p, col, &s->event_lines[s->n_events], &s->event_cols[s->n_events], NULL, 0);
		s->n_events++;
	}
	return 0;
}

static void expects_events(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "subsystem:event (globs allowed)");
}

const struct config_type config_type_events = { "event globs", parse_events, expects_events };

/* Unit=: each word checked and kept as systemctl would take it. */
static int parse_units(struct config_parser *p, const struct config_item *it, const char *v,
		       int vcol, _unused_ void *field, void *section)
{
	struct selection *s = section;
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;

	if (!*v) {
		strv_free(s->units, s->n_units);
		s->units = NULL;
		s->n_units = s->cap_units = 0;
		return 0;
	}
	if (!(copy = strdup(v)))
		return -ENOMEM;
	for (char *g = strtok_r(copy, " \t", &save); g; g = strtok_r(NULL, " \t", &save)) {
		char name[UNIT_NAME_MAX + 16];
		size_t bad = 0;

		if (unit_glob_normalize(g, name, sizeof(name), &bad) < 0)
			return bad_value(p, it, g, vcol + (int)(g - copy + bad));
		if (GROW(s->units, s->cap_units, s->n_units) < 0 ||
		    !(s->units[s->n_units] = strdup(name)))
			return -ENOMEM;
		s->n_units++;
	}
	return 0;
}

static void expects_units(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "unit names or globs (nginx.service, php-fpm*.service, "
		 "user@1000.service)");
}

const struct config_type config_type_units = { "unit globs", parse_units, expects_units };

/* Kept as written: the filter is compiled against each event's fields
 * later (filter/), where its position (the item's pos_offset) is used. */
static int parse_filter(_unused_ struct config_parser *p, _unused_ const struct config_item *it,
			const char *v, _unused_ int col, void *field, _unused_ void *section)
{
	char **f = field;

	free(*f);
	*f = NULL;
	if (!*v)	/* empty: every event, as NULL is */
		return 0;
	*f = strdup(v);
	return *f ? 0 : -ENOMEM;
}

static void expects_filter(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a kernel event filter, or nothing for every event");
}

const struct config_type config_type_filter = { "filter", parse_filter, expects_filter };

static void expects_hist(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a hist trigger (hist:keys=...), or nothing for no aggregation");
}

/* Kept as written too: compiled per event (aggregate/), at its position. */
const struct config_type config_type_hist = { "hist trigger", parse_filter, expects_hist };

void config_synth_reset(struct config *c)
{
	for (size_t i = 0; i < c->n_synth; i++) {
		free(c->synth[i].def);
		config_pos_free(&c->synth[i].pos);
	}
	free(c->synth);
	c->synth = NULL;
	c->n_synth = c->cap_synth = 0;
}

/* [Synthetic] Event=: checked here as kernel-events/synthetic.c builds the
 * event, so that a bad definition is a config error at its byte; kept with
 * where it was written, for later errors about it. An empty value resets
 * the list, as in systemd. */
static int parse_synthetic(struct config_parser *p, _unused_ const struct config_item *it,
			   const char *v, int vcol, _unused_ void *field, void *section)
{
	struct config *c = section;
	_cleanup_free_ char *text = NULL;
	struct tp_synth_error err;
	size_t at = strspn(v, " \t"), len = strcspn(v + at, " \t");
	struct synth_def *def;
	int r;

	if (!*v)
		return config_synth_reset(c), 0;
	r = tp_synthetic_format(v, 0, &text, &err);
	if (r == -EINVAL)
		return config_error(p, vcol + err.off, "expected %s", err.expected);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_synth; i++) {
		const struct synth_def *o = &c->synth[i];
		const char *name = o->def + strspn(o->def, " \t");

		if (strcspn(name, " \t") == len && !strncmp(name, v + at, len))
			return config_error(p, vcol + (int)at, "synthetic event '%.*s' is already defined "
					    "at %s:%d; names must be unique", (int)len, v + at,
					    o->pos.file, o->pos.line);
	}
	if (c->n_synth == TP_SYNTH_MAX)
		return config_error(p, vcol, "more than %d synthetic events (their ids are the "
				    "top %d of the kernel's 16-bit event ids)", TP_SYNTH_MAX, TP_SYNTH_MAX);
	if (GROW(c->synth, c->cap_synth, c->n_synth) < 0)
		return -ENOMEM;
	def = &c->synth[c->n_synth];
	*def = (struct synth_def){ .def = strdup(v) };
	if (!def->def)
		return -ENOMEM;
	c->n_synth++;
	return config_pos_set(p, &def->pos, vcol);
}

static void expects_synthetic(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "a synthetic event: NAME TYPE FIELD; ... (wakeup_latency u64 lat; pid_t pid)");
}

const struct config_type config_type_synthetic = { "synthetic event", parse_synthetic,
						   expects_synthetic };

/* [Metrics] Listen=: checked as read (the socket is the daemon's, at start). */
static int parse_listen(struct config_parser *p, const struct config_item *it, const char *v,
			int col, void *field, _unused_ void *section)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char **s = field, what[96];
	int bad;

	free(*s);
	*s = NULL;
	if (!*v)
		return 0;
	if (sockaddr_spec_parse(v, &sa, &len, &bad) < 0) {
		it->type->expects(it, what, sizeof(what));
		return config_error(p, col + bad, "expected %s, got '%s'", what, v);
	}
	*s = strdup(v);
	return *s ? 0 : -ENOMEM;
}

static void expects_listen(_unused_ const struct config_item *it, char *buf, size_t size)
{
	snprintf(buf, size, "%s", SOCKADDR_SPEC_EXPECTED);
}

const struct config_type config_type_listen = { "address", parse_listen, expects_listen };
