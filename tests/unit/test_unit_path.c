// SPDX-License-Identifier: GPL-2.0
/* kernel-events/unit_path.c: systemd's names for cgroup paths, by the
 * rules of its cgroup-util.c (the cases of systemd's test-cgroup-util.c
 * among them), and Unit= words as systemctl takes them. */
#include <errno.h>
#include "kernel-events/unit_path.h"
#include "test.h"

struct pcase {
	const char *path, *unit, *slice, *user_unit;
};

static const struct pcase paths[] = {
	{ "/system.slice/nginx.service", "nginx.service", "system.slice", "" },
	{ "/system.slice/nginx.service/", "nginx.service", "system.slice", "" },
	{ "/system.slice/nginx.service/worker", "nginx.service", "system.slice", "" },
	{ "/system.slice/getty@tty2.service", "getty@tty2.service", "system.slice", "" },
	{ "/system.slice/system-getty.slice/getty@tty2.service", "getty@tty2.service",
	  "system-getty.slice", "" },
	{ "/system.slice/system-getty.slice/getty@tty2.service/xxx", "getty@tty2.service",
	  "system-getty.slice", "" },
	{ "/system.slice/getty@.service", "", "system.slice", "" },	/* a template: no unit */
	{ "/system.slice", "", "system.slice", "" },
	{ "/system.slice/", "", "system.slice", "" },
	{ "/", "", "-.slice", "" },
	{ "", "", "-.slice", "" },
	{ "/init.scope", "init.scope", "-.slice", "" },
	{ "/foo.service", "foo.service", "-.slice", "" },
	{ "/foo.service/bar", "foo.service", "-.slice", "" },
	{ "/_cpu.service", "cpu.service", "-.slice", "" },	/* cg_escape()d */
	{ "/system.slice/_cpu.service", "cpu.service", "system.slice", "" },
	{ "/a.slice/a-b.slice/a-b-c.slice/x.service", "x.service", "a-b-c.slice", "" },
	{ "/a.slice/x.slice", "", "x.slice", "" },
	{ "/notaunit", "", "-.slice", "" },
	{ "/system.slice/notaunit", "", "system.slice", "" },
	{ "/system.slice/foo.bar", "", "system.slice", "" },		/* no such unit type */
	{ "/system.slice/@x.service", "", "system.slice", "" },
	{ "//system.slice//nginx.service", "nginx.service", "system.slice", "" },
	/* User managers and sessions. */
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service",
	  "user@1000.service", "user-1000.slice", "foo.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/foo.service",
	  "user@1000.service", "user-1000.slice", "foo.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.slice/foo@x.service/sub",
	  "user@1000.service", "user-1000.slice", "foo@x.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/init.scope",
	  "user@1000.service", "user-1000.slice", "init.scope" },
	{ "/user.slice/user-1000.slice/user@1000.service",
	  "user@1000.service", "user-1000.slice", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice",
	  "user@1000.service", "user-1000.slice", "" },
	{ "/user.slice/user-1000.slice/user@abc.service/foo.service",	/* no uid */
	  "user@abc.service", "user-1000.slice", "" },
	{ "/user.slice/user-1000.slice/session-2.scope", "session-2.scope", "user-1000.slice", "" },
	{ "/user.slice/user-1000.slice/session-2.scope/foo.service",
	  "session-2.scope", "user-1000.slice", "foo.service" },
	{ "/user.slice/user-1000.slice/session-c1.scope", "session-c1.scope", "user-1000.slice", "" },
	{ "/user.slice/user-1002.slice/user@1002.service/session.slice/dbus.service",
	  "user@1002.service", "user-1002.slice", "dbus.service" },
	/* Containers keep their scope or service; the payload is not a unit of ours. */
	{ "/machine.slice/systemd-nspawn@box.service/payload/system.slice/foo.service",
	  "systemd-nspawn@box.service", "machine.slice", "" },
	{ "/machine.slice/libpod-0123456789abcdef.scope/container",
	  "libpod-0123456789abcdef.scope", "machine.slice", "" },
	{ "/machine.slice/machine-qemu\\x2d1\\x2dvm.scope", "machine-qemu\\x2d1\\x2dvm.scope",
	  "machine.slice", "" },
	{ "/system.slice/docker-abc.scope", "docker-abc.scope", "system.slice", "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-1.scope",
	  "cri-containerd-1.scope", "kubepods-burstable-pod1.slice", "" },
	{ "/system.slice/tracerd-test-a.service", "tracerd-test-a.service", "system.slice", "" },
	{ "/tracerd-units.slice/tracerd-units-a.service", "tracerd-units-a.service",
	  "tracerd-units.slice", "" },
};

static void test_paths(void)
{
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct unit_names n;

		unit_path_parse(paths[i].path, &n);
		EXPECT(!strcmp(n.unit, paths[i].unit) && !strcmp(n.slice, paths[i].slice) &&
		       !strcmp(n.user_unit, paths[i].user_unit),
		       "%s: unit '%s' slice '%s' user unit '%s', want '%s' '%s' '%s'",
		       paths[i].path, n.unit, n.slice, n.user_unit, paths[i].unit,
		       paths[i].slice, paths[i].user_unit);
	}
}

static void test_names(void)
{
	static const struct { const char *s; unsigned flags; bool valid; } c[] = {
		{ "foo.service", UNIT_NAME_PLAIN, true },
		{ "foo.service", UNIT_NAME_INSTANCE, false },
		{ "foo@bar.service", UNIT_NAME_INSTANCE, true },
		{ "foo@bar.service", UNIT_NAME_PLAIN, false },
		{ "foo@.service", UNIT_NAME_TEMPLATE, true },
		{ "foo@.service", UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE, false },
		{ "foo@a@b.service", UNIT_NAME_INSTANCE, true },
		{ "@x.service", UNIT_NAME_INSTANCE, false },
		{ ".service", UNIT_NAME_PLAIN, false },
		{ "foo", UNIT_NAME_PLAIN, false },
		{ "foo.", UNIT_NAME_PLAIN, false },
		{ "foo.bar", UNIT_NAME_PLAIN, false },
		{ "foo bar.service", UNIT_NAME_PLAIN, false },
		{ "a\\x2db.mount", UNIT_NAME_PLAIN, true },
		{ "-.slice", UNIT_NAME_PLAIN, true },
		{ "-.mount", UNIT_NAME_PLAIN, true },
		{ "x.automount", UNIT_NAME_PLAIN, true },
		{ "x.scope", UNIT_NAME_PLAIN, true },
		{ "x:y.socket", UNIT_NAME_PLAIN, true },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		EXPECT(unit_name_valid(c[i].s, strlen(c[i].s), c[i].flags) == c[i].valid,
		       "%s flags %u: want %d", c[i].s, c[i].flags, c[i].valid);
}

static void test_globs(void)
{
	static const struct { const char *in, *out; long col; } c[] = {
		{ "nginx.service", "nginx.service", -1 },
		{ "nginx", "nginx.service", -1 },
		{ "getty@tty1", "getty@tty1.service", -1 },
		{ "php-fpm*.service", "php-fpm*.service", -1 },
		{ "*", "*", -1 },
		{ "user@[0-9]*.service", "user@[0-9]*.service", -1 },
		{ "system.slice", "system.slice", -1 },
		{ "foo.bar", "foo.bar.service", -1 },	/* systemctl's mangling too */
		{ "ngi nx.service", NULL, 3 },
		{ "nginx.service/", NULL, 13 },
		{ "@x.service", NULL, 0 },
		{ "getty@.service", NULL, 5 },
		{ "", NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char out[UNIT_NAME_MAX];
		size_t col = 99;
		int r = unit_glob_normalize(c[i].in, out, sizeof(out), &col);

		if (c[i].out) {
			EXPECT(r == 0, "%s: %d", c[i].in, r);
			if (r == 0)
				EXPECT_STREQ(out, c[i].out);
		} else {
			EXPECT(r == -EINVAL && (long)col == c[i].col, "%s: r %d col %zu, want col %ld",
			       c[i].in, r, col, c[i].col);
		}
	}
}

int main(void)
{
	RUN(test_paths);
	RUN(test_names);
	RUN(test_globs);
	return TEST_EXIT();
}
