/* SPDX-License-Identifier: GPL-2.0 */
/* tracerd --read: stored events printed as --foreground prints them, or as
 * JSON with the journal's field names. */
#ifndef TRACERD_READ_H
#define TRACERD_READ_H

#include <stdbool.h>
#include <stdint.h>

struct read_opts {
	char **paths;
	size_t n_paths;
	bool json, follow, raw_pointers;
	const char *events;		/* globs, space or comma separated; NULL: all */
	const char *filter;
	int64_t since_ns, until_ns;	/* wall clock; INT64_MIN / INT64_MAX: open */
};

/* "@EPOCH[.frac]", "YYYY-MM-DD[ HH:MM[:SS]]", "HH:MM[:SS]" (today), "now",
 * "-N{s,min,h,d}" (ago): wall-clock ns; -EINVAL if none of those. */
int read_parse_time(const char *s, int64_t *ret);
/* The exit status: 0, 1 if a chunk was skipped (torn or corrupt), 2 on error. */
int read_store(const struct read_opts *o);

#endif
