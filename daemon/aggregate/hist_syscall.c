// SPDX-License-Identifier: GPL-2.0
/* .syscall: a syscall number's name as the kernel's hist file prints it
 * ("sys_read"). The numbers come from the UAPI header at build time
 * (build/syscall_names.h, made from <asm/unistd_64.h>: the numbers are ABI
 * and only ever added to); where the kernel's own name differs by its
 * "new" prefix (fstat is sys_newfstat), tracefs's syscalls: events say so. */
#include <stdio.h>
#include <unistd.h>
#include "hist.h"
#include "util.h"

static const char *const uapi_names[] = {
#include "syscall_names.h"
};

static char *names[ARRAY_SIZE(uapi_names)];
static const char *const *test_names;
static size_t n_test_names;
static bool loaded;

void hist_syscall_names_set(const char *const *v, size_t n)
{
	test_names = v;
	n_test_names = n;
}

/* "sys_fstat" is "sys_newfstat" where tracefs has sys_enter_newfstat only. */
static char *kernel_name(const char *uapi, const char *tracefs)
{
	char path[512], *r = NULL;

	if (tracefs) {
		snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%s", tracefs, uapi);
		if (access(path, F_OK) < 0) {
			snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_new%s", tracefs, uapi);
			if (access(path, F_OK) == 0 && asprintf(&r, "sys_new%s", uapi) < 0)
				r = NULL;
		}
	}
	if (!r && asprintf(&r, "sys_%s", uapi) < 0)
		r = NULL;
	return r;
}

static void load(void)
{
	const char *tracefs = NULL;

	loaded = true;
	if (tracefs_find(&tracefs) < 0)
		tracefs = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(uapi_names); i++)
		if (uapi_names[i])
			names[i] = kernel_name(uapi_names[i], tracefs);
}

const char *hist_syscall_name(uint64_t nr)
{
	if (test_names)
		return nr < n_test_names ? test_names[nr] : NULL;
	if (!loaded)
		load();
	return nr < ARRAY_SIZE(names) ? names[nr] : NULL;
}
