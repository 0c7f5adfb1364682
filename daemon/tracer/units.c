// SPDX-License-Identifier: GPL-2.0
/* Unit=: see units.h. Names come from the cgroup2 paths by systemd's rules
 * (kernel-events/unit_path.c), not from systemd's bus: they work the same
 * without systemd as PID 1, in a container, and for units since stopped. */
#include <fnmatch.h>
#include "kernel-events/unit_path.h"
#include "attach/cgroup_watch.h"
#include "log.h"
#include "tracer.h"
#include "units.h"
#include "util.h"

bool units_match(const struct selection *s, const struct cgroup_info *c)
{
	return c->path && unit_path_match(s->units, s->n_units, c->path, &c->names);
}

struct fill {
	struct tracer *t;
	const struct sel_state *st;
	bool *hit;		/* per glob: matched a cgroup */
	int err;
};

static int write_verdict(struct tracer *t, const struct sel_state *st, const struct cgroup_info *c)
{
	return loader_unit_verdict(t->ld, st->unit_set, c->id,
				   units_match(st->conf, c) ? UNIT_ACCEPT : UNIT_REJECT);
}

static int fill_one(const struct cgroup_info *c, void *userdata)
{
	struct fill *f = userdata;
	const struct selection *s = f->st->conf;
	int r = write_verdict(f->t, f->st, c);

	if (r < 0 && !f->err)
		f->err = r;
	for (size_t i = 0; f->hit && i < s->n_units; i++)
		if (!f->hit[i] && ((c->names.unit[0] && !fnmatch(s->units[i], c->names.unit, 0)) ||
				   (c->names.user_unit[0] && !fnmatch(s->units[i], c->names.user_unit, 0)) ||
				   (c->names.slice[0] && !fnmatch(s->units[i], c->names.slice, 0))))
			f->hit[i] = true;
	return 0;
}

static void on_new_cgroup(void *userdata, uint64_t id)
{
	struct tracer *t = userdata;
	const struct cgroup_info *c = cgroup_lookup(id);

	if (!c)
		return;		/* gone already */
	for (size_t i = 0; i < t->n_sels; i++)
		if (t->sels[i]->unit_set)
			write_verdict(t, t->sels[i], c);
	loader_unit_changed(t->ld);
}

static int start_watch(struct tracer *t)
{
	int r;

	if (t->cgroup_watch)
		return 0;
	r = cgroup_watch_new(&t->cgroup_watch, on_new_cgroup, t);
	if (r < 0)
		log_warning("Unit=: cannot watch cgroup:cgroup_mkdir (%s): a unit started from now "
			    "on is matched at the next reload", strerror(-r));
	return r;
}

static int alloc_set(struct tracer *t)
{
	for (unsigned i = 0; i < TRACERD_UNIT_SETS; i++)
		if (!(t->unit_sets & (1ULL << i))) {
			t->unit_sets |= 1ULL << i;
			return i + 1;
		}
	return -ENOSPC;
}

/* Verdicts on every cgroup of the live table for st; f->hit says which
 * globs matched. */
static int fill_set(struct tracer *t, struct sel_state *st, bool *hit)
{
	struct fill f = { t, st, hit, 0 };
	struct cgroup_map *m;

	cgroup_lock();
	m = cgroup_live();
	if (m) {
		cgroup_map_scan(m);	/* what was made since the last look */
		cgroup_map_each(m, fill_one, &f);
	}
	cgroup_unlock();
	loader_unit_changed(t->ld);
	return m ? f.err : -ENOMEM;
}

int units_attach(struct tracer *t, struct sel_state *st)
{
	const struct selection *s = st->conf;
	_cleanup_free_ bool *hit = NULL;
	int set, r;

	if (!s->n_units)
		return 0;
	set = alloc_set(t);
	if (set < 0) {
		log_error("%s:%d: more than %d selections with Unit=", s->units_pos.file,
			  s->units_pos.line, TRACERD_UNIT_SETS);
		return set;
	}
	st->unit_set = set;
	start_watch(t);		/* before the scan: no cgroup falls between */
	hit = calloc(s->n_units, sizeof(*hit));
	if (!hit)
		return -ENOMEM;
	r = fill_set(t, st, hit);
	if (r < 0) {
		log_error("selection %s: cannot write the Unit= verdicts: %s", s->name, strerror(-r));
		return r;
	}
	for (size_t i = 0; i < s->n_units; i++)
		if (!hit[i])
			log_warning("%s:%d: Unit=%s matches no unit running now; its events are "
				    "traced from when it starts", s->units_pos.file, s->units_pos.line,
				    s->units[i]);
	return 0;
}

void units_detach(struct tracer *t, struct sel_state *st)
{
	if (!st->unit_set)
		return;
	loader_unit_forget(t->ld, st->unit_set);
	loader_unit_changed(t->ld);
	t->unit_sets &= ~(1ULL << (st->unit_set - 1));
	st->unit_set = 0;
}

int units_fd(const struct tracer *t)
{
	return t->cgroup_watch ? cgroup_watch_fd(t->cgroup_watch) : -1;
}

void units_on_ready(struct tracer *t)
{
	if (!t->cgroup_watch || !cgroup_watch_read(t->cgroup_watch))
		return;
	/* The watch's ring overflowed: some new cgroups were not seen. */
	for (size_t i = 0; i < t->n_sels; i++)
		if (t->sels[i]->unit_set)
			fill_set(t, t->sels[i], NULL);
}
