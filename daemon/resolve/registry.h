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
	char **available;		/* "sys:event" as tracefs lists them, and the
					 * synthetic events; sorted */
	size_t n_available;
	/* The config's synthetic events ([Synthetic] Event=), in its order:
	 * "synthetic:NAME", built from the definition, never read from tracefs. */
	struct tp_event **synth;
	size_t n_synth;
	struct tp_event **synth_old;	/* replaced by a reload; slots may still use them */
	size_t n_synth_old, cap_synth_old;
	char **synth_changed;		/* names the last registry_synthetic() added,
					 * changed or removed */
	size_t n_synth_changed, cap_synth_changed;
};

/* Reads tracefs's list of events, and adds the synthetic events of synth
 * (registry_synthetic()). Returns -ENOMEDIUM if tracefs is not mounted (and
 * cannot be), -EACCES if it may not be read; no other failure returns these. */
int registry_new(struct registry **ret, const struct synth_def *synth, size_t n_synth,
		 struct diag *d);
/* The synthetic events of synth in place of the last ones (a reload): an
 * unchanged definition keeps its event, a changed one gets a new event,
 * and the old stays loaded for the slots still attached to it. The i-th
 * has the id TP_SYNTH_ID_FIRST + i. A bad definition is an error at its
 * byte (config_load() checked them already). */
int registry_synthetic(struct registry *r, const struct synth_def *synth, size_t n_synth,
		       struct diag *d);
/* Whether a glob of s matches a synthetic event the last
 * registry_synthetic() added, changed or removed: its selection cannot keep
 * its attachments then. */
bool registry_synthetic_changed(const struct registry *r, const struct selection *s);
/* release, if set, is called on every loaded event before it is freed
 * (render_release: what later stages hung on the event). */
void registry_free(struct registry *r, void (*release)(struct tp_event *e));
/* The event's format, loaded once and grouped into its class; a
 * "synthetic:NAME" one is the config's (-ENOENT if it has none of NAME). */
int registry_event(struct registry *r, const char *sys_event, struct tp_event **ret);

/* resolve.c: a selection's Events= globs to loaded events, each once. */
int resolve_selection(struct registry *r, const struct selection *s,
		      struct tp_event ***events, size_t *n, struct diag *d);
/* The three available events nearest to glob, as "a, b or c". */
void suggest_events(struct registry *r, const char *glob, char *buf, size_t size);

#endif
