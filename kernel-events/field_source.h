/* SPDX-License-Identifier: GPL-2.0 */
/* A field name of an event to where its value comes from, once for every
 * reader of names: Filter= (and --read --filter), Aggregate=. Either a field
 * of the record (a number at an offset, a char array, a __data_loc string)
 * or one the BPF program knows without the record: common_pid, cpu, comm,
 * with the kernel's aliases (CPU, common_cpu; COMM, common_comm), and the
 * kernel call path, common_stacktrace (or stacktrace, STACKTRACE): a key of
 * histograms only, which a filter refuses. */
#ifndef TRACERD_FIELD_SOURCE_H
#define TRACERD_FIELD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include "kernel-events/events.h"
#include "tracerd_record.h"

struct field_source {
	const char *name;		/* the event's field name, or the name as given */
	const struct tp_field *field;	/* NULL for cpu and comm */
	enum trace_src src;		/* SRC_RECORD, SRC_STR, SRC_DATA_LOC... */
	unsigned off, size;		/* in the record; size 1, 2, 4, 8 for numbers */
	bool is_signed;
	bool is_string;
	unsigned str_size;		/* SRC_STR, SRC_COMM: bytes of the array */
	int ustr;			/* a syscall's user string argument: its index
					 * among them (field_source_user_strings), else -1 */
	char type[96];			/* as the format says: "int", "char[16]" */
};

/* 0, or:
 * -ENOENT      no such field;
 * -EPERM       common_flags or common_preempt_count, which the kernel
 *              overwrites before a BPF program runs;
 * -EMEDIUMTYPE an array, or a number of a size other than 1, 2, 4, 8:
 *              neither a number nor a string.
 * ret is filled as far as known (name, field, type) in every case. */
int field_source_resolve(const struct tp_event *e, const char *name, struct field_source *ret);

/* The arguments of a syscall event (syscalls:sys_enter_*) that are user
 * strings, in field order, at most TRACERD_MAX_USTR: those whose type the
 * format gives as "const char *" (the kernel's const char __user *, __user
 * dropped), except a buffer with its length, an argument followed by a
 * size_t (write's buf, count; pwrite64's; mq_timedsend's u_msg_ptr). */
size_t field_source_user_strings(const struct tp_event *e,
				 const struct tp_field *ret[TRACERD_MAX_USTR]);

/* Lists e's user string arguments in desc->ustr_off, for the class program
 * to read them and the filter to compare them. */
void event_desc_user_strings(const struct tp_event *e, struct event_desc *desc);

/* s, a user string argument (s->ustr >= 0), as the string the class program
 * appended to the record, not the pointer: SRC_USER_STR at its word. */
void field_source_as_user_string(const struct tp_event *e, struct field_source *s);

/* Why name did not resolve, -ENOENT or -EPERM, for an error message:
 * "unknown field ...; its fields are: <the event's>, <common>". An array
 * (-EMEDIUMTYPE) is for the caller to explain: what it needed instead. */
void field_source_explain(const struct tp_event *e, const char *name, int r, const char *common,
			  char *buf, size_t size);

#endif
