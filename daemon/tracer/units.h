/* SPDX-License-Identifier: GPL-2.0 */
/* Unit=: the cgroups each selection's units cover, as verdicts in the
 * class program's map, kept so as cgroups come and go. */
#ifndef TRACERD_UNITS_H
#define TRACERD_UNITS_H

#include <stdbool.h>
#include "config/config.h"
#include "kernel-events/cgroup.h"

struct tracer;
struct sel_state;

/* Whether c (a cgroup with its path) is in one of s's units, or below:
 * a glob matching its unit, its user unit, or a slice it is in. */
bool units_match(const struct selection *s, const struct cgroup_info *c);
/* Gives st a set and writes its verdicts on every cgroup there is, before
 * its slots attach; warns of a glob that matches nothing running. The first
 * one starts the watch of new cgroups. */
int units_attach(struct tracer *t, struct sel_state *st);
/* Once st's slots are detached. */
void units_detach(struct tracer *t, struct sel_state *st);
/* The watch's fd, -1 while no selection has Unit=; and what to call when
 * it is readable. */
int units_fd(const struct tracer *t);
void units_on_ready(struct tracer *t);

#endif
