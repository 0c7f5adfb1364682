/* SPDX-License-Identifier: GPL-2.0 */
/* The journal fields tracerd writes itself, listed once: the journal sink
 * expands them for its writer and for the names event fields must keep
 * clear of (a field named like one becomes TRACE_FIELD_<NAME>), and the
 * tests for what they check. X(id, name): name is "TRACE_" #id. */
#ifndef TRACERD_JOURNAL_FIELDS_H
#define TRACERD_JOURNAL_FIELDS_H

/* Every event entry: the slot's constants and the record header. */
#define TRACE_HEADER_FIELDS(X)					\
	X(EVENT, "TRACE_EVENT")					\
	X(CLASS, "TRACE_CLASS")					\
	X(SELECTION, "TRACE_SELECTION")				\
	X(CPU, "TRACE_CPU")					\
	X(PID, "TRACE_PID")					\
	X(TID, "TRACE_TID")					\
	X(COMM, "TRACE_COMM")					\
	X(TIMESTAMP_NS, "TRACE_TIMESTAMP_NS")			\
	X(TIME_REALTIME_USEC, "TRACE_TIME_REALTIME_USEC")

/* The task's cgroup and systemd's names for it (journal_cgroup_fields()). */
#define TRACE_CGROUP_FIELDS(X)					\
	X(CGROUP_ID, "TRACE_CGROUP_ID")				\
	X(CGROUP, "TRACE_CGROUP")				\
	X(UNIT, "TRACE_UNIT")					\
	X(SLICE, "TRACE_SLICE")					\
	X(USER_UNIT, "TRACE_USER_UNIT")

/* What marks tracerd's own entries (journalctl TRACE_STATS=1): reserved
 * too, and so is every TRACE_STATS_* (TRACE_RESERVED_PREFIX). Their other
 * fields (TRACE_RELOAD_SEQ, TRACE_CONFIG_*) share no entry with an event's. */
#define TRACE_MARKER_FIELDS(X)					\
	X(STATS, "TRACE_STATS")					\
	X(SUPPRESSED, "TRACE_SUPPRESSED")			\
	X(RELOAD, "TRACE_RELOAD")

/* StackTrace='s (render_stack.c), with their _CUT and _LOST twins. */
#define TRACE_STACK_FIELDS(X)					\
	X(STACK, "TRACE_STACK")					\
	X(STACK_CUT, "TRACE_STACK_CUT")				\
	X(STACK_LOST, "TRACE_STACK_LOST")			\
	X(USER_STACK, "TRACE_USER_STACK")			\
	X(USER_STACK_CUT, "TRACE_USER_STACK_CUT")		\
	X(USER_STACK_LOST, "TRACE_USER_STACK_LOST")

#define TRACE_RESERVED_PREFIX "STATS_"

#endif
