/* SPDX-License-Identifier: GPL-2.0 */
/* The event registry: what tracefs lists, the formats loaded so far (shared
 * by every selection that names an event) and the classes they fall into;
 * and resolving a selection's globs against it. */
#ifndef TRACERD_REGISTRY_H
#define TRACERD_REGISTRY_H

#include "config/config.h"
#include "diag.h"
#include "kernel-events/events.h"

struct registry {
	struct tp_classes classes;
	struct tp_event **events;	/* loaded formats, shared by selections */
	size_t n_events, cap_events;
	char **available;		/* "sys:event" as tracefs lists them */
	size_t n_available;
};

/* Reads tracefs's list of events. Returns -ENOMEDIUM if tracefs is not
 * mounted (and cannot be), -EACCES if it may not be read; no other failure
 * returns these. */
int registry_new(struct registry **ret, struct diag *d);
/* release, if set, is called on every loaded event before it is freed
 * (render_release: what later stages hung on the event). */
void registry_free(struct registry *r, void (*release)(struct tp_event *e));
/* The event's format, loaded once and grouped into its class. */
int registry_event(struct registry *r, const char *sys_event, struct tp_event **ret);

/* resolve.c: a selection's Events= globs to loaded events, each once. */
int resolve_selection(struct registry *r, const struct selection *s,
		      struct tp_event ***events, size_t *n, struct diag *d);
/* The three available events nearest to glob, as "a, b or c". */
void suggest_events(struct registry *r, const char *glob, char *buf, size_t size);

#endif
