// SPDX-License-Identifier: GPL-2.0
/* The inspection commands: --list-events, --list-classes, --describe,
 * answered from the event registry alone, and --version. */
#include <dlfcn.h>
#include <limits.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <traceevent/event-parse.h>
#include "inspect.h"
#include "render/render.h"
#include "util.h"

/* An empty listing and an exit status of 0 would read as "this kernel has
 * no such events" when the pattern was mistyped: say which. */
static int check_glob(struct registry *reg, const char *glob)
{
	char near[512];
	int at;
	size_t n = 0;

	if (!glob)
		return 0;
	at = tp_glob_check(glob);
	if (at >= 0) {
		fprintf(stderr, "tracerd: '%s' is not a valid glob: the '[' at column %d has no closing ']'\n",
			glob, at + 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < reg->n_available; i++)
		n += tp_glob_match(glob, reg->available[i]);
	if (n)
		return 0;
	suggest_events(reg, glob, near, sizeof(near));
	fprintf(stderr, "tracerd: no event matches '%s'%s%s\n", glob, near[0] ? "; did you mean " : "", near);
	return -ENOENT;
}

int inspect_list_events(struct registry *reg, const char *glob)
{
	int r = check_glob(reg, glob);

	if (r < 0)
		return r;
	for (size_t i = 0; i < reg->n_available; i++)
		if (!glob || tp_glob_match(glob, reg->available[i]))
			printf("%s\n", reg->available[i]);
	return 0;
}

int inspect_list_classes(struct registry *reg, const char *glob)
{
	int r = check_glob(reg, glob);

	if (r < 0)
		return r;
	for (size_t i = 0; i < reg->n_available; i++) {
		struct tp_event *e;

		if (glob && !tp_glob_match(glob, reg->available[i]))
			continue;
		if (registry_event(reg, reg->available[i], &e) < 0)
			fprintf(stderr, "tracerd: cannot read the format of %s\n", reg->available[i]);
	}
	for (size_t i = 0; i < reg->classes.n; i++) {
		const struct tp_class *c = reg->classes.classes[i];

		printf("%s%s (%zu event%s):", c->name,
		       c->from_btf ? "" : tp_event_is_synthetic(c->events[0]) ? " [synthetic]" : " [by layout]",
		       c->n_events, c->n_events == 1 ? "" : "s");
		for (size_t k = 0; k < c->n_events; k++)
			printf(" %s:%s", c->events[k]->system, c->events[k]->name);
		printf("\n");
	}
	return 0;
}

static const char *kind_name(enum tp_field_kind k)
{
	static const char *const names[] = {
		[TP_FIELD_SCALAR] = "scalar", [TP_FIELD_ARRAY] = "array",
		[TP_FIELD_DATA_LOC] = "__data_loc", [TP_FIELD_REL_LOC] = "__rel_loc",
		[TP_FIELD_FLEX] = "flexible array",
	};
	return names[k];
}

static size_t subsystem_events(struct registry *reg, const char *sys)
{
	size_t n = 0, len = strlen(sys);

	for (size_t i = 0; i < reg->n_available; i++)
		n += !strncmp(reg->available[i], sys, len) && reg->available[i][len] == ':';
	return n;
}

int inspect_describe(struct registry *reg, const char *sys_event)
{
	struct tp_event *e;
	int r = registry_event(reg, sys_event, &e);

	if (r < 0 && !strchr(sys_event, ':') && subsystem_events(reg, sys_event)) {
		fprintf(stderr, "tracerd: '%s' is a subsystem, expected SUBSYSTEM:EVENT; "
			"tracerd --list-events '%s:*' lists its %zu events\n",
			sys_event, sys_event, subsystem_events(reg, sys_event));
		return r;
	}
	if (r < 0) {
		char near[512];

		suggest_events(reg, sys_event, near, sizeof(near));
		fprintf(stderr, "tracerd: no event '%s'%s%s\n", sys_event,
			near[0] ? "; did you mean " : "", near);
		return r;
	}
	printf("event:  %s:%s (id %d)\nclass:  %s%s\nsize:   %u bytes fixed\nfields:\n",
	       e->system, e->name, e->id, e->class->name,
	       e->class->from_btf ? "" : tp_event_is_synthetic(e) ? " (synthetic)" : " (by layout)",
	       e->fixed_size);
	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		printf("  %-28s %-24s offset %-4u size %-3u %s %s%s\n", f->name, f->type,
		       f->offset, f->size, f->is_signed ? "signed  " : "unsigned",
		       kind_name(f->kind), f->is_string ? " string" : "");
	}
	printf("print fmt: %s\n", e->print_fmt);
	r = render_prepare(e);
	if (r < 0)
		return r;
	render_describe(e, stdout);
	return 0;
}

/* --version: what a bug report needs, the libraries and kernel this process
 * actually runs with, which may differ from the ones it was built against
 * (a distribution update, a binary copied to another machine). */
/* The Makefile passes these from pkg-config; a build without them still
 * prints its lines. */
#ifndef LIBSYSTEMD_VERSION
#define LIBSYSTEMD_VERSION "unknown"
#endif
#ifndef LIBTRACEEVENT_VERSION
#define LIBTRACEEVENT_VERSION "unknown"
#endif

/* The file name of the shared object the loader took sym from, resolved
 * past the soname link ("libbpf.so.1" -> "libbpf.so.1.1.2"); false when it
 * is not a PREFIX.so file (linked statically). */
static bool loaded_object(const void *sym, const char *prefix, char *buf, size_t size)
{
	char real[PATH_MAX];
	const char *path, *base;
	Dl_info info;

	if (!dladdr(sym, &info) || !info.dli_fname)
		return false;
	path = realpath(info.dli_fname, real) ? real : info.dli_fname;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, prefix, strlen(prefix)) || strncmp(base + strlen(prefix), ".so", 3))
		return false;
	snprintf(buf, size, "%s", base);
	return true;
}

void inspect_version(FILE *f)
{
	char so[PATH_MAX];
	struct utsname u;

	fprintf(f, "tracerd %s\n", TRACERD_VERSION);
	/* libbpf has a run-time version call; the other two do not. */
	fprintf(f, "libbpf %u.%u (running", libbpf_major_version(), libbpf_minor_version());
	if (loaded_object((const void *)libbpf_major_version, "libbpf", so, sizeof(so)))
		fprintf(f, " %s", so);
	fprintf(f, ")\n");
	/* libsystemd's file name is its ABI (libsystemd.so.0.35.0), not the
	 * systemd release: only the version built against can be named. */
	fprintf(f, "libsystemd %s (built with)\n", LIBSYSTEMD_VERSION);
	/* libtraceevent's file name does follow its release (.so.1.7.1). */
	fprintf(f, "libtraceevent %s (built with", LIBTRACEEVENT_VERSION);
	if (loaded_object((const void *)tep_alloc, "libtraceevent", so, sizeof(so)))
		fprintf(f, "; running %s", so);
	fprintf(f, ")\n");
	if (uname(&u) == 0)
		fprintf(f, "kernel %s %s (running)\n", u.release, u.machine);
	else
		fprintf(f, "kernel unknown (running)\n");
}
