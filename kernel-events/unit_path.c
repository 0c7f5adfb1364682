// SPDX-License-Identifier: GPL-2.0
/* systemd's cgroup path rules: see unit_path.h. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-events/unit_path.h"

static const char *const unit_types[] = {
	"service", "socket", "target", "device", "mount", "automount",
	"swap", "timer", "path", "slice", "scope",
};

#define UNIT_NAME_CHARS "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:-_.\\"
#define UNIT_GLOB_CHARS UNIT_NAME_CHARS "@[]!-*?"

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The last '.' of s[0..n), or NULL. */
static const char *last_dot(const char *s, size_t n)
{
	for (size_t i = n; i > 0; i--)
		if (s[i - 1] == '.')
			return s + i - 1;
	return NULL;
}

static bool unit_type_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(unit_types) / sizeof(unit_types[0]); i++)
		if (strlen(unit_types[i]) == n && memcmp(unit_types[i], s, n) == 0)
			return true;
	return false;
}

/* As systemd's unit_name_is_valid(): a prefix of its characters (the
 * first '@' starts the instance), '.', a unit type. */
bool unit_name_valid(const char *s, size_t n, unsigned flags)
{
	const char *e, *at = NULL;

	if (!n || n >= UNIT_NAME_MAX)
		return false;
	e = last_dot(s, n);
	if (!e || e == s || !unit_type_valid(e + 1, s + n - e - 1))
		return false;
	for (const char *i = s; i < e; i++) {
		if (*i == '@' && !at)
			at = i;
		if (!memchr(UNIT_NAME_CHARS "@", *i, sizeof(UNIT_NAME_CHARS "@") - 1))
			return false;
	}
	if (at == s)
		return false;
	if ((flags & UNIT_NAME_PLAIN) && !at)
		return true;
	if ((flags & UNIT_NAME_INSTANCE) && at && e > at + 1)
		return true;
	return (flags & UNIT_NAME_TEMPLATE) && at && e == at + 1;
}

/* One path component: *p moves past it and the slashes before it. */
static const char *component(const char **p, size_t *n)
{
	const char *c = *p + strspn(*p, "/");

	*n = strcspn(c, "/");
	*p = c + *n;
	return c;
}

/* cg_unescape(): systemd prefixes a name that could clash with the
 * kernel's own files with '_'. */
static const char *unescape(const char *c, size_t *n)
{
	if (*n && c[0] == '_') {
		(*n)--;
		return c + 1;
	}
	return c;
}

static bool is_slice(const char *c, size_t n)
{
	c = unescape(c, &n);
	return has_suffix(c, n, ".slice") && unit_name_valid(c, n, UNIT_NAME_PLAIN);
}

/* skip_slices(); the last slice skipped in *slice, if any. */
static const char *skip_slices(const char *p, const char **slice, size_t *slice_n)
{
	for (;;) {
		const char *rest = p, *c;
		size_t n;

		c = component(&rest, &n);
		if (!is_slice(c, n))
			return p;
		if (slice) {
			*slice = c;
			*slice_n = n;
		}
		p = rest;
	}
}

static void copy_name(char *out, const char *c, size_t n)
{
	c = unescape(c, &n);
	memcpy(out, c, n);
	out[n] = 0;
}

/* cg_path_get_unit(): the component after the slices, a valid plain or
 * instance name and no slice. */
static bool get_unit(const char *p, char *out)
{
	const char *c, *u;
	size_t n, un;

	p = skip_slices(p, NULL, NULL);
	c = component(&p, &n);
	un = n;
	u = unescape(c, &un);
	if (!unit_name_valid(u, un, UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE) ||
	    has_suffix(u, un, ".slice"))
		return false;
	copy_name(out, c, n);
	return true;
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* skip_user_prefix(): after the slices, user@UID.service or
 * session-ID.scope, required; NULL without one. */
static const char *skip_user_prefix(const char *p)
{
	const char *c;
	size_t n;

	p = skip_slices(p, NULL, NULL);
	c = component(&p, &n);
	if (n >= strlen("user@x.service") && !memcmp(c, "user@", 5) &&
	    has_suffix(c, n, ".service") && all_digits(c + 5, n - 5 - 8))
		return p;
	if (n >= strlen("session-x.scope") && !memcmp(c, "session-", 8) &&
	    has_suffix(c, n, ".scope"))
		return p;
	return NULL;
}

void unit_path_parse(const char *path, struct unit_names *ret)
{
	const char *slice = NULL, *user;
	size_t slice_n = 0;

	*ret = (struct unit_names){ 0 };
	skip_slices(path, &slice, &slice_n);
	if (slice)
		copy_name(ret->slice, slice, slice_n);
	else
		strcpy(ret->slice, "-.slice");
	get_unit(path, ret->unit);
	user = skip_user_prefix(path);
	if (user)
		get_unit(user, ret->user_unit);
}

static bool glob_hit(char *const *globs, size_t n, const char *name, size_t len)
{
	char buf[UNIT_NAME_MAX];

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, name, len);
	buf[len] = 0;
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], buf, 0) == 0)
			return true;
	return false;
}

bool unit_path_match(char *const *globs, size_t n, const char *path, const struct unit_names *names)
{
	if (glob_hit(globs, n, names->unit, strlen(names->unit)) ||
	    glob_hit(globs, n, names->user_unit, strlen(names->user_unit)))
		return true;
	/* Every slice on the way: Unit=system.slice takes its services. */
	for (const char *p = path; *p;) {
		const char *c;
		size_t len;

		c = component(&p, &len);
		if (is_slice(c, len) && glob_hit(globs, n, unescape(c, &len), len))
			return true;
	}
	return false;
}

bool unit_glob_is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int unit_glob_normalize(const char *word, char *out, size_t size, size_t *bad_col)
{
	size_t n = strlen(word), bad = strspn(word, UNIT_GLOB_CHARS);
	const char *dot;

	if (bad < n) {
		*bad_col = bad;
		return -EINVAL;
	}
	if (n + sizeof(".service") > size || n + sizeof(".service") > UNIT_NAME_MAX) {
		*bad_col = 0;
		return -EINVAL;
	}
	if (unit_glob_is_glob(word)) {
		memcpy(out, word, n + 1);
		return 0;
	}
	/* systemctl's mangling: "nginx" is nginx.service. */
	dot = last_dot(word, n);
	if (dot && unit_type_valid(dot + 1, word + n - dot - 1))
		memcpy(out, word, n + 1);
	else
		snprintf(out, size, "%s.service", word);
	if (!unit_name_valid(out, strlen(out), UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE)) {
		const char *at = strchr(word, '@');

		/* The usual mistakes: "@x.service", "foo@.service" (a template). */
		*bad_col = at ? (size_t)(at - word) : 0;
		return -EINVAL;
	}
	return 0;
}
