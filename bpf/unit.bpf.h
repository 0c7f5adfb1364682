/* SPDX-License-Identifier: GPL-2.0 */
/* Unit=: is the current task in one of the slot's units' cgroups, or
 * below one? The daemon writes a verdict for every cgroup it knows; a
 * cgroup it has not judged yet (made since its last look: a unit's first
 * milliseconds) is in when an ancestor is, else the daemon is asked: the
 * record goes to it marked, and it judges, then writes the verdict for the
 * events that follow. A unit that fails at once loses nothing so. Each CPU
 * remembers its last answer (tasks of one cgroup run in a row): the answer
 * stands while the cgroup, the set and the daemon's generation of verdicts
 * are the same, and costs no hash lookup then. */
#ifndef TRACERD_UNIT_BPF_H
#define TRACERD_UNIT_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "tracerd_record.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_UNIT_CGROUPS);	/* set by the daemon before load */
	__type(key, struct unit_key);
	__type(value, __u32);
} unit_verdicts SEC(".maps");

/* Bumped by the daemon after it wrote verdicts: remembered answers go. A
 * map, not .bss: every copy of the program shares it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unit_gen SEC(".maps");

/* The root of tracerd's cgroup2 mount (its cgroup namespace's, in a
 * container) and its level: a cgroup not below it is none of the units
 * tracerd can name, and is out without asking. 0: the check is off. */
const volatile __u64 unit_root_id;
const volatile __u32 unit_root_level;

enum unit_answer { UNIT_IN, UNIT_OUT, UNIT_ASK };

/* In the per-CPU scratch. */
struct unit_memo {
	__u64 cgroup_id;
	__u32 set;
	__u32 gen;
	__u32 answer;		/* enum unit_answer */
	__u32 valid;
};

static __always_inline __u32 unit_judge(struct unit_key *k)
{
	__u32 *v = bpf_map_lookup_elem(&unit_verdicts, k);
	__u32 i;

	if (v)
		return *v == UNIT_ACCEPT ? UNIT_IN : UNIT_OUT;
	for (i = 0; i < TRACERD_UNIT_LEVELS; i++) {
		k->cgroup_id = bpf_get_current_ancestor_cgroup_id(i);
		if (!k->cgroup_id)
			break;
		v = bpf_map_lookup_elem(&unit_verdicts, k);
		if (v && *v == UNIT_ACCEPT)
			return UNIT_IN;
	}
	if (unit_root_id && bpf_get_current_ancestor_cgroup_id(unit_root_level) != unit_root_id)
		return UNIT_OUT;
	return UNIT_ASK;
}

static __always_inline __u32 unit_answer(const struct event_desc *d, struct unit_memo *m)
{
	struct unit_key k = { .cgroup_id = bpf_get_current_cgroup_id(), .set = d->unit_set };
	__u32 zero = 0, *genp = bpf_map_lookup_elem(&unit_gen, &zero);
	/* Read before the verdicts: a verdict written after it makes this
	 * answer stale by the bump that follows the write. */
	__u32 gen = genp ? *genp : 0;
	__u64 cg = k.cgroup_id;
	__u32 a;

	if (m->valid && m->cgroup_id == cg && m->set == k.set && m->gen == gen)
		return m->answer;
	a = unit_judge(&k);
	*m = (struct unit_memo){ .cgroup_id = cg, .set = k.set, .gen = gen, .answer = a,
				 .valid = 1 };
	return a;
}

#endif
