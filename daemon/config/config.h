/* SPDX-License-Identifier: GPL-2.0 */
/* The configuration file: systemd-style INI with drop-ins in FILE.d/NAME.conf. */
#ifndef TRACERD_CONFIG_H
#define TRACERD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include "diag.h"

enum output { OUTPUT_JOURNAL, OUTPUT_STDOUT };

/* Where a value was written, for diagnostics about it later (filters). */
struct conf_pos {
	char *file;
	int line, col;
	char *source;		/* the whole line */
};

struct selection {
	char *name;
	char **events;		/* subsystem:event globs */
	int *event_lines, *event_cols;	/* where each glob was written */
	char *events_file;
	size_t n_events, cap_events;
	char *filter;		/* NULL or "" for all */
	struct conf_pos filter_pos;
	struct conf_pos pos;	/* the [Selection] header */
	int priority;		/* syslog level, default LOG_INFO */
	unsigned rate_limit;	/* events/s, 0 = none */
	unsigned rate_burst;
};

struct config {
	uint64_t ring_buffer_size;
	uint64_t wakeup_bytes;
	struct conf_pos wakeup_pos;	/* where WakeupBytes= was set, if it was */
	unsigned flush_interval_ms;
	unsigned stats_interval_sec;
	enum output output;
	bool raw_pointers;
	struct selection *sels;
	size_t n_sels, cap_sels;
	char **files;		/* what was read, in order */
	size_t n_files, cap_files;
};

int config_load(const char *path, struct config *c, struct diag *d);
/* Parses one file's text into c (applied on top of what c holds). */
int config_parse_text(struct config *c, const char *file, const char *text, struct diag *d);
int config_finish(struct config *c, struct diag *d);
void config_init(struct config *c);
void config_free(struct config *c);
bool selection_equal(const struct selection *a, const struct selection *b);

int parse_size(const char *s, uint64_t *ret);

#endif
