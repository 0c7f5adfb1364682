/* SPDX-License-Identifier: GPL-2.0 */
/* The configuration file: systemd-style INI with drop-ins in FILE.d/NAME.conf. */
#ifndef TRACERD_CONFIG_H
#define TRACERD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "diag.h"

/* OUTPUT_DAEMON: a selection's records go where [Daemon] Output= says.
 * OUTPUT_RECORDER: into the flight recorder's window ([Recorder]), a
 * selection's only. */
enum output { OUTPUT_JOURNAL, OUTPUT_STDOUT, OUTPUT_STORE, OUTPUT_RECORDER, OUTPUT_DAEMON };

/* Trigger=: what an accepted event of the selection does besides its Output=. */
enum sel_trigger { TRIGGER_NONE, TRIGGER_SNAPSHOT };

/* StackTrace=: the bits are tracerd_record.h's TRACERD_STACK_KERNEL and _USER. */
enum stack_trace { STACK_TRACE_NO, STACK_TRACE_KERNEL, STACK_TRACE_USER, STACK_TRACE_BOTH };

/* In the order of the store's codec numbers (docs/STORE.md). */
enum store_compression { COMPRESSION_NONE, COMPRESSION_ZLIB, COMPRESSION_ZSTD };

/* [Store]: the event store's files (docs/STORE.md). */
struct store_config {
	char *directory;
	uint64_t max_use, max_file_size;
	unsigned max_file_sec;
	unsigned sync_interval_sec;
	enum store_compression compression;
};

/* [Recorder]: the flight recorder's window (Output=recorder) and its
 * snapshots, written under [Store] Directory=. */
struct recorder_config {
	uint64_t size;			/* compressed bytes the window keeps */
	unsigned keep_after_sec;	/* recorded into a snapshot after its trigger */
	unsigned min_interval_sec;	/* a trigger sooner after a snapshot is counted */
	unsigned max_snapshots;		/* the newest kept on disk; 0: all */
};

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
	enum output output;	/* OUTPUT_DAEMON: [Daemon] Output= */
	char *aggregate;	/* Aggregate=: a hist trigger; NULL or "" for none */
	struct conf_pos aggregate_pos;
	unsigned aggregate_interval_sec;	/* a dump each interval; 0: only at stop */
	bool syscall_strings;	/* SyscallStrings=: read syscalls' user strings */
	int stack_trace;	/* StackTrace=: enum stack_trace, TRACERD_STACK_* bits */
	struct conf_pos stack_trace_pos;
	char **units;		/* Unit=: unit globs as systemctl takes them; none: every task */
	size_t n_units, cap_units;
	struct conf_pos units_pos;	/* the last Unit= line, for the warning of a glob
					 * that matches nothing running */
	int trigger;		/* Trigger=: enum sel_trigger */
	struct conf_pos trigger_pos;	/* for config_finish()'s check */
};

/* [Synthetic] Event=: a synthetic event's definition in the kernel's
 * synthetic_events syntax (kernel-events/synthetic.c), checked as read. */
struct synth_def {
	char *def;		/* as written: "wakeup_latency u64 lat; pid_t pid" */
	struct conf_pos pos;	/* of its first byte, for errors pointing into it */
};

struct config {
	uint64_t ring_buffer_size;
	uint64_t wakeup_bytes;
	struct conf_pos wakeup_pos;	/* where WakeupBytes= was set, if it was */
	unsigned flush_interval_ms;
	unsigned stats_interval_sec;
	unsigned variable_max_age_sec;	/* inter-event triggers' starts age out */
	char *metrics_listen;		/* [Metrics] Listen=: where GET /metrics is served; NULL: off */
	unsigned metrics_max_series;	/* [Metrics] MaxSeries=: per histogram */
	enum output output;
	bool raw_pointers;
	struct store_config store;
	struct recorder_config recorder;
	struct selection *sels;
	size_t n_sels, cap_sels;
	struct synth_def *synth;	/* in the order written; event i's id is TP_SYNTH_ID_FIRST + i */
	size_t n_synth, cap_synth;
	char **files;		/* what was read, in order */
	size_t n_files, cap_files;
};

int config_load(const char *path, struct config *c, struct diag *d);

/* A [Selection] key given on the command line (tracerd -e GLOB --filter
 * EXPR), or a [Synthetic] Event= (--synthetic DEF): item is the key, value
 * its value as a file would hold it. */
struct config_arg {
	const struct config_item *item;
	const char *value;
};
/* The name of the command line's selection unless --name gives one. */
#define CONFIG_ARGS_NAME "cmdline"
/* config_load, then (args of [Selection] keys given) one selection made of
 * them in place of the file's selections; the file's [Daemon] and [Store]
 * stay, and args' synthetic events are added to the file's. path NULL: no
 * file, every [Daemon] and [Store] key at its default. A diagnostic about an
 * argument names its option as the file, line 1: "--filter:1:12: ...". */
int config_load_args(const char *path, const struct config_arg *args, size_t n_args,
		     struct config *c, struct diag *d);
/* args' [Synthetic] definitions alone, without a file or a selection: for
 * --list-events and --describe. */
int config_load_synthetic(const struct config_arg *args, size_t n_args, struct config *c,
			  struct diag *d);
/* Parses one file's text into c (applied on top of what c holds). */
int config_parse_text(struct config *c, const char *file, const char *text, struct diag *d);
int config_finish(struct config *c, struct diag *d);
/* Every [Daemon] key at its table default (config_table.c). */
void config_init(struct config *c);
void config_free(struct config *c);

int parse_size(const char *s, uint64_t *ret);

/* The keys, one table (config_table.c): it drives parsing, defaults, "did
 * you mean" and the list of expected keys in errors, and is read here so
 * that tracerd.conf(5) can be generated or checked from it. */
struct config_parser;		/* config.c's state while it reads one file */
struct config_item;

/* A value type: how a value is read into its field, and what it must look
 * like. */
struct config_type {
	const char *name;	/* as tracerd.conf(5) calls it */
	/* Stores v (written at column col) into field, which lies in section
	 * (a struct config or a struct selection); negative errno, with the
	 * diagnostic set, for a bad value. */
	int (*parse)(struct config_parser *p, const struct config_item *it, const char *v, int col,
		     void *field, void *section);
	/* "a whole number from 1 to 10000": what follows "expected" in errors,
	 * and the limits the man page states. */
	void (*expects)(const struct config_item *it, char *buf, size_t size);
};

extern const struct config_type config_type_uint, config_type_size, config_type_pow2,
	config_type_bool, config_type_enum, config_type_priority, config_type_name,
	config_type_events, config_type_filter, config_type_path, config_type_hist,
	config_type_units, config_type_synthetic, config_type_listen;

struct config_item {
	const char *section;	/* "Daemon", "Store", "Recorder", "Synthetic", "Metrics" or "Selection" */
	const char *key;
	const char *option;	/* its command-line option, when not named after the key */
	const struct config_type *type;
	size_t offset;		/* of the field in struct config ([Daemon], [Store],
				 * [Synthetic]) or struct selection */
	size_t pos_offset;	/* of a struct conf_pos to keep where it was written; 0: not kept */
	uint64_t min, max;	/* numbers and sizes */
	const char *const *names;	/* enums: NULL-terminated, the value is a name's index */
	const char *def;	/* the default, as written in a file; NULL: none, it is required */
	const char *description;	/* one line, for tracerd.conf(5) */
};

/* The table, in the order errors list the keys. */
const struct config_item *config_table(size_t *n);
/* The item for key in [section], or NULL. Keys are case-sensitive. */
const struct config_item *config_find(const char *section, const char *key);
/* What a value of it must be, as the errors say after "expected". */
void config_item_expects(const struct config_item *it, char *buf, size_t size);
/* Its command-line option: "--rate-limit" for RateLimit=, "--synthetic" for
 * [Synthetic] Event=. */
void config_item_option(const struct config_item *it, char *buf, size_t size);

#endif
