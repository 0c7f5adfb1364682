/* SPDX-License-Identifier: GPL-2.0 */
/* tracerd --read: stored events printed as --foreground prints them, or as
 * JSON with the journal's field names. */
#ifndef TRACERD_READ_H
#define TRACERD_READ_H

#include <stdbool.h>
#include <stdint.h>

/* A --since or --until time. */
struct read_time {
	int64_t ns;			/* wall clock; INT64_MIN / INT64_MAX: open */
	int64_t span_ns;		/* the unit of its last digit: --until takes it whole */
	bool monotonic;			/* ns is CLOCK_MONOTONIC of the writing boot */
};

struct read_opts {
	char **paths;
	size_t n_paths;
	bool json, follow, raw_pointers;
	const char *events;		/* globs, space or comma separated; NULL: all */
	const char *filter;
	char **units;			/* --unit: globs as Unit= takes them; none: all */
	size_t n_units;
	struct read_time since, until;
	const char *trace_dat;		/* write the records there (trace.dat), not text */
};

/* "SECONDS[.frac]" (monotonic, as tracerd prints it), "@EPOCH[.frac]",
 * "YYYY-MM-DD[ HH:MM[:SS[.frac]]]", "HH:MM[:SS[.frac]]" (today), "now",
 * "-N{s,min,h,d}" (ago); -EINVAL if none of those. */
int read_parse_time(const char *s, struct read_time *ret);
/* -ERANGE if until is before since (both of one clock). */
int read_time_range(const struct read_time *since, const struct read_time *until);
/* The exit status: 0, 1 if a chunk was skipped (torn or corrupt), 2 on error. */
int read_store(const struct read_opts *o);

#endif
