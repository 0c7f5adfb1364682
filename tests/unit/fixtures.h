/* SPDX-License-Identifier: GPL-2.0 */
/* The format files captured from this kernel (tests/fixtures/formats-6.18.txt,
 * or $TRACERD_FIXTURE), read once per process: fixtures[] holds each event's
 * "system:event" and format text, fx_events[] the events parsed (fx_load()). */
#ifndef TRACERD_TEST_FIXTURES_H
#define TRACERD_TEST_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-events/events.h"
#include "util.h"

#define FIXTURE "tests/fixtures/formats-6.18.txt"

_unused_ static void tp_event_freep(struct tp_event **e)
{
	tp_event_free(*e);
}

struct fixture {
	char *name;	/* system:event */
	char *text;
};

static struct fixture *fixtures;
static size_t n_fixtures;
static struct tp_event **fx_events;
static size_t fx_n;

_unused_ static char *fixture_slurp(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc(n + 1)) && fread(buf, 1, n, f) == (size_t)n) {
		buf[n] = 0;
		return buf;
	}
	free(buf);
	return NULL;
}

/* Without the file no test means anything: abort, saying so. */
_unused_ static void fixtures_load(void)
{
	const char *path = getenv("TRACERD_FIXTURE");
	_cleanup_free_ char *all = NULL;
	char *p;
	size_t cap = 0;

	if (fixtures)
		return;
	all = fixture_slurp(path ? path : FIXTURE);
	if (!all) {
		fprintf(stderr, "tests: cannot read %s; run from the repository root\n",
			path ? path : FIXTURE);
		abort();
	}
	for (p = strstr(all, "#### "); p;) {
		char *nl = strchr(p, '\n'), *next;

		if (!nl)
			break;
		*nl = 0;
		next = strstr(nl + 1, "\n#### ");
		if (next)
			*next = 0;
		if (GROW(fixtures, cap, n_fixtures) < 0)
			abort();
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
	fixtures = NULL;
	n_fixtures = 0;
}

/* fixtures[i] parsed, or NULL; free with tp_event_free. */
_unused_ static struct tp_event *fixture_parse(size_t i)
{
	const char *name = fixtures[i].name;
	struct tp_event *e = NULL;

	if (tp_format_parse(fixtures[i].text, &e, NULL) < 0)
		return NULL;
	/* The format file does not name the system; tracefs' path does. */
	e->system = strndup(name, strcspn(name, ":"));
	return e;
}

/* The parsed event "system:event", or NULL; free with tp_event_free. */
_unused_ static struct tp_event *fixture_event(const char *name)
{
	fixtures_load();
	for (size_t i = 0; i < n_fixtures; i++)
		if (!strcmp(fixtures[i].name, name))
			return fixture_parse(i);
	return NULL;
}

/* Every fixture parsed, once per process, into fx_events[] (those that
 * parse): for the tests and harnesses that walk real events. */
_unused_ static void fx_load(void)
{
	size_t cap = 0;

	if (fx_events)
		return;
	fixtures_load();
	for (size_t i = 0; i < n_fixtures; i++) {
		struct tp_event *e = fixture_parse(i);

		if (e && GROW(fx_events, cap, fx_n) < 0)
			abort();
		if (e)
			fx_events[fx_n++] = e;
	}
}

/* The fixture's sys:name parsed, or NULL; fx_events[] owns it. */
_unused_ static struct tp_event *fx_find(const char *sys, const char *name)
{
	fx_load();
	for (size_t i = 0; i < fx_n; i++)
		if (!strcmp(fx_events[i]->system, sys) && !strcmp(fx_events[i]->name, name))
			return fx_events[i];
	return NULL;
}

#endif
