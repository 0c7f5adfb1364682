/* SPDX-License-Identifier: GPL-2.0 */
/* The TRACERD_* environment knobs, in one place: what tests (and only
 * tests, mostly) use to point tracerd elsewhere or slow it down. The
 * table in knobs.c names each with what it does. */
#ifndef TRACERD_KNOBS_H
#define TRACERD_KNOBS_H

enum knob {
	KNOB_TRACEFS,
	KNOB_BTF,
	KNOB_KALLSYMS,
	KNOB_QUEUE_ENTRIES,
	KNOB_QUEUE_STALL_MS,
	KNOB_TEST_CONSUMER_DELAY_US,
	KNOB_TEST_SINK_DELAY_US,
	KNOB_TEST_INTERPRET,
	KNOB_TEST_STACK_DEPTH,
	KNOB_TEST_AGG_STACK_IDS,
	KNOB_TEST_UNIT_CGROUPS,
	KNOB_TEST_REFUSE,
	_KNOB_MAX,
};

/* The knob's value, NULL when unset. Read from the environment at each
 * call (setup time only), so that a test can set it between calls. */
const char *knob_str(enum knob k);
/* As a number (decimal, or 0x hex), dflt when unset. */
long long knob_num(enum knob k, long long dflt);

#endif
