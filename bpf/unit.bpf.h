/* SPDX-License-Identifier: GPL-2.0 */
/* Unit=: is the current task in one of the slot's units' cgroups, or
 * below one? The daemon writes a verdict for every cgroup it knows, so an
 * event costs one hash lookup; a cgroup it has not seen yet (made since its
 * last look) is judged by its ancestors. */
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

static __always_inline bool unit_rejects(const struct event_desc *d)
{
	struct unit_key k = { .cgroup_id = bpf_get_current_cgroup_id(), .set = d->unit_set };
	__u32 *v = bpf_map_lookup_elem(&unit_verdicts, &k);
	__u32 i;

	if (v)
		return *v != UNIT_ACCEPT;
	for (i = 0; i < TRACERD_UNIT_LEVELS; i++) {
		k.cgroup_id = bpf_get_current_ancestor_cgroup_id(i);
		if (!k.cgroup_id)
			break;
		v = bpf_map_lookup_elem(&unit_verdicts, &k);
		if (v && *v == UNIT_ACCEPT)
			return false;
	}
	return true;
}

#endif
