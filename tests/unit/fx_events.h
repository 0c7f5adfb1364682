/* SPDX-License-Identifier: GPL-2.0 */
/* The captured formats (tests/fixtures/formats-6.18.txt) as parsed events,
 * for the harnesses that need real events: loaded once per process. The
 * file is found from $TRACERD_FIXTURE or the repository root. */
#ifndef TRACERD_TEST_FX_EVENTS_H
#define TRACERD_TEST_FX_EVENTS_H

#include "kernel-events/events.h"
#include "util.h"

static struct tp_event **fx_events;
static size_t fx_n;

static char *fx_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc(n + 1)) && fread(buf, 1, n, f) == (size_t)n)
		buf[n] = 0;
	else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void fx_load(void)
{
	const char *path = getenv("TRACERD_FIXTURE");
	char *all, *p;
	size_t cap = 0;

	if (fx_events)
		return;
	all = fx_slurp(path ? path : "tests/fixtures/formats-6.18.txt");
	if (!all) {
		fprintf(stderr, "tests: cannot read the format fixture; run from the repository root\n");
		abort();
	}
	for (p = strstr(all, "#### "); p;) {
		char *nl = strchr(p, '\n'), *next, *colon;
		struct tp_event *e;

		if (!nl)
			break;
		*nl = 0;
		next = strstr(nl + 1, "\n#### ");
		if (next)
			*next = 0;
		colon = strchr(p + 5, ':');
		if (colon && tp_format_parse(nl + 1, &e, NULL) == 0 && GROW(fx_events, cap, fx_n) == 0) {
			*colon = 0;
			e->system = strdup(p + 5);
			fx_events[fx_n++] = e;
		}
		p = next ? next + 1 : NULL;
	}
	free(all);
}

/* The fixture's sys:name, or NULL. */
static inline struct tp_event *fx_find(const char *sys, const char *name)
{
	fx_load();
	for (size_t i = 0; i < fx_n; i++)
		if (!strcmp(fx_events[i]->system, sys) && !strcmp(fx_events[i]->name, name))
			return fx_events[i];
	return NULL;
}

#endif
