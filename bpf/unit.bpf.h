/* SPDX-License-Identifier: GPL-2.0 */
/* Unit=: is the current task in one of the slot's units' cgroups, or
 * below one? The daemon writes a verdict for every cgroup it knows; a
 * cgroup it has not seen yet (made since its last look) is judged by its
 * ancestors. Each CPU remembers its last answer (tasks of one cgroup run in
 * a row): the answer stands while the cgroup, the set and the daemon's
 * generation of verdicts are the same, and costs no hash lookup then. */
#ifndef TRACERD_UNIT_BPF_H
#define TRACERD_UNIT_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "tracerd_record.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACERD_UNIT_CGROUPS);
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

/* In the per-CPU scratch. */
struct unit_memo {
	__u64 cgroup_id;
	__u32 set;
	__u32 gen;
	__u32 rejects;
	__u32 valid;
};

static __always_inline bool unit_judge(struct unit_key *k)
{
	__u32 *v = bpf_map_lookup_elem(&unit_verdicts, k);
	__u32 i;

	if (v)
		return *v != UNIT_ACCEPT;
	for (i = 0; i < TRACERD_UNIT_LEVELS; i++) {
		k->cgroup_id = bpf_get_current_ancestor_cgroup_id(i);
		if (!k->cgroup_id)
			break;
		v = bpf_map_lookup_elem(&unit_verdicts, k);
		if (v && *v == UNIT_ACCEPT)
			return false;
	}
	return true;
}

static __always_inline bool unit_rejects(const struct event_desc *d, struct unit_memo *m)
{
	struct unit_key k = { .cgroup_id = bpf_get_current_cgroup_id(), .set = d->unit_set };
	__u32 zero = 0, *genp = bpf_map_lookup_elem(&unit_gen, &zero);
	/* Read before the verdicts: a verdict written after it makes this
	 * answer stale by the bump that follows the write. */
	__u32 gen = genp ? *genp : 0;
	__u64 cg = k.cgroup_id;
	bool r;

	if (m->valid && m->cgroup_id == cg && m->set == k.set && m->gen == gen)
		return m->rejects;
	r = unit_judge(&k);
	*m = (struct unit_memo){ .cgroup_id = cg, .set = k.set, .gen = gen, .rejects = r,
				 .valid = 1 };
	return r;
}

#endif
