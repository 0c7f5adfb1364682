// SPDX-License-Identifier: GPL-2.0
/* The event registry: tracefs's list of events and the formats loaded from
 * it, and the config's synthetic events (issue 31), built from their
 * definitions. */
#include <sys/stat.h>
#include <unistd.h>
#include "resolve/registry.h"
#include "util.h"

/* What is wrong with tracefs, for someone who can fix it. Returns -EACCES
 * when it is there but we may not read it, -ENOMEDIUM when it is not there:
 * the daemon exits with EX_NOPERM or EX_UNAVAILABLE, which the unit does not
 * restart on. */
static int tracefs_error(int r, const char *path, struct diag *d)
{
	struct stat st;

	if (r == -EACCES) {
		if (stat(path, &st) < 0)
			st.st_mode = st.st_uid = st.st_gid = 0;
		diag_set(d, NULL, 0, 0, "cannot read tracefs at %s: %s (mode %04o, owner %u:%u; "
			 "tracerd runs as uid %u and needs CAP_DAC_READ_SEARCH to read it)",
			 path, strerror(-r), st.st_mode & 07777, st.st_uid, st.st_gid, geteuid());
		return -EACCES;
	}
	if (r == -EPERM)	/* only mount() gives this: no CAP_SYS_ADMIN, or seccomp */
		diag_set(d, NULL, 0, 0, "tracefs is not mounted at %s, and tracerd may not mount it "
			 "(%s): mount it first, as root: mount -t tracefs nodev %s",
			 path, strerror(-r), path);
	else if (r != -ENOENT)	/* mount() failed otherwise */
		diag_set(d, NULL, 0, 0, "tracefs is not mounted at %s, and mounting it failed: %s",
			 path, strerror(-r));
	else
		diag_set(d, NULL, 0, 0, "tracefs is not mounted at %s: %s", path, strerror(-r));
	return -ENOMEDIUM;
}

static bool synthetic_name(const char *sys_event)
{
	return !strncmp(sys_event, "synthetic:", 10);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* available: tracefs's events, then the synthetic ones, sorted as tracefs's
 * list is (resolve.c's globs and suggestions go through it). A synthetic
 * event of the kernel's (made in tracefs) is not listed: "synthetic:" is
 * tracerd's, and one of its names is never read from tracefs. */
static int list_synthetic(struct registry *reg)
{
	size_t k = 0;
	char **v;

	for (size_t i = 0; i < reg->n_available; i++) {
		if (synthetic_name(reg->available[i]))
			free(reg->available[i]);
		else
			reg->available[k++] = reg->available[i];
	}
	reg->n_available = k;
	v = realloc(reg->available, (k + reg->n_synth + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	reg->available = v;
	for (size_t i = 0; i < reg->n_synth; i++) {
		if (asprintf(&v[reg->n_available], "synthetic:%s", reg->synth[i]->name) < 0)
			return -ENOMEM;
		reg->n_available++;
	}
	qsort_safe(v, reg->n_available, sizeof(*v), cmp_str);
	return 0;
}

/* The current synthetic event named like def, or -1. */
static int synth_find(const struct registry *reg, const char *def)
{
	const char *name = def + strspn(def, " \t");
	size_t len = strcspn(name, " \t");

	for (size_t i = 0; i < reg->n_synth; i++)
		if (strlen(reg->synth[i]->name) == len && !strncmp(reg->synth[i]->name, name, len))
			return (int)i;
	return -1;
}

static int note_changed(struct registry *reg, const char *name)
{
	if (GROW(reg->synth_changed, reg->cap_synth_changed, reg->n_synth_changed) < 0 ||
	    !(reg->synth_changed[reg->n_synth_changed] = strdup(name)))
		return -ENOMEM;
	reg->n_synth_changed++;
	return 0;
}

/* The events of the new definitions: the current one where its format
 * (the id included) is the same, else a new one (fresh[i]). */
static int synth_build(struct registry *reg, const struct synth_def *synth, size_t n,
		       struct tp_event **v, bool *fresh, bool *kept, struct diag *d)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *text = NULL;
		struct tp_synth_error err;
		int id = TP_SYNTH_ID_FIRST + (int)i, k, r;

		if (i == TP_SYNTH_MAX)
			return diag_set(d, synth[i].pos.file, synth[i].pos.line, synth[i].pos.col,
					"more than %d synthetic events", TP_SYNTH_MAX), -E2BIG;
		r = tp_synthetic_format(synth[i].def, id, &text, &err);
		if (r == -EINVAL)
			return diag_set(d, synth[i].pos.file, synth[i].pos.line,
					synth[i].pos.col + err.off, "expected %s", err.expected);
		if (r < 0)
			return r;
		k = synth_find(reg, synth[i].def);
		if (k >= 0 && !kept[k] && !strcmp(reg->synth[k]->format_text, text)) {
			v[i] = reg->synth[k];
			kept[k] = true;
			continue;
		}
		r = tp_synthetic_parse(synth[i].def, id, &v[i], &err);
		if (r < 0)
			return r;
		fresh[i] = true;
	}
	return 0;
}

int registry_synthetic(struct registry *reg, const struct synth_def *synth, size_t n,
		       struct diag *d)
{
	_cleanup_free_ struct tp_event **v = calloc(n ? n : 1, sizeof(*v));
	_cleanup_free_ bool *fresh = calloc(n ? n : 1, sizeof(*fresh));
	_cleanup_free_ bool *kept = calloc(reg->n_synth ? reg->n_synth : 1, sizeof(*kept));
	int r;

	if (!v || !fresh || !kept)
		return -ENOMEM;
	r = synth_build(reg, synth, n, v, fresh, kept, d);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			if (fresh[i])
				tp_event_free(v[i]);
		return r;
	}
	strv_free(reg->synth_changed, reg->n_synth_changed);
	reg->synth_changed = NULL;
	reg->n_synth_changed = reg->cap_synth_changed = 0;
	for (size_t i = 0; i < reg->n_synth; i++) {
		if (kept[i])
			continue;
		if (GROW(reg->synth_old, reg->cap_synth_old, reg->n_synth_old) < 0)
			return -ENOMEM;
		reg->synth_old[reg->n_synth_old++] = reg->synth[i];
		if (note_changed(reg, reg->synth[i]->name) < 0)
			return -ENOMEM;
	}
	free(reg->synth);
	reg->synth = TAKE_PTR(v);
	reg->n_synth = n;
	for (size_t i = 0; i < n; i++)
		if (fresh[i] && (tp_classes_add(&reg->classes, reg->synth[i]) < 0 ||
				 note_changed(reg, reg->synth[i]->name) < 0))
			return -ENOMEM;
	return list_synthetic(reg);
}

bool registry_synthetic_changed(const struct registry *reg, const struct selection *s)
{
	for (size_t i = 0; i < reg->n_synth_changed; i++) {
		char full[256];

		snprintf(full, sizeof(full), "synthetic:%s", reg->synth_changed[i]);
		for (size_t g = 0; g < s->n_events; g++)
			if (tp_glob_match(s->events[g], full))
				return true;
	}
	return false;
}

int registry_new(struct registry **ret, const struct synth_def *synth, size_t n_synth,
		 struct diag *d)
{
	struct registry *reg = calloc(1, sizeof(*reg));
	const char *root;
	int r;

	if (!reg)
		return -ENOMEM;
	r = tracefs_find(&root);
	if (r < 0) {
		r = tracefs_error(r, root, d);
		goto fail;
	}
	r = tracefs_list_events(&reg->available, &reg->n_available);
	if (r < 0) {
		diag_set(d, NULL, 0, 0, "cannot list events in %s/available_events: %s%s", root,
			 strerror(-r), r == -EACCES ? " (tracerd needs CAP_DAC_READ_SEARCH)" : "");
		goto fail;
	}
	tp_classes_init(&reg->classes);
	r = registry_synthetic(reg, synth, n_synth, d);
	if (r < 0) {
		registry_free(reg, NULL);
		return r;
	}
	*ret = reg;
	return 0;
fail:
	free(reg);
	return r;
}

void registry_free(struct registry *r, void (*release)(struct tp_event *e))
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_events; i++) {
		if (release)
			release(r->events[i]);
		tp_event_free(r->events[i]);
	}
	free(r->events);
	for (size_t i = 0; i < r->n_synth + r->n_synth_old; i++) {
		struct tp_event *e = i < r->n_synth ? r->synth[i] : r->synth_old[i - r->n_synth];

		if (release)
			release(e);
		tp_event_free(e);
	}
	free(r->synth);
	free(r->synth_old);
	strv_free(r->synth_changed, r->n_synth_changed);
	tp_classes_free(&r->classes);
	strv_free(r->available, r->n_available);
	free(r);
}

int registry_event(struct registry *reg, const char *sys_event, struct tp_event **ret)
{
	_cleanup_free_ char *sys = strdup(sys_event);
	struct tp_event *e;
	char *name;
	int r;

	if (!sys)
		return -ENOMEM;
	name = strchr(sys, ':');
	if (!name)
		return -EINVAL;
	*name++ = 0;
	if (!strcmp(sys, "synthetic")) {
		for (size_t i = 0; i < reg->n_synth; i++)
			if (!strcmp(reg->synth[i]->name, name))
				return *ret = reg->synth[i], 0;
		return -ENOENT;
	}
	for (size_t i = 0; i < reg->n_events; i++)
		if (!strcmp(reg->events[i]->name, name) && !strcmp(reg->events[i]->system, sys))
			return *ret = reg->events[i], 0;
	r = tp_event_load(sys, name, &e);
	if (r < 0)
		return r;
	if (GROW(reg->events, reg->cap_events, reg->n_events) < 0) {
		tp_event_free(e);
		return -ENOMEM;
	}
	reg->events[reg->n_events++] = e;
	r = tp_classes_add(&reg->classes, e);
	if (r < 0)
		return r;
	*ret = e;
	return 0;
}
