/* SPDX-License-Identifier: GPL-2.0 */
/* systemd's names for a cgroup path, by the rules of its cgroup-util.c
 * (cg_path_get_unit, cg_path_get_slice, cg_path_get_user_unit), which need
 * no bus: the leading slices are skipped, the next component is the unit;
 * below a user manager (user@UID.service) or a session scope, the same
 * again gives the user unit. And unit names and Unit= globs as systemctl
 * takes them. Pure functions: no file is read. */
#ifndef TRACERD_UNIT_PATH_H
#define TRACERD_UNIT_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define UNIT_NAME_MAX 256	/* systemd's, NUL included */

enum {
	UNIT_NAME_PLAIN = 1 << 0,	/* foo.service */
	UNIT_NAME_INSTANCE = 1 << 1,	/* foo@bar.service */
	UNIT_NAME_TEMPLATE = 1 << 2,	/* foo@.service */
};

/* Each "" when the path has none. */
struct unit_names {
	char unit[UNIT_NAME_MAX];
	char slice[UNIT_NAME_MAX];	/* "-.slice" when the path has no slice */
	char user_unit[UNIT_NAME_MAX];
};

bool unit_name_valid(const char *s, size_t n, unsigned flags);
void unit_path_parse(const char *path, struct unit_names *ret);

/* A Unit= word as systemctl reads it: a glob is kept as it is, a name
 * without a unit type suffix gets ".service". Returns 0 and the name in
 * out, or -EINVAL with *bad_col the 0-based column of what is wrong. */
int unit_glob_normalize(const char *word, char *out, size_t size, size_t *bad_col);
bool unit_glob_is_glob(const char *s);
/* Unit=: is the cgroup at path (with names, its unit_path_parse()) in one
 * of the units globs name (fnmatch, as systemctl), or below one? Its unit,
 * its user unit, or a slice it lies in. */
bool unit_path_match(char *const *globs, size_t n, const char *path, const struct unit_names *names);

#endif
