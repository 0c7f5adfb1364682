// SPDX-License-Identifier: GPL-2.0
/* Class inference (kernel-events/classes.c) over the captured formats: all
 * 2323 events grouped once with the running kernel's BTF (the fixtures were
 * captured from it), and once without (TRACERD_BTF names no file), where
 * events with identical layouts and print fmts share a class named after
 * the first of them. */
#include <stdlib.h>
#include "fixtures.h"
#include "test.h"

static struct tp_classes with_btf, without_btf;
static bool have_btf;

static struct tp_class *class_named(const struct tp_classes *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->classes[i]->name, name))
			return c->classes[i];
	return NULL;
}

/* Groups every fixture event; e->class then points into c. */
static int group_all(struct tp_classes *c)
{
	tp_classes_init(c);
	for (size_t i = 0; i < fx_n; i++) {
		int r = tp_classes_add(c, fx_events[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Every event in exactly one class, and that class lists it. */
static void every_event_in_one_class(const struct tp_classes *c, const char *what)
{
	size_t total = 0;

	for (size_t i = 0; i < c->n; i++) {
		total += c->classes[i]->n_events;
		for (size_t k = 0; k < c->classes[i]->n_events; k++)
			if (c->classes[i]->events[k]->class != c->classes[i]) {
				EXPECT(0, "%s: %s listed in %s but points elsewhere", what,
				       c->classes[i]->events[k]->name, c->classes[i]->name);
				return;
			}
	}
	EXPECT(total == fx_n && fx_n == 2323, "%s: %zu events in classes, %zu captured", what, total, fx_n);
}

static void btf_classes(void)
{
	struct tp_class *k;
	const char *const fc[] = { "ext4_fc_track_create", "ext4_fc_track_link", "ext4_fc_track_unlink" };

	unsetenv("TRACERD_BTF");
	EXPECT(group_all(&with_btf) == 0, "grouping failed");
	have_btf = with_btf.btf != NULL;
	EXPECT(have_btf, "no kernel BTF (/sys/kernel/btf/vmlinux)");
	if (!have_btf)
		return;
	every_event_in_one_class(&with_btf, "BTF");

	/* DECLARE_EVENT_CLASS(ext4_fc_track_dentry) with three events. */
	k = class_named(&with_btf, "ext4_fc_track_dentry");
	EXPECT(k && k->from_btf && k->n_events == 3, "ext4_fc_track_dentry: %zu events",
	       k ? k->n_events : 0);
	for (size_t i = 0; i < ARRAY_SIZE(fc); i++) {
		struct tp_event *e = fx_find("ext4", fc[i]);

		EXPECT(e && e->class == k, "%s in %s", fc[i], e && e->class ? e->class->name : "-");
	}
	/* Its neighbours have classes of their own. */
	EXPECT(fx_find("ext4", "ext4_fc_track_inode")->class != k, "ext4_fc_track_inode joined");
	EXPECT(fx_find("ext4", "ext4_fc_track_range")->class != k, "ext4_fc_track_range joined");

	k = class_named(&with_btf, "xfs_da_class");
	EXPECT(k && k->n_events == 45, "xfs_da_class: %zu events, want 45", k ? k->n_events : 0);
	EXPECT(fx_find("xfs", "xfs_da_split")->class == k, "xfs_da_split in %s",
	       fx_find("xfs", "xfs_da_split")->class->name);

	/* An event that is its own class (TRACE_EVENT) is named after itself. */
	k = fx_find("sched", "sched_switch")->class;
	EXPECT(k->from_btf && !strcmp(k->name, "sched_switch") && k->n_events == 1,
	       "sched_switch in %s (%zu events)", k->name, k->n_events);

	/* syscalls: as the kernel has them, two classes for 720 events. */
	k = class_named(&with_btf, "syscall_enter");
	EXPECT(k && k->n_events == 360, "syscall_enter: %zu", k ? k->n_events : 0);
	k = class_named(&with_btf, "syscall_exit");
	EXPECT(k && k->n_events == 360, "syscall_exit: %zu", k ? k->n_events : 0);
	EXPECT(fx_find("syscalls", "sys_enter_openat")->class == class_named(&with_btf, "syscall_enter") &&
	       fx_find("syscalls", "sys_exit_openat")->class == k, "openat's classes");
	{
		size_t unnamed = 0;

		for (size_t i = 0; i < with_btf.n; i++)
			unnamed += !with_btf.classes[i]->from_btf;
		printf("# with BTF: %zu classes, %zu not named by BTF\n", with_btf.n, unnamed);
	}
}

static void layout_classes_without_btf(void)
{
	struct tp_class *k, *exit_class;
	size_t from_btf = 0, exits = 0;

	setenv("TRACERD_BTF", "/nonexistent/vmlinux", 1);
	EXPECT(group_all(&without_btf) == 0, "grouping failed");
	unsetenv("TRACERD_BTF");
	EXPECT(without_btf.btf == NULL, "BTF loaded from a file that is not there");
	every_event_in_one_class(&without_btf, "layouts");
	for (size_t i = 0; i < without_btf.n; i++)
		from_btf += without_btf.classes[i]->from_btf;
	EXPECT(from_btf == 0, "%zu classes named by BTF without BTF", from_btf);

	/* Same layout and print fmt: one class, named after the first event. */
	k = fx_find("ext4", "ext4_fc_track_create")->class;
	EXPECT(!strcmp(k->name, "ext4_fc_track_create") && k->n_events == 3 &&
	       fx_find("ext4", "ext4_fc_track_link")->class == k &&
	       fx_find("ext4", "ext4_fc_track_unlink")->class == k,
	       "ext4_fc_track_create's class %s has %zu events", k->name, k->n_events);

	/* Every sys_exit_* has the same fields and print fmt; the sys_enter_*
	 * differ in their arguments, so they share only when those agree. */
	exit_class = fx_find("syscalls", "sys_exit_openat")->class;
	for (size_t i = 0; i < fx_n; i++)
		if (!strncmp(fx_events[i]->name, "sys_exit_", 9))
			exits += fx_events[i]->class == exit_class;
	EXPECT(exits == 360 && exit_class->n_events == 360, "sys_exit_* in one class: %zu of 360 (%zu)",
	       exits, exit_class->n_events);
	EXPECT(fx_find("syscalls", "sys_enter_openat")->class != fx_find("syscalls", "sys_enter_read")->class,
	       "sys_enter_openat and sys_enter_read share a class");

	/* A print fmt alone keeps layouts apart: sched_switch is its own. */
	EXPECT(fx_find("sched", "sched_switch")->class->n_events == 1, "sched_switch shares");
	if (have_btf)
		EXPECT(without_btf.n > with_btf.n, "%zu layout classes, %zu BTF classes", without_btf.n,
		       with_btf.n);
	EXPECT(without_btf.n == 1104, "%zu layout classes, want 1104", without_btf.n);
}

/* By layout alone, xfs_da_class's 45 events form one class again, the
 * same 45 that BTF names, named after the first of them in capture order. */
static void xfs_da_class_by_layout(void)
{
	struct tp_class *k = fx_find("xfs", "xfs_da_split")->class;
	struct tp_class *b = class_named(&with_btf, "xfs_da_class");

	EXPECT(!k->from_btf && !strcmp(k->name, "xfs_da_fixhashpath") && k->n_events == 45,
	       "xfs_da_split's layout class: %s, %zu events", k->name, k->n_events);
	for (size_t i = 0; b && i < b->n_events; i++)
		if (b->events[i]->class != k) {
			EXPECT(0, "%s is in xfs_da_class but not in %s", b->events[i]->name, k->name);
			break;
		}
}

int main(void)
{
	fx_load();
	RUN(btf_classes);
	RUN(layout_classes_without_btf);
	RUN(xfs_da_class_by_layout);
	tp_classes_free(&with_btf);
	tp_classes_free(&without_btf);
	for (size_t i = 0; i < fx_n; i++)
		tp_event_free(fx_events[i]);
	free(fx_events);
	return TEST_EXIT();
}
