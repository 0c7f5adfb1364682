// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include "knobs.h"

static const char *const knob_names[_KNOB_MAX] = {
	/* A tracefs mount to use instead of /sys/kernel/tracing. */
	[KNOB_TRACEFS] = "TRACERD_TRACEFS",
	/* A BTF file instead of the kernel's (a bad one plays "no BTF"). */
	[KNOB_BTF] = "TRACERD_BTF",
	/* A kallsyms file instead of /proc/kallsyms. */
	[KNOB_KALLSYMS] = "TRACERD_KALLSYMS",
	/* Queue sink capacity in records (default 65536). */
	[KNOB_QUEUE_ENTRIES] = "TRACERD_QUEUE_ENTRIES",
	/* How long a stalled sink may hold up shutdown (default 1000 ms). */
	[KNOB_QUEUE_STALL_MS] = "TRACERD_QUEUE_STALL_MS",
	/* Consumer sleep per record, to overrun the ring buffer on purpose. */
	[KNOB_TEST_CONSUMER_DELAY_US] = "TRACERD_TEST_CONSUMER_DELAY_US",
	/* Queue writer sleep per record, to fill the queue on purpose. */
	[KNOB_TEST_SINK_DELAY_US] = "TRACERD_TEST_SINK_DELAY_US",
	/* Selection names (comma-separated; "*": all) whose Filter= the
	 * interpreter runs instead of emitted BPF: the differential test. */
	[KNOB_TEST_INTERPRET] = "TRACERD_TEST_INTERPRET",
	/* Frames a stack walk keeps, 1..64 (StackTrace=), to cut stacks on purpose. */
	[KNOB_TEST_STACK_DEPTH] = "TRACERD_TEST_STACK_DEPTH",
	/* Entries of the stack id map (keys=common_stacktrace), 1..16384: a
	 * tiny one, for most stacks to get no id, on purpose. */
	[KNOB_TEST_AGG_STACK_IDS] = "TRACERD_TEST_AGG_STACK_IDS",
	/* Entries of the Unit= verdict map, 1..65536: a tiny one fills, on
	 * purpose (its cgroups' events are then judged by the daemon). */
	[KNOB_TEST_UNIT_CGROUPS] = "TRACERD_TEST_UNIT_CGROUPS",
	/* An event (system:name) whose attachment fails with EPERM, as one
	 * the kernel refuses: a reload that fails after attaching others. */
	[KNOB_TEST_REFUSE] = "TRACERD_TEST_REFUSE",
};

const char *knob_str(enum knob k)
{
	return k < _KNOB_MAX ? getenv(knob_names[k]) : NULL;
}

long long knob_num(enum knob k, long long dflt)
{
	const char *s = knob_str(k);

	return s ? strtoll(s, NULL, 0) : dflt;
}
