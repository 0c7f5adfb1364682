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
};

/* A verdict the map has no room for is no loss: the class program asks
 * the daemon about that cgroup's events, each (bpf/unit.bpf.h). Counted. */
static bool write_verdict(struct tracer *t, const struct sel_state *st, const struct cgroup_info *c)
{
	bool in = units_match(st->conf, c);
	int r = loader_unit_verdict(t->ld, st->unit_set, c->id, in ? UNIT_ACCEPT : UNIT_REJECT);

	if (r < 0 && !t->unit_unwritten++)
		log_warning("Unit=: cannot write a verdict on a cgroup (%s): the events of cgroups "
			    "without one are judged by tracerd, one by one; counted in the statistics",
			    strerror(-r));
	return in;
}

static int fill_one(const struct cgroup_info *c, void *userdata)
{
	struct fill *f = userdata;
	const struct selection *s = f->st->conf;

	write_verdict(f->t, f->st, c);
	for (size_t i = 0; f->hit && i < s->n_units; i++)
		if (!f->hit[i] && ((c->names.unit[0] && !fnmatch(s->units[i], c->names.unit, 0)) ||
				   (c->names.user_unit[0] && !fnmatch(s->units[i], c->names.user_unit, 0)) ||
				   (c->names.slice[0] && !fnmatch(s->units[i], c->names.slice, 0))))
			f->hit[i] = true;
	return 0;
}

/* A cgroup by the path the kernel gave it at birth (below_root: see
 * cgroup_watch_birth_path()), which names one already gone too. */
static const struct cgroup_info *born_cgroup(struct tracer *t, uint64_t id, bool below_root)
{
	const char *path = cgroup_watch_birth_path(t->cgroup_watch, id, below_root);
	const struct cgroup_info *c = NULL;
	struct cgroup_map *m;

	if (!path)
		return NULL;
	cgroup_lock();
	m = cgroup_live();
	if (m)
		c = cgroup_map_add(m, id, path);
	cgroup_unlock();
	return c && c->path ? c : NULL;
}

static void on_new_cgroup(void *userdata, uint64_t id)
{
	struct tracer *t = userdata;
	const struct cgroup_info *c = born_cgroup(t, id, false);

	/* The kernel tells before it makes the cgroup visible: by its id, it
	 * may not be found yet. Its events then come to the daemon marked,
	 * and units_judge() names it. */
	if (!c)
		c = cgroup_lookup_new(id);
	if (!c)
		return;
	for (size_t i = 0; i < t->n_sels; i++)
		if (t->sels[i]->unit_set)
			write_verdict(t, t->sels[i], c);
	loader_unit_changed(t->ld);
}

static const struct sel_state *set_owner(const struct tracer *t, unsigned set)
{
	for (size_t i = 0; i < t->n_sels; i++)
		if (t->sels[i]->unit_set == set)
			return t->sels[i];
	for (size_t i = 0; i < t->n_retiring; i++)
		if (t->retiring[i] && t->retiring[i]->unit_set == set)
			return t->retiring[i];
	return NULL;
}

/* A cgroup the class program found below our mount's root: by the path
 * the kernel gave it at birth, else as every record's cgroup is named. */
static const struct cgroup_info *judged_cgroup(struct tracer *t, uint64_t id)
{
	const struct cgroup_info *c = t->cgroup_watch ? born_cgroup(t, id, true) : NULL;

	return c ? c : cgroup_lookup(id);
}

/* The consumer's question on a record the class program had no verdict for
 * (TRACERD_REC_UNIT_ASK): is cgroup id in set? The verdict is written too,
 * for the events that follow; records of one cgroup come in runs, so the
 * last answer is kept. */
static bool units_judge(void *userdata, unsigned set, uint64_t id)
{
	struct tracer *t = userdata;
	const struct sel_state *st = set_owner(t, set);
	const struct cgroup_info *c;

	if (!st)
		return false;	/* cannot be: its slots are attached */
	if (t->unit_last.valid && t->unit_last.set == set && t->unit_last.id == id)
		return t->unit_last.in;
	units_on_ready(t);	/* the births the watch has not passed on yet */
	c = judged_cgroup(t, id);
	if (!c) {
		if (!t->unit_unnamed++)
			log_warning("Unit=: an event of cgroup %llu, gone before tracerd could name "
				    "it, is rejected; counted in the statistics", (unsigned long long)id);
		return false;
	}
	t->unit_last.valid = true;
	t->unit_last.set = set;
	t->unit_last.id = id;
	t->unit_last.in = write_verdict(t, st, c);
	loader_unit_changed(t->ld);
	return t->unit_last.in;
}

static int start_watch(struct tracer *t)
{
	int r;

	if (t->cgroup_watch)
		return 0;
	t->cons->unit_judge = units_judge;
	t->cons->unit_userdata = t;
	r = cgroup_watch_new(&t->cgroup_watch, loader_unit_root_level(t->ld), on_new_cgroup, t);
	if (r < 0)
		log_warning("Unit=: cannot watch cgroup:cgroup_mkdir (%s): the first events of a "
			    "unit started from now on are judged by tracerd as they come, and rejected "
			    "(counted) if its cgroup is gone by then", strerror(-r));
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
	struct fill f = { t, st, hit };
	struct cgroup_map *m;

	cgroup_lock();
	m = cgroup_live();
	if (m) {
		cgroup_map_scan(m);	/* what was made since the last look */
		cgroup_map_each(m, fill_one, &f);
	}
	cgroup_unlock();
	loader_unit_changed(t->ld);
	return m ? 0 : -ENOMEM;
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
	t->unit_last.valid = false;	/* the set's number goes to the next */
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
