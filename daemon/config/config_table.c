// SPDX-License-Identifier: GPL-2.0
/* Every config key, in one table: its section, value type, field, limits,
 * default and a one-line description. The reader (config.c) dispatches on
 * it, takes defaults and "did you mean" from it, and lists its keys in
 * errors; tracerd.conf(5) can be generated or checked from it. */
#include <ctype.h>
#include <syslog.h>
#include "config.h"
#include "util.h"

static const char *const outputs[] = {
	[OUTPUT_JOURNAL] = "journal",
	[OUTPUT_STDOUT] = "stdout",
	[OUTPUT_STORE] = "store",
	NULL,
};

/* A selection's Output= may also say "daemon": the [Daemon] one (the default). */
static const char *const sel_outputs[] = {
	[OUTPUT_JOURNAL] = "journal",
	[OUTPUT_STDOUT] = "stdout",
	[OUTPUT_STORE] = "store",
	[OUTPUT_RECORDER] = "recorder",
	[OUTPUT_DAEMON] = "daemon",
	NULL,
};

static const char *const compressions[] = {
	[COMPRESSION_NONE] = "none",
	[COMPRESSION_ZLIB] = "zlib",
	[COMPRESSION_ZSTD] = "zstd",
	NULL,
};

static const char *const triggers[] = {
	[TRIGGER_NONE] = "none",
	[TRIGGER_SNAPSHOT] = "snapshot",
	NULL,
};

static const char *const stack_traces[] = {
	[STACK_TRACE_NO] = "no",
	[STACK_TRACE_KERNEL] = "kernel",
	[STACK_TRACE_USER] = "user",
	[STACK_TRACE_BOTH] = "both",
	NULL,
};

static const char *const priorities[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit", [LOG_ERR] = "err",
	[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info",
	[LOG_DEBUG] = "debug", NULL,
};

/* An enum field is written as an int (config_type_enum). */
_Static_assert(sizeof(enum output) == sizeof(int), "enum output is stored as an int");
_Static_assert(sizeof(enum store_compression) == sizeof(int), "stored as an int");

/*
 * Adding a config key is one row here plus its field in struct config
 * ([Daemon]) or struct selection ([Selection]); nothing else. For example:
 *
 *	{ .section = "Daemon", .key = "MaxEventsPerSec", .type = &config_type_uint,
 *	  .offset = offsetof(struct config, max_events_per_sec),
 *	  .min = 0, .max = 1000000, .def = "0",
 *	  .description = "events/s for the whole daemon; 0 for none" },
 *
 * The row's order is the order errors list the keys in. A value that
 * depends on another key (WakeupBytes= below RingBufferSize=, a burst that
 * defaults to the rate) is checked in config_finish().
 */
static const struct config_item table[] = {
	{ .section = "Daemon", .key = "RingBufferSize", .type = &config_type_pow2,
	  .offset = offsetof(struct config, ring_buffer_size),
	  .min = 4096, .max = 1ULL << 30, .def = "8M",
	  .description = "BPF ring buffer, a power of two" },
	{ .section = "Daemon", .key = "WakeupBytes", .type = &config_type_size,
	  .offset = offsetof(struct config, wakeup_bytes),
	  .pos_offset = offsetof(struct config, wakeup_pos),	/* for config_finish()'s check */
	  .min = 0, .max = 1ULL << 30, .def = "0",
	  .description = "wake the daemon early once this much is waiting; 0 for ring/4" },
	{ .section = "Daemon", .key = "Output", .type = &config_type_enum,
	  .offset = offsetof(struct config, output),
	  .names = outputs, .def = "journal",
	  .description = "where events go: the journal, stdout or the store ([Store])" },
	{ .section = "Daemon", .key = "FlushIntervalMSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, flush_interval_ms),
	  .min = 1, .max = 10000, .def = "100",
	  .description = "the most a record waits before the daemon drains it" },
	{ .section = "Daemon", .key = "StatsIntervalSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, stats_interval_sec),
	  .min = 0, .max = 86400, .def = "60",
	  .description = "periodic statistics entries; 0 for none" },
	{ .section = "Daemon", .key = "VariableMaxAgeSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, variable_max_age_sec),
	  .min = 1, .max = 86400, .def = "60",
	  .description = "an Aggregate= trigger's variables not set again for this long are "
			 "deleted; a start not read yet (its end never came) is counted aged out" },
	{ .section = "Daemon", .key = "RawPointers", .type = &config_type_bool,
	  .offset = offsetof(struct config, raw_pointers),
	  .def = "no",
	  .description = "print %p addresses raw instead of hashed" },

	{ .section = "Store", .key = "Directory", .type = &config_type_path,
	  .offset = offsetof(struct config, store.directory),
	  .def = "/var/lib/tracerd",
	  .description = "where Output=store writes its files: the unit's StateDirectory=; "
			 "one tracerd at a time (DIR/.lock)" },
	{ .section = "Store", .key = "MaxUse", .type = &config_type_size,
	  .offset = offsetof(struct config, store.max_use),
	  .min = 0, .max = 1ULL << 50, .def = "1G",
	  .description = "the most the files may take; the oldest are deleted first; 0 for no limit" },
	{ .section = "Store", .key = "MaxFileSize", .type = &config_type_size,
	  .offset = offsetof(struct config, store.max_file_size),
	  .min = 1ULL << 20, .max = 1ULL << 40, .def = "64M",
	  .description = "a file past this size is closed and a new one begun" },
	{ .section = "Store", .key = "MaxFileSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, store.max_file_sec),
	  .min = 0, .max = 100000000, .def = "0",
	  .description = "a file this old is closed and a new one begun; 0 for no limit" },
	{ .section = "Store", .key = "SyncIntervalSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, store.sync_interval_sec),
	  .min = 0, .max = 86400, .def = "10",
	  .description = "written blocks are flushed to the disk (fdatasync) at most this long "
			 "after they were written, so that a crash of the machine loses no more; "
			 "0: only when a file is closed" },
	{ .section = "Store", .key = "Compression", .type = &config_type_enum,
	  .offset = offsetof(struct config, store.compression),
	  .names = compressions, .def = "zstd",
	  .description = "how blocks of records are compressed: zstd, zlib or none" },

	{ .section = "Recorder", .key = "Size", .type = &config_type_size,
	  .offset = offsetof(struct config, recorder.size),
	  .min = 64 << 10, .max = 1ULL << 40, .def = "64M",
	  .description = "memory for Output=recorder's window, compressed as the store compresses; "
			 "the oldest block goes first (counted overwritten)" },
	{ .section = "Recorder", .key = "KeepAfterSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, recorder.keep_after_sec),
	  .min = 0, .max = 3600, .def = "5",
	  .description = "a snapshot goes on recording this long after its trigger" },
	{ .section = "Recorder", .key = "MinIntervalSec", .type = &config_type_uint,
	  .offset = offsetof(struct config, recorder.min_interval_sec),
	  .min = 0, .max = 86400, .def = "60",
	  .description = "at most one snapshot per interval; a trigger inside it, or while a "
			 "snapshot is written, is counted and takes none" },
	{ .section = "Recorder", .key = "MaxSnapshots", .type = &config_type_uint,
	  .offset = offsetof(struct config, recorder.max_snapshots),
	  .min = 0, .max = 1000000, .def = "10",
	  .description = "snapshot directories kept: once one is written, the oldest (by name, "
			 "torn ones too) are deleted past this many; 0 for no limit" },

	{ .section = "Synthetic", .key = "Event", .type = &config_type_synthetic,
	  .option = "--synthetic",
	  .offset = offsetof(struct config, synth),
	  .def = "",
	  .description = "a synthetic event in the kernel's synthetic_events syntax, NAME TYPE FIELD; "
			 "...: the event synthetic:NAME, which an Aggregate= onmatch() action fires; "
			 "repeatable, empty resets" },

	{ .section = "Metrics", .key = "Listen", .type = &config_type_listen,
	  .option = "--metrics-listen",
	  .offset = offsetof(struct config, metrics_listen),
	  .def = "",
	  .description = "where GET /metrics serves every count and histogram in the Prometheus "
			 "text format: HOST:PORT, [IPV6]:PORT or a unix socket path; empty: off; a "
			 "socket systemd passes (tracerd-metrics.socket) takes its place" },
	{ .section = "Metrics", .key = "MaxSeries", .type = &config_type_uint,
	  .offset = offsetof(struct config, metrics_max_series),
	  .min = 1, .max = 1000000, .def = "10000",
	  .description = "the most series an Aggregate= histogram exports, one per key: the first "
			 "keys seen, most hits first; the others' counts are one series, key \"other\"" },

	{ .section = "Selection", .key = "Name", .type = &config_type_name,
	  .offset = offsetof(struct selection, name),
	  .description = "the selection's name, unique; required" },
	{ .section = "Selection", .key = "Events", .type = &config_type_events,
	  .offset = offsetof(struct selection, events),
	  .description = "subsystem:event globs; repeatable, empty resets; required" },
	{ .section = "Selection", .key = "Filter", .type = &config_type_filter,
	  .offset = offsetof(struct selection, filter),
	  .pos_offset = offsetof(struct selection, filter_pos),	/* for the filter compiler */
	  .def = "",
	  .description = "kernel ftrace filter syntax; empty for all" },
	{ .section = "Selection", .key = "Unit", .type = &config_type_units,
	  .offset = offsetof(struct selection, units),
	  .pos_offset = offsetof(struct selection, units_pos),	/* for the warning */
	  .def = "",
	  .description = "only events of tasks in these systemd units' cgroups, or below: "
			 "unit names or globs as systemctl takes them (a name without a type "
			 "is a .service); repeatable, empty resets; none: every task" },
	{ .section = "Selection", .key = "Priority", .type = &config_type_priority,
	  .offset = offsetof(struct selection, priority),
	  .names = priorities, .def = "info",
	  .description = "journal priority of these events" },
	{ .section = "Selection", .key = "RateLimit", .type = &config_type_uint,
	  .offset = offsetof(struct selection, rate_limit),
	  .min = 0, .max = 100000000, .def = "0",
	  .description = "events/s for this selection, with RateLimitBurst=; 0 for none" },
	{ .section = "Selection", .key = "RateLimitBurst", .type = &config_type_uint,
	  .offset = offsetof(struct selection, rate_burst),
	  .min = 0, .max = 100000000, .def = "0",
	  .description = "events RateLimit= lets through at once; 0 for RateLimit='s value" },
	{ .section = "Selection", .key = "Output", .type = &config_type_enum,
	  .offset = offsetof(struct selection, output),
	  .names = sel_outputs, .def = "daemon",
	  .description = "where this selection's events go; recorder: the window of [Recorder], "
			 "on disk only in snapshots; daemon for [Daemon] Output=" },
	{ .section = "Selection", .key = "Trigger", .type = &config_type_enum,
	  .offset = offsetof(struct selection, trigger),
	  .pos_offset = offsetof(struct selection, trigger_pos),	/* for config_finish()'s check */
	  .names = triggers, .def = "none",
	  .description = "snapshot: each accepted event takes a snapshot of the recorder's window "
			 "(as SIGUSR1 does), besides going to its Output=" },
	{ .section = "Selection", .key = "Aggregate", .type = &config_type_hist,
	  .offset = offsetof(struct selection, aggregate),
	  .pos_offset = offsetof(struct selection, aggregate_pos),	/* for the hist compiler */
	  .def = "",
	  .description = "count in BPF by the kernel's hist trigger language; no records then" },
	{ .section = "Selection", .key = "AggregateIntervalSec", .type = &config_type_uint,
	  .offset = offsetof(struct selection, aggregate_interval_sec),
	  .min = 0, .max = 86400, .def = "60",
	  .description = "a histogram dump (then cleared) each interval; 0 for only at stop" },
	{ .section = "Selection", .key = "SyscallStrings", .type = &config_type_bool,
	  .offset = offsetof(struct selection, syscall_strings),
	  .def = "yes",
	  .description = "read the user strings a syscall is given (filename, pathname...) in BPF "
			 "and show them after their pointers; no: the pointers alone" },
	{ .section = "Selection", .key = "StackTrace", .type = &config_type_enum,
	  .offset = offsetof(struct selection, stack_trace),
	  .pos_offset = offsetof(struct selection, stack_trace_pos),	/* for config_finish()'s check */
	  .names = stack_traces, .def = "no",
	  .description = "the stack each accepted event was called from, taken in BPF: no, kernel, "
			 "user or both (at most 64 frames each; a longer one is marked cut)" },
};

const struct config_item *config_table(size_t *n)
{
	*n = ARRAY_SIZE(table);
	return table;
}

const struct config_item *config_find(const char *section, const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (!strcmp(table[i].section, section) && !strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}

void config_item_expects(const struct config_item *it, char *buf, size_t size)
{
	it->type->expects(it, buf, size);
}

/* CamelCase to --camel-case, unless the item names its option. */
void config_item_option(const struct config_item *it, char *buf, size_t size)
{
	size_t n;

	if (it->option) {
		snprintf(buf, size, "%s", it->option);
		return;
	}
	n = snprintf(buf, size, "--");

	for (const char *k = it->key; *k && n + 2 < size; k++) {
		if (isupper((unsigned char)*k) && k != it->key)
			buf[n++] = '-';
		buf[n++] = tolower((unsigned char)*k);
	}
	buf[n < size ? n : size - 1] = 0;
}
