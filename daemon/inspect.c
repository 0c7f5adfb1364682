// SPDX-License-Identifier: GPL-2.0
/* The inspection commands: --list-events, --list-classes, --describe,
 * answered from the event registry alone. */
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

		printf("%s%s (%zu event%s):", c->name, c->from_btf ? "" : " [by layout]",
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
	       e->class->from_btf ? "" : " (by layout)", e->fixed_size);
	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		printf("  %-28s %-24s offset %-4u size %-3u %s %s%s\n", f->name, f->type,
		       f->offset, f->size, f->is_signed ? "signed  " : "unsigned",
		       kind_name(f->kind), f->is_string ? " string" : "");
	}
	printf("print fmt: %s\n", e->print_fmt);
	r = render_prepare(e, &(struct render_opts){ 0 });
	if (r < 0)
		return r;
	render_describe(e, stdout);
	return 0;
}
