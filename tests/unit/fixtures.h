/* SPDX-License-Identifier: GPL-2.0 */
/* The format files captured from this kernel (tests/fixtures/formats-6.18.txt),
 * parsed on demand into struct tp_event. */
#ifndef TRACERD_TEST_FIXTURES_H
#define TRACERD_TEST_FIXTURES_H

#include <stdlib.h>
#include "kernel-events/events.h"
#include "util.h"

#define FIXTURE "tests/fixtures/formats-6.18.txt"

static inline void tp_event_freep(struct tp_event **e)
{
	tp_event_free(*e);
}

struct fixture {
	char *name;	/* system:event */
	char *text;
};

static struct fixture *fixtures;
static size_t n_fixtures;

_unused_ static char *fixture_slurp(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[n] = 0;
	return buf;
}

_unused_ static void fixtures_load(void)
{
	_cleanup_free_ char *all = fixture_slurp(FIXTURE);
	char *p = all;
	size_t cap = 0;

	while (p && (p = strstr(p, "#### "))) {
		char *nl = strchr(p, '\n'), *next;

		*nl = 0;
		next = strstr(nl + 1, "\n#### ");
		if (next)
			*next = 0;
		if (GROW(fixtures, cap, n_fixtures) < 0)
			return;
		fixtures[n_fixtures].name = strdup(p + 5);
		fixtures[n_fixtures].text = strdup(nl + 1);
		n_fixtures++;
		p = next ? next + 1 : NULL;
	}
}

_unused_ static void fixtures_free(void)
{
	for (size_t i = 0; i < n_fixtures; i++) {
		free(fixtures[i].name);
		free(fixtures[i].text);
	}
	free(fixtures);
}

/* The parsed event "system:event", or NULL; free with tp_event_free. */
_unused_ static struct tp_event *fixture_event(const char *name)
{
	for (size_t i = 0; i < n_fixtures; i++) {
		struct tp_event *e = NULL;

		if (strcmp(fixtures[i].name, name))
			continue;
		if (tp_format_parse(fixtures[i].text, &e, NULL) < 0)
			return NULL;
		/* The format file does not name the system; tracefs' path does. */
		e->system = strndup(name, strcspn(name, ":"));
		return e;
	}
	return NULL;
}

#endif
