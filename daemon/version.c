// SPDX-License-Identifier: GPL-2.0
/* --version: what a bug report needs, the libraries and kernel this process
 * actually runs with, which may differ from the ones it was built against
 * (a distribution update, a binary copied to another machine). */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <traceevent/event-parse.h>
#include "version.h"

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

void version_print(FILE *f)
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
