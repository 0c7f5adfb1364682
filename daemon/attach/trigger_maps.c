// SPDX-License-Identifier: GPL-2.0
/* The maps of inter-event triggers (bpf/hist_trigger.bpf.h): each slot's
 * trigger, the selections each synthetic event goes to, and the sweep of
 * variables whose end never came. */
#include <bpf/bpf.h>
#include "loader_priv.h"
#include "util.h"

/* The variables of a slot that goes: its id may be a new trigger's later,
 * whose references must not read them. Returns the starts not read yet. */
static int forget_vars(int fd, unsigned slot)
{
	_cleanup_free_ struct hist_var_key *old = NULL;
	struct hist_var_key key, next;
	struct hist_var_val v;
	size_t n = 0, cap = 0;
	void *prev = NULL;
	int unread = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (key.slot != slot)
			continue;
		if (GROW(old, cap, n) < 0)
			return -ENOMEM;
		old[n++] = key;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_lookup_and_delete_elem(fd, &old[i], &v) == 0)
			unread += v.set != 0;
	return unread;
}

int loader_set_trigger(struct loader *l, unsigned index, unsigned slot,
		       const struct hist_trigger *t)
{
	static const struct hist_trigger none;
	int fd = bpf_map__fd(l->skel->maps.hist_triggers);

	static const struct hist_snap fresh;
	int snap = bpf_map__fd(l->skel->maps.hist_snap);

	/* A new trigger at the index starts with no maximum and no request. */
	if (t && bpf_map_update_elem(snap, &index, &fresh, BPF_ANY) < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &index, t ? t : &none, BPF_ANY) < 0)
		return -errno;
	return t ? 0 : forget_vars(bpf_map__fd(l->skel->maps.hist_vars), slot);
}

int loader_snapshot_requests(struct loader *l, unsigned index, uint64_t *requests)
{
	struct hist_snap s;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.hist_snap), &index, &s) < 0)
		return -errno;
	*requests = s.requests;
	return 0;
}

int loader_set_synth_subs(struct loader *l, unsigned index, const struct synth_subs *subs)
{
	int fd = bpf_map__fd(l->skel->maps.synth_subs);

	return bpf_map_update_elem(fd, &index, subs, BPF_ANY) < 0 ? -errno : 0;
}

/* Reads every entry, then deletes the old ones (a key deleted during the
 * walk would restart it). Each read is a bpf() call, which keeps the CPU's
 * tracepoint programs from running meanwhile (the kernel skips them), so
 * it runs seldom (tracer.c). A start set again between the read and the
 * delete is lost with it: a window of one syscall after max_age_ns of
 * quiet for that key. */
int loader_vars_sweep(struct loader *l, uint64_t now_ns, uint64_t max_age_ns,
		      void (*expired)(void *userdata, unsigned slot), void *userdata)
{
	int fd = bpf_map__fd(l->skel->maps.hist_vars);
	_cleanup_free_ struct hist_var_key *old = NULL;
	struct hist_var_key key, next;
	struct hist_var_val v;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		/* A stamp after now: set since now was read. */
		if (bpf_map_lookup_elem(fd, &key, &v) < 0 || v.stamp >= now_ns ||
		    now_ns - v.stamp < max_age_ns)
			continue;
		if (GROW(old, cap, n) < 0)
			return -ENOMEM;
		old[n] = key;
		old[n++].pad = v.set != 0;	/* (the key's pad is 0 in the map) */
	}
	for (size_t i = 0; i < n; i++) {
		bool set = old[i].pad;

		old[i].pad = 0;
		if (bpf_map_delete_elem(fd, &old[i]) == 0 && set && expired)
			expired(userdata, old[i].slot);
	}
	return n;
}
