// SPDX-License-Identifier: GPL-2.0
/* The event registry: tracefs's list of events and the formats loaded from it. */
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

int registry_new(struct registry **ret, struct diag *d)
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
