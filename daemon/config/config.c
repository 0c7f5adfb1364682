// SPDX-License-Identifier: GPL-2.0
/* Reading the configuration: the main file, then FILE.d/NAME.conf in name
 * order. [Daemon] keys set by a later file override earlier ones; every
 * [Selection] adds a selection, and two selections may not share a Name. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <strings.h>
#include <syslog.h>
#include <sys/stat.h>
#include "config.h"
#include "util.h"

enum section { SEC_NONE, SEC_DAEMON, SEC_SELECTION };

struct parser {
	struct config *c;
	struct diag *d;
	const char *file;
	int line;
	const char *source;	/* the current logical line */
	enum section sec;
	/* A logical line joins physical lines ending in '\\': where each one
	 * starts in it, so that a column maps back to the physical line. */
	size_t seg[64];
	int n_seg;
};

/* Physical line, column and text for a 1-based column of the logical line. */
static void locate(const struct parser *p, int col, int *line, int *pcol, char *src, size_t size)
{
	int k = 0;
	size_t end;

	while (k + 1 < p->n_seg && col > 0 && p->seg[k + 1] <= (size_t)col - 1)
		k++;
	*line = p->line + k;
	*pcol = col > 0 ? col - (int)p->seg[k] : col;
	end = k + 1 < p->n_seg ? p->seg[k + 1] - 1 : strlen(p->source ? p->source : "");
	if (src)
		snprintf(src, size, "%.*s", (int)(end - p->seg[k]),
			 p->source ? p->source + p->seg[k] : "");
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->ring_buffer_size = 8 << 20;
	c->flush_interval_ms = 100;
	c->stats_interval_sec = 60;
	c->output = OUTPUT_JOURNAL;
}

static void pos_free(struct conf_pos *p)
{
	free(p->file);
	free(p->source);
}

static void selection_free(struct selection *s)
{
	free(s->name);
	strv_free(s->events, s->n_events);
	free(s->event_lines);
	free(s->event_cols);
	free(s->events_file);
	free(s->filter);
	pos_free(&s->filter_pos);
	pos_free(&s->pos);
}

void config_free(struct config *c)
{
	for (size_t i = 0; i < c->n_sels; i++)
		selection_free(&c->sels[i]);
	free(c->sels);
	strv_free(c->files, c->n_files);
	pos_free(&c->wakeup_pos);
	memset(c, 0, sizeof(*c));
}

static int perr(struct parser *p, int col, const char *fmt, ...) _printf_(3, 4);
static int perr(struct parser *p, int col, const char *fmt, ...)
{
	va_list ap;

	int line, pcol;

	locate(p, col, &line, &pcol, p->d ? p->d->source : NULL, p->d ? sizeof(p->d->source) : 0);
	diag_set(p->d, p->file, line, pcol, "%s", "");
	va_start(ap, fmt);
	vsnprintf(p->d->msg, sizeof(p->d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

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

static int parse_uint(struct parser *p, const char *v, int col, unsigned lo, unsigned hi,
		      unsigned *ret)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end || errno || x < lo || x > hi)
		return perr(p, col, "expected a whole number from %u to %u, got '%s'", lo, hi, v);
	*ret = x;
	return 0;
}

static int parse_bool(struct parser *p, const char *v, int col, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" }, *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(v, yes[i]))
			return *ret = true, 0;
		if (!strcasecmp(v, no[i]))
			return *ret = false, 0;
	}
	return perr(p, col, "expected a boolean (yes or no), got '%s'", v);
}

static int set_pos(struct parser *p, struct conf_pos *pos, int col)
{
	char src[512];

	pos_free(pos);
	locate(p, col, &pos->line, &pos->col, src, sizeof(src));
	pos->file = strdup(p->file);
	pos->source = strdup(src);
	return pos->file && pos->source ? 0 : -ENOMEM;
}

static int daemon_key(struct parser *p, const char *key, const char *v, int vcol)
{
	struct config *c = p->c;
	uint64_t sz;

	if (!strcmp(key, "RingBufferSize")) {
		if (parse_size(v, &sz) < 0 || sz < 4096 || sz > (1ULL << 30) || (sz & (sz - 1)))
			return perr(p, vcol, "expected a power of two from 4K to 1G, got '%s'", v);
		c->ring_buffer_size = sz;
	} else if (!strcmp(key, "WakeupBytes")) {
		if (parse_size(v, &sz) < 0 || sz > (1ULL << 30))
			return perr(p, vcol, "expected a size such as 256K, got '%s'", v);
		c->wakeup_bytes = sz;
		return set_pos(p, &c->wakeup_pos, vcol);
	} else if (!strcmp(key, "Output")) {
		if (!strcmp(v, "journal"))
			c->output = OUTPUT_JOURNAL;
		else if (!strcmp(v, "stdout"))
			c->output = OUTPUT_STDOUT;
		else
			return perr(p, vcol, "expected 'journal' or 'stdout', got '%s'", v);
	} else if (!strcmp(key, "FlushIntervalMSec")) {
		return parse_uint(p, v, vcol, 1, 10000, &c->flush_interval_ms);
	} else if (!strcmp(key, "StatsIntervalSec")) {
		return parse_uint(p, v, vcol, 0, 86400, &c->stats_interval_sec);
	} else if (!strcmp(key, "RawPointers")) {
		return parse_bool(p, v, vcol, &c->raw_pointers);
	} else {
		return -ENOKEY;
	}
	return 0;
}

static int parse_priority(struct parser *p, const char *v, int col, int *ret)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err",
					     "warning", "notice", "info", "debug" };

	for (int i = 0; i < (int)ARRAY_SIZE(names); i++)
		if (!strcasecmp(v, names[i]) || (v[0] == '0' + i && !v[1]))
			return *ret = i, 0;
	return perr(p, col, "expected a syslog priority (emerg..debug or 0..7), got '%s'", v);
}

static int add_events(struct parser *p, struct selection *s, const char *v, int vcol)
{
	_cleanup_free_ char *copy = strdup(v);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *g = strtok_r(copy, " \t", &save); g; g = strtok_r(NULL, " \t", &save)) {
		const char *colon = strchr(g, ':');

		if (!colon || colon == g || !colon[1] || strchr(colon + 1, ':'))
			return perr(p, vcol + (int)(g - copy),
				    "expected subsystem:event (globs allowed), got '%s'", g);
		if (s->n_events == s->cap_events) {
			size_t cap = s->cap_events;

			if (GROW(s->event_lines, cap, s->n_events) < 0)
				return -ENOMEM;
			cap = s->cap_events;
			if (GROW(s->event_cols, cap, s->n_events) < 0)
				return -ENOMEM;
			if (GROW(s->events, s->cap_events, s->n_events) < 0)
				return -ENOMEM;
		}
		if (!(s->events[s->n_events] = strdup(g)))
			return -ENOMEM;
		locate(p, vcol + (int)(g - copy), &s->event_lines[s->n_events],
		       &s->event_cols[s->n_events], NULL, 0);
		s->n_events++;
	}
	return 0;
}

static int selection_key(struct parser *p, const char *key, const char *v, int vcol)
{
	struct selection *s = &p->c->sels[p->c->n_sels - 1];

	if (!strcmp(key, "Name")) {
		for (const char *q = v; *q; q++)
			if (!isalnum((unsigned char)*q) && !strchr("-_.", *q))
				return perr(p, vcol + (int)(q - v),
					    "expected a name of letters, digits, '-', '_' and '.'");
		if (!*v)
			return perr(p, vcol, "expected a name");
		free(s->name);
		return (s->name = strdup(v)) ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "Events")) {
		if (!*v) {	/* an empty assignment resets the list, as in systemd */
			strv_free(s->events, s->n_events);
			free(s->event_lines);
			free(s->event_cols);
			s->events = NULL;
			s->event_lines = s->event_cols = NULL;
			s->n_events = s->cap_events = 0;
			return 0;
		}
		free(s->events_file);
		if (!(s->events_file = strdup(p->file)))
			return -ENOMEM;
		return add_events(p, s, v, vcol);
	}
	if (!strcmp(key, "Filter")) {
		free(s->filter);
		s->filter = strdup(v);
		return s->filter ? set_pos(p, &s->filter_pos, vcol) : -ENOMEM;
	}
	if (!strcmp(key, "Priority"))
		return parse_priority(p, v, vcol, &s->priority);
	if (!strcmp(key, "RateLimit"))
		return parse_uint(p, v, vcol, 0, 100000000, &s->rate_limit);
	if (!strcmp(key, "RateLimitBurst"))
		return parse_uint(p, v, vcol, 0, 100000000, &s->rate_burst);
	return -ENOKEY;
}

static int begin_section(struct parser *p, const char *name, int col)
{
	struct config *c = p->c;
	struct selection *s;

	if (!strcmp(name, "Daemon")) {
		p->sec = SEC_DAEMON;
		return 0;
	}
	if (strcmp(name, "Selection"))
		return perr(p, col, "unknown section [%s], expected [Daemon] or [Selection]", name);
	if (GROW(c->sels, c->cap_sels, c->n_sels) < 0)
		return -ENOMEM;
	s = &c->sels[c->n_sels++];
	memset(s, 0, sizeof(*s));
	s->priority = LOG_INFO;
	p->sec = SEC_SELECTION;
	return set_pos(p, &s->pos, col);
}

/* Cuts a " # comment" outside quotes, and trailing blanks. */
static void strip_comment(char *s)
{
	char quote = 0;
	char *e;

	for (char *q = s; *q; q++) {
		if (quote) {
			if (*q == quote)
				quote = 0;
		} else if (*q == '"' || *q == '\'') {
			quote = *q;
		} else if (*q == '#' && (q == s || isspace((unsigned char)q[-1]))) {
			*q = 0;
			break;
		}
	}
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
}

static const char *const daemon_keys[] = {
	"RingBufferSize", "WakeupBytes", "Output", "FlushIntervalMSec", "StatsIntervalSec",
	"RawPointers", NULL,
};
static const char *const selection_keys[] = {
	"Name", "Events", "Filter", "Priority", "RateLimit", "RateLimitBurst", NULL,
};

static int unknown_key(struct parser *p, const char *key, int col)
{
	const char *const *keys = p->sec == SEC_DAEMON ? daemon_keys : selection_keys;
	const char *best = NULL;
	size_t bd = SIZE_MAX;

	for (size_t i = 0; keys[i]; i++) {
		size_t dist = diag_edit_distance(key, keys[i], true);

		if (dist < bd) {
			bd = dist;
			best = keys[i];
		}
	}
	/* Close enough to be a typo: at most a third of the name wrong. */
	if (best && *key && bd <= (strlen(best) + 2) / 3)
		return perr(p, col, "unknown key '%s' in [%s]; did you mean '%s'?", key,
			    p->sec == SEC_DAEMON ? "Daemon" : "Selection", best);
	return perr(p, col, "unknown key '%s' in [%s]; expected %s", key,
		    p->sec == SEC_DAEMON ? "Daemon" : "Selection",
		    p->sec == SEC_DAEMON ?
		    "RingBufferSize, WakeupBytes, Output, FlushIntervalMSec, StatsIntervalSec or RawPointers" :
		    "Name, Events, Filter, Priority, RateLimit or RateLimitBurst");
}

static int parse_assignment(struct parser *p, char *line, int indent)
{
	char *eq = strchr(line, '='), *key = line, *v, *ke;
	int vcol, r;

	if (!eq)
		return perr(p, indent + 1, "expected Key=Value or [Section]");
	ke = eq;
	while (ke > key && isspace((unsigned char)ke[-1]))
		ke--;
	*ke = 0;
	v = eq + 1;
	while (isspace((unsigned char)*v))
		v++;
	strip_comment(v);
	vcol = indent + (int)(v - line) + 1;
	switch (p->sec) {
	case SEC_DAEMON:
		r = daemon_key(p, key, v, vcol);
		break;
	case SEC_SELECTION:
		r = selection_key(p, key, v, vcol);
		break;
	default:
		return perr(p, indent + 1, "assignment outside a section, expected [Daemon] or [Selection] first");
	}
	if (r == -ENOKEY)
		return unknown_key(p, key, indent + 1);
	return r;
}

static int parse_line(struct parser *p, char *raw)
{
	char *line = raw, *end;
	int indent;

	while (isspace((unsigned char)*line))
		line++;
	indent = (int)(line - raw);
	if (!*line || *line == '#' || *line == ';')
		return 0;
	if (*line != '[')
		return parse_assignment(p, line, indent);
	strip_comment(line);
	end = strchr(line, ']');
	if (!end || end[1])
		return perr(p, indent + (int)strlen(line) + 1, "expected ']' to end the section header");
	*end = 0;
	return begin_section(p, line + 1, indent + 2);
}

int config_parse_text(struct config *c, const char *file, const char *text, struct diag *d)
{
	struct parser p = { .c = c, .d = d, .file = file };
	const char *q = text;
	int line_no = 0;

	/* A UTF-8 byte-order mark is not text: skip it, as systemd's parsers do. */
	if (!strncmp(q, "\xef\xbb\xbf", 3))
		q += 3;

	while (*q) {
		_cleanup_free_ char *logical = NULL;
		size_t len = 0;
		int first = line_no + 1;

		/* Join lines ending in a backslash, as systemd does. */
		p.n_seg = 0;
		for (;;) {
			const char *nl = strchrnul(q, '\n');
			size_t k = nl - q;
			bool cont = k > 0 && q[k - 1] == '\\';
			char *n = realloc(logical, len + k + 2);

			if (!n)
				return -ENOMEM;
			logical = n;
			if (p.n_seg < (int)ARRAY_SIZE(p.seg))
				p.seg[p.n_seg++] = len;
			memcpy(logical + len, q, k - cont);
			len += k - cont;
			logical[len] = 0;
			line_no++;
			q = *nl ? nl + 1 : nl;
			if (!cont || !*q)
				break;
			logical[len++] = ' ';
			logical[len] = 0;
		}
		{
			_cleanup_free_ char *src = strdup(logical);
			int r;

			p.line = first;
			p.source = src;
			r = parse_line(&p, logical);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* A config is a few KiB: the cap turns /dev/zero or a runaway generator
 * into an error instead of the OOM killer. */
#define CONFIG_MAX_BYTES (1u << 20)

/* Only a regular file is read: a FIFO or a device would block or never end.
 * O_NONBLOCK keeps open() itself from waiting for a FIFO's writer. */
static int open_regular(const char *path, struct diag *d, FILE **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	int err;

	if (fd < 0 || fstat(fd, &st) < 0)
		return err = errno, diag_set(d, path, 0, 0, "cannot read the config file: %s",
					     strerror(err)), -err;
	if (S_ISDIR(st.st_mode))
		return diag_set(d, path, 0, 0, "cannot read the config file: %s", strerror(EISDIR)), -EISDIR;
	if (!S_ISREG(st.st_mode))
		return diag_set(d, path, 0, 0, "cannot read the config file: not a regular file (%s)",
				S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device" :
				S_ISBLK(st.st_mode) ? "a block device" : "a socket"), -EINVAL;
	if (st.st_size > CONFIG_MAX_BYTES)
		return diag_set(d, path, 0, 0, "cannot read the config file: %lld bytes, more than the limit of %u bytes",
				(long long)st.st_size, CONFIG_MAX_BYTES), -EFBIG;
	*ret = fdopen(fd, "re");
	if (!*ret)
		return -errno;
	TAKE_FD(fd);
	return 0;
}

static int read_text(const char *path, char **text, struct diag *d)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, cap = 0, k;
	int err, r;

	r = open_regular(path, d, &f);
	if (r < 0)
		return r;
	do {
		if (GROW(buf, cap, n + 4096) < 0)
			return -ENOMEM;
		errno = 0;
		k = fread(buf + n, 1, cap - n - 1, f);
		n += k;
	} while (k > 0 && n <= CONFIG_MAX_BYTES);
	if (ferror(f)) {	/* an I/O error: say which */
		err = errno ? errno : EIO;
		return diag_set(d, path, 0, 0, "cannot read the config file: %s", strerror(err)), -err;
	}
	if (n > CONFIG_MAX_BYTES)	/* it grew while we read it */
		return diag_set(d, path, 0, 0, "cannot read the config file: more than the limit of %u bytes",
				CONFIG_MAX_BYTES), -EFBIG;
	buf[n] = 0;
	if (strlen(buf) != n) {
		size_t at = strlen(buf), line = 1, col = 1;

		for (size_t i = 0; i < at; i++, col++)
			if (buf[i] == '\n')
				line++, col = 0;
		return diag_set(d, path, line, col, "expected text, found a NUL byte");
	}
	*text = TAKE_PTR(buf);
	return 0;
}

static int load_one(struct config *c, const char *path, struct diag *d)
{
	_cleanup_free_ char *text = NULL;
	int r = read_text(path, &text, d);

	if (r < 0)
		return r;
	if (GROW(c->files, c->cap_files, c->n_files) < 0 || !(c->files[c->n_files] = strdup(path)))
		return -ENOMEM;
	c->n_files++;
	return config_parse_text(c, c->files[c->n_files - 1], text, d);
}

static int conf_filter(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 && !strcmp(e->d_name + n - 5, ".conf");
}

/* FILE.d/NAME.conf, in name order. */
static int load_dropins(struct config *c, const char *path, struct diag *d)
{
	struct dirent **list = NULL;
	char dir[4096], p[4400];
	int n, r = 0;

	snprintf(dir, sizeof(dir), "%s.d", path);
	n = scandir(dir, &list, conf_filter, alphasort);
	if (n < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
		       diag_set(d, dir, 0, 0, "cannot read the drop-in directory: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, list[i]->d_name);
		if (r >= 0)
			r = load_one(c, p, d);
		free(list[i]);
	}
	free(list);
	return r;
}

static int finish_selection(struct config *c, size_t i, struct diag *d)
{
	struct selection *s = &c->sels[i];

	if (!s->name)
		return diag_set(d, s->pos.file, s->pos.line, s->pos.col,
				"[Selection] needs a Name=");
	if (!s->n_events)
		return diag_set(d, s->pos.file, s->pos.line, s->pos.col,
				"[Selection] '%s' needs Events= with at least one subsystem:event", s->name);
	for (size_t j = 0; j < i; j++)
		if (!strcmp(c->sels[j].name, s->name))
			return diag_set(d, s->pos.file, s->pos.line, s->pos.col,
					"selection '%s' is already defined at %s:%d; names must be unique",
					s->name, c->sels[j].pos.file, c->sels[j].pos.line);
	if (s->rate_limit && !s->rate_burst)
		s->rate_burst = s->rate_limit;
	return 0;
}

int config_finish(struct config *c, struct diag *d)
{
	int r;

	if (!c->n_sels)
		return diag_set(d, c->n_files ? c->files[0] : "", 0, 0,
				"no [Selection] configured: nothing to trace");
	for (size_t i = 0; i < c->n_sels; i++) {
		r = finish_selection(c, i, d);
		if (r < 0)
			return r;
	}
	if (!c->wakeup_bytes)
		c->wakeup_bytes = c->ring_buffer_size / 4;
	if (c->wakeup_bytes >= c->ring_buffer_size) {
		/* only a WakeupBytes= written in a file can reach this */
		diag_set(d, c->wakeup_pos.file, c->wakeup_pos.line, c->wakeup_pos.col,
			 "WakeupBytes= must be below RingBufferSize= (%llu bytes)",
			 (unsigned long long)c->ring_buffer_size);
		if (d && c->wakeup_pos.source)
			snprintf(d->source, sizeof(d->source), "%s", c->wakeup_pos.source);
		return -EINVAL;
	}
	return 0;
}

int config_load(const char *path, struct config *c, struct diag *d)
{
	int r;

	config_init(c);
	r = load_one(c, path, d);
	if (r >= 0)
		r = load_dropins(c, path, d);
	if (r >= 0)
		r = config_finish(c, d);
	if (r < 0)
		config_free(c);
	return r;
}

static bool str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

bool selection_equal(const struct selection *a, const struct selection *b)
{
	if (!str_eq(a->name, b->name) || !str_eq(a->filter, b->filter) ||
	    a->n_events != b->n_events || a->priority != b->priority ||
	    a->rate_limit != b->rate_limit || a->rate_burst != b->rate_burst)
		return false;
	for (size_t i = 0; i < a->n_events; i++)
		if (strcmp(a->events[i], b->events[i]))
			return false;
	return true;
}
