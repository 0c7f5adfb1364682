// SPDX-License-Identifier: GPL-2.0
/* Reading the configuration: the main file, then FILE.d/NAME.conf in name
 * order. [Daemon] keys set by a later file override earlier ones; every
 * [Selection] adds a selection, and two selections may not share a Name;
 * every [Synthetic] Event= adds a synthetic event, two not of one name. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "config_parser.h"

/* The fields of [section] in base (a struct config or struct selection) at
 * the table's defaults. Each default parses (tests/unit/test_config.c checks
 * it) and none allocates today, so nothing here can fail; a string default
 * that failed to allocate would leave its field NULL. */
static void apply_defaults(struct config *c, const char *section, void *base)
{
	struct config_parser p = { .c = c, .file = "", .section = section };
	size_t n;
	const struct config_item *t = config_table(&n);

	for (size_t i = 0; i < n; i++)
		if (t[i].def && !strcmp(t[i].section, section))
			(void)t[i].type->parse(&p, &t[i], t[i].def, 0, (char *)base + t[i].offset, base);
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	apply_defaults(c, "Daemon", c);
	apply_defaults(c, "Store", c);
	apply_defaults(c, "Metrics", c);
	apply_defaults(c, "Recorder", c);
}

static void selection_free(struct selection *s)
{
	free(s->name);
	strv_free(s->events, s->n_events);
	free(s->event_lines);
	free(s->event_cols);
	free(s->events_file);
	free(s->filter);
	config_pos_free(&s->filter_pos);
	free(s->aggregate);
	config_pos_free(&s->aggregate_pos);
	config_pos_free(&s->stack_trace_pos);
	strv_free(s->units, s->n_units);
	config_pos_free(&s->units_pos);
	config_pos_free(&s->trigger_pos);
	config_pos_free(&s->pos);
}

void config_free(struct config *c)
{
	for (size_t i = 0; i < c->n_sels; i++)
		selection_free(&c->sels[i]);
	free(c->sels);
	config_synth_reset(c);
	strv_free(c->files, c->n_files);
	config_pos_free(&c->wakeup_pos);
	free(c->store.directory);
	free(c->metrics_listen);
	memset(c, 0, sizeof(*c));
}

static int begin_section(struct config_parser *p, const char *name, int col)
{
	struct config *c = p->c;
	struct selection *s;

	static const char *const plain[] = { "Daemon", "Store", "Recorder", "Synthetic", "Metrics" };

	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (!strcmp(name, plain[i])) {
			p->section = plain[i];
			return 0;
		}
	if (strcmp(name, "Selection"))
		return config_error(p, col, "unknown section [%s], expected [Daemon], [Store], "
				    "[Recorder], [Synthetic], [Metrics] or [Selection]", name);
	if (GROW(c->sels, c->cap_sels, c->n_sels) < 0)
		return -ENOMEM;
	s = &c->sels[c->n_sels++];
	memset(s, 0, sizeof(*s));
	apply_defaults(c, "Selection", s);
	p->section = "Selection";
	return config_pos_set(p, &s->pos, col);
}

/* What the keys of the current section write into. */
static void *section_base(struct config_parser *p)
{
	return strcmp(p->section, "Selection") ? (void *)p->c : (void *)&p->c->sels[p->c->n_sels - 1];
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

/* "did you mean" the closest key of the section, or the list of them. */
static int unknown_key(struct config_parser *p, const char *key, int col)
{
	size_t n, n_keys = 0, bd = SIZE_MAX;
	const struct config_item *t = config_table(&n);
	const char *best = NULL;
	char keys[512] = "";

	for (size_t i = 0; i < n; i++)
		n_keys += !strcmp(t[i].section, p->section);
	for (size_t i = 0, k = 0; i < n; i++) {
		size_t dist;

		if (strcmp(t[i].section, p->section))
			continue;
		config_list_append(keys, sizeof(keys), k++, n_keys, t[i].key);
		dist = diag_edit_distance(key, t[i].key, true);
		if (dist < bd) {
			bd = dist;
			best = t[i].key;
		}
	}
	/* Close enough to be a typo: at most a third of the name wrong. */
	if (best && *key && bd <= (strlen(best) + 2) / 3)
		return config_error(p, col, "unknown key '%s' in [%s]; did you mean '%s'?", key,
				    p->section, best);
	return config_error(p, col, "unknown key '%s' in [%s]; expected %s", key, p->section, keys);
}

/* Key=value: the table says which field the value goes into, and how. */
static int assign(struct config_parser *p, const char *key, const char *v, int vcol, int kcol)
{
	const struct config_item *it = config_find(p->section, key);
	void *base;
	int r;

	if (!it)
		return unknown_key(p, key, kcol);
	base = section_base(p);
	r = it->type->parse(p, it, v, vcol, (char *)base + it->offset, base);
	if (r < 0 || !it->pos_offset)
		return r;
	return config_pos_set(p, (struct conf_pos *)((char *)base + it->pos_offset), vcol);
}

static int parse_assignment(struct config_parser *p, char *line, int indent)
{
	char *eq = strchr(line, '='), *key = line, *v, *ke;

	if (!eq)
		return config_error(p, indent + 1, "expected Key=Value or [Section]");
	if (!p->section)
		return config_error(p, indent + 1,
				    "assignment outside a section, expected [Daemon] or [Selection] first");
	ke = eq;
	while (ke > key && isspace((unsigned char)ke[-1]))
		ke--;
	*ke = 0;
	v = eq + 1;
	while (isspace((unsigned char)*v))
		v++;
	strip_comment(v);
	return assign(p, key, v, indent + (int)(v - line) + 1, indent + 1);
}

static int parse_line(struct config_parser *p, char *raw)
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
		return config_error(p, indent + (int)strlen(line) + 1, "expected ']' to end the section header");
	*end = 0;
	return begin_section(p, line + 1, indent + 2);
}

int config_parse_text(struct config *c, const char *file, const char *text, struct diag *d)
{
	struct config_parser p = { .c = c, .d = d, .file = file };
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

/* A diagnostic at a value's position, its line shown. */
static int error_at(const struct conf_pos *at, struct diag *d, const char *msg)
{
	diag_set(d, at->file, at->line, at->col, "%s", msg);
	if (d && at->source)
		snprintf(d->source, sizeof(d->source), "%s", at->source);
	return -EINVAL;
}

/* Trigger=snapshot: on records, of a recorder that some selection fills. */
static int check_trigger(const struct config *c, const struct selection *s, struct diag *d)
{
	if (s->trigger != TRIGGER_SNAPSHOT)
		return 0;
	if (s->aggregate && *s->aggregate)
		return error_at(&s->trigger_pos, d,
				"Trigger=snapshot fires on records, and a selection with Aggregate= "
				"writes none; expected Trigger=none here");
	for (size_t i = 0; i < c->n_sels; i++)
		if (c->sels[i].output == OUTPUT_RECORDER)
			return 0;
	return error_at(&s->trigger_pos, d,
			"Trigger=snapshot takes a snapshot of the recorder's window, and no "
			"selection records into it: expected a selection with Output=recorder");
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
	if (s->stack_trace && s->aggregate && *s->aggregate) {
		const struct conf_pos *at = &s->stack_trace_pos;

		diag_set(d, at->file, at->line, at->col,
			 "StackTrace= adds stacks to records, and a selection with Aggregate= writes "
			 "none; expected StackTrace=no here (a histogram takes keys=common_stacktrace)");
		if (d && at->source)
			snprintf(d->source, sizeof(d->source), "%s", at->source);
		return -EINVAL;
	}
	if (s->rate_limit && !s->rate_burst)
		s->rate_burst = s->rate_limit;
	return check_trigger(c, s, d);
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
	return config_load_args(path, NULL, 0, c, d);
}

static bool is_selection_arg(const struct config_arg *a)
{
	return !strcmp(a->item->section, "Selection");
}

/* One argument as a line of its own: the option names it in diagnostics. */
static int assign_arg(struct config *c, const struct config_arg *a, struct diag *d)
{
	char option[64];
	struct config_parser p = { .c = c, .d = d, .file = option, .line = 1, .source = a->value,
				   .section = a->item->section, .n_seg = 1 };

	config_item_option(a->item, option, sizeof(option));
	return assign(&p, a->item->key, a->value, 1, 1);
}

/* The command line's selection, in place of the file's, if it has one;
 * its synthetic events after the file's. */
static int load_args(struct config *c, const struct config_arg *args, size_t n, struct diag *d)
{
	struct config_parser p = { .c = c, .d = d, .file = "command line", .line = 1, .source = "",
				   .n_seg = 1 };
	bool selection = false;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		selection |= is_selection_arg(&args[i]);
	if (selection) {
		for (size_t i = 0; i < c->n_sels; i++)
			selection_free(&c->sels[i]);
		c->n_sels = 0;
		r = begin_section(&p, "Selection", 0);
		if (r >= 0 && !(c->sels[0].name = strdup(CONFIG_ARGS_NAME)))
			r = -ENOMEM;
	}
	for (size_t i = 0; i < n && r >= 0; i++)
		r = assign_arg(c, &args[i], d);
	return r;
}

int config_load_synthetic(const struct config_arg *args, size_t n_args, struct config *c,
			  struct diag *d)
{
	int r = 0;

	config_init(c);
	for (size_t i = 0; i < n_args && r >= 0; i++)
		if (!is_selection_arg(&args[i]))
			r = assign_arg(c, &args[i], d);
	if (r < 0)
		config_free(c);
	return r;
}

int config_load_args(const char *path, const struct config_arg *args, size_t n_args,
		     struct config *c, struct diag *d)
{
	int r = 0;

	config_init(c);
	if (path) {
		r = load_one(c, path, d);
		if (r >= 0)
			r = load_dropins(c, path, d);
	}
	if (r >= 0 && n_args)
		r = load_args(c, args, n_args, d);
	if (r >= 0)
		r = config_finish(c, d);
	if (r < 0)
		config_free(c);
	return r;
}
