// SPDX-License-Identifier: GPL-2.0
/* Loading the class program (and copies of it on demand), and its maps. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "attach/loader_priv.h"
#include "kernel-events/cgroup.h"
#include "knobs.h"
#include "self_tgid.skel.h"
#include "util.h"

/* Unit=: the root of our cgroup2 mount, the one cgroup of our own
 * ancestors (by level, anc) that is its directory: its id and level in the
 * whole tree. Left 0 without a cgroup2 mount or when we are not below it;
 * the class program then asks the daemon about every cgroup it has no
 * verdict for. */
static void cgroup_root(const __u64 *anc, uint64_t *id, uint32_t *level)
{
	const char *mnt;
	struct stat st;

	if (cgroup2_mount(&mnt) < 0 || stat(mnt, &st) < 0)
		return;
	for (uint32_t i = 0; i < TRACERD_SELF_LEVELS && anc[i]; i++)
		if (anc[i] == st.st_ino) {
			*id = st.st_ino;
			*level = i;
			return;
		}
}

/* Our tgid in the init PID namespace, which is what the class program gets
 * from bpf_get_current_pid_tgid(); getpid() is the number in our own PID
 * namespace, another one in a container. A tiny raw_tp program, run once by
 * BPF_PROG_TEST_RUN in our context, reads it, and our cgroup's ancestors. */
static int kernel_self(uint32_t *tgid, uint64_t *root_id, uint32_t *root_level)
{
	struct self_tgid_bpf *s = self_tgid_bpf__open_and_load();
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int r = 0;

	if (!s)
		return -errno;
	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.current_tgid), &run) < 0)
		r = -errno;
	else if (!s->bss->tgid)
		r = -ESRCH;
	else {
		*tgid = s->bss->tgid;
		cgroup_root(s->bss->cgroup_ancestors, root_id, root_level);
	}
	self_tgid_bpf__destroy(s);
	return r;
}

/* The stack id map's entries: a test may make it tiny. */
static uint32_t stack_ids(void)
{
	long long n = knob_num(KNOB_TEST_AGG_STACK_IDS, TRACERD_AGG_STACK_IDS);

	return n >= 1 && n <= TRACERD_AGG_STACK_IDS ? (uint32_t)n : TRACERD_AGG_STACK_IDS;
}

/* The verdict map's entries: a test may make it tiny, to fill it. */
static uint32_t unit_cgroups(void)
{
	long long n = knob_num(KNOB_TEST_UNIT_CGROUPS, TRACERD_UNIT_CGROUPS);

	return n >= 1 && n <= TRACERD_UNIT_CGROUPS ? (uint32_t)n : TRACERD_UNIT_CGROUPS;
}

/* The initial PID namespace's inode number (the kernel's PROC_PID_INIT_INO). */
#define PIDNS_INIT_INO 0xEFFFFFFCU

/* Our PID namespace, for the class program's bpf_get_ns_current_pid_tgid()
 * (bpf/stack.bpf.h): /proc numbers processes as it does. Left 0 in the
 * initial namespace, where the tgid BPF gives is /proc's, as it always
 * was; also when /proc cannot say, or is not our namespace's (mounted by
 * an ancestor's: it calls us by another pid), where neither is known to
 * be right and frames look up the kernel's pid as before. */
static void self_pidns(uint64_t *dev, uint64_t *ino)
{
	char self[32], want[32];
	struct stat st;
	ssize_t n;

	if (stat("/proc/self/ns/pid", &st) < 0 || st.st_ino == PIDNS_INIT_INO)
		return;
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n < 0)
		return;
	self[n] = 0;
	snprintf(want, sizeof(want), "%d", (int)getpid());
	if (strcmp(self, want))
		return;
	/* The kernel's dev_t (MKDEV), which the helper compares, not stat's. */
	*dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	*ino = st.st_ino;
}

static int load_bpf(struct loader *l, uint64_t ring_size, uint64_t wakeup_bytes, struct diag *d)
{
	uint64_t pidns_dev = 0, pidns_ino = 0, root_id = 0;
	uint32_t tgid = 0, root_level = 0;
	int r;

	l->skel = tracerd_bpf__open();
	if (!l->skel) {
		r = -errno;
		diag_set(d, NULL, 0, 0, "cannot open the BPF object: %s", strerror(-r));
		return r;
	}
	/* Loaded by its copies (loader_instance()), when a selection needs it;
	 * the trigger program by loader_trigger_init(), for a config with one. */
	bpf_program__set_autoload(l->skel->progs.trace_event_class, false);
	bpf_program__set_autoload(l->skel->progs.trace_event_trigger, false);
	bpf_map__set_max_entries(l->skel->maps.rb, ring_size);
	bpf_map__set_max_entries(l->skel->maps.agg_stacks, stack_ids());
	bpf_map__set_max_entries(l->skel->maps.unit_verdicts, unit_cgroups());
	l->skel->rodata->wakeup_bytes = wakeup_bytes;
	self_pidns(&pidns_dev, &pidns_ino);
	l->skel->rodata->pidns_dev = pidns_dev;
	l->skel->rodata->pidns_ino = pidns_ino;
	r = kernel_self(&tgid, &root_id, &root_level);
	if (r >= 0) {
		l->skel->rodata->self_tgid = tgid;
		l->skel->rodata->unit_root_id = root_id;
		l->skel->rodata->unit_root_level = root_level;
		r = tracerd_bpf__load(l->skel);
	}
	if (r >= 0)
		r = loader_accept_init(l);
	if (r < 0) {
		diag_set(d, NULL, 0, 0, "cannot load the BPF program: %s%s", strerror(-r),
			 r == -EPERM ? " (tracerd needs CAP_BPF and CAP_PERFMON)" : "");
		/* The verifier's EACCES is not tracefs's: keep it from EX_NOPERM. */
		return r == -EACCES ? -EINVAL : r;
	}
	return 0;
}

int loader_new(struct loader **ret, uint64_t ring_size, uint64_t wakeup_bytes, struct diag *d)
{
	struct loader *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	r = load_bpf(l, ring_size, wakeup_bytes, d);
	if (r < 0) {
		loader_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

void loader_free(struct loader *l)
{
	if (!l)
		return;
	tracerd_bpf__destroy(l->trigger);
	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++)
		tracerd_bpf__destroy(l->extra[k]);
	tracerd_bpf__destroy(l->skel);
	free(l->snap);
	free(l->filter_fds);
	free(l);
}

int loader_ring_fd(const struct loader *l)
{
	return bpf_map__fd(l->skel->maps.rb);
}

void loader_set_progress(struct loader *l, loader_progress_fn fn, void *userdata)
{
	l->progress = fn;
	l->progress_userdata = userdata;
}

void loader_progress(struct loader *l, size_t done, size_t total)
{
	uint64_t now = now_usec(CLOCK_MONOTONIC);

	if (!l->progress || now - l->progress_last_usec < 1000000)
		return;
	l->progress_last_usec = now;
	l->progress(l->progress_userdata, done, total);
}

int loader_set_slot(struct loader *l, unsigned id, const struct event_desc *desc)
{
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ struct event_stats *zero = NULL;

	if (ncpu < 0)
		return ncpu;
	zero = calloc(ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.stats), &id, zero, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(l->skel->maps.events), &id, desc, BPF_ANY))
		return -errno;
	return 0;
}

int loader_hist_maps(struct loader *l, struct hist_maps *m)
{
	const int keys[AGG_MAPS] = {
		[AGG_MAP_SMALL] = bpf_map__fd(l->skel->maps.agg_small),
		[AGG_MAP_MEDIUM] = bpf_map__fd(l->skel->maps.agg_medium),
		[AGG_MAP_LARGE] = bpf_map__fd(l->skel->maps.agg_large),
	};

	int r = hist_maps_init(m, bpf_map__fd(l->skel->maps.agg_descs),
			       bpf_map__fd(l->skel->maps.agg_budgets), keys,
			       bpf_map__fd(l->skel->maps.agg_stacks));

	m->track = bpf_map__fd(l->skel->maps.hist_track);
	return r;
}

/* Every bpf() map read raises this CPU's bpf_prog_active while it copies,
 * and the kernel skips tracepoint programs (ours too) for what fires then:
 * so the per-slot counters are read only when a report needs them, slots
 * [0, n) in one BPF_MAP_LOOKUP_BATCH (the kernel still copies slot by slot,
 * but in one call instead of one per slot). */
int loader_read_stats(struct loader *l, unsigned n)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(l->skel->maps.stats);
	__u32 *keys, done = 0, next = 0;
	struct event_stats *v;
	bool batch = true;

	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	if (n > TRACERD_MAX_EVENTS)
		n = TRACERD_MAX_EVENTS;
	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	if (n > l->snap_cap) {
		v = reallocarray(l->snap, (size_t)n * ncpu, sizeof(*v));
		if (!v) {
			free(keys);
			return -ENOMEM;	/* the last snapshot stays */
		}
		l->snap = v;
		l->snap_cap = n;
	}
	/* The kernel fills every CPU's value; valgrind believes only the first. */
	memset(l->snap, 0, (size_t)n * ncpu * sizeof(*l->snap));
	while (done < n) {
		__u32 count = n - done;
		int r = bpf_map_lookup_batch(fd, done ? &next : NULL, &next, keys + done,
					     l->snap + (size_t)done * ncpu, &count, NULL);

		done += count;
		if (r < 0) {
			batch = errno == ENOENT;	/* ENOENT: the map's end */
			break;
		}
	}
	/* A kernel without batch lookups for this map type: one slot at a time. */
	for (; !batch && done < n; done++)
		if (bpf_map_lookup_elem(fd, &done, l->snap + (size_t)done * ncpu) < 0)
			break;
	free(keys);
	l->snap_n = done;
	return 0;
}

void loader_slot_stats(struct loader *l, unsigned id, struct event_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();

	if (ncpu <= 0 || id >= l->snap_n)
		return;
	for (int c = 0; c < ncpu; c++) {
		const struct event_stats *v = &l->snap[(size_t)id * ncpu + c];

		sum->hits += v->hits;
		sum->filtered += v->filtered;
		sum->lost += v->lost;
		sum->truncated += v->truncated;
		sum->aggregated += v->aggregated;
		sum->agg_dropped += v->agg_dropped;
		sum->agg_nostack += v->agg_nostack;
		sum->ustr_unreadable += v->ustr_unreadable;
		sum->stack_cut += v->stack_cut;
		sum->stack_lost += v->stack_lost;
		sum->agg_compiled += v->agg_compiled;
		sum->unit_unjudged += v->unit_unjudged;
		sum->unmatched += v->unmatched;
		sum->vars_dropped += v->vars_dropped;
	}
}

uint64_t loader_lost_total(struct loader *l)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 v[ncpu > 0 ? ncpu : 1], sum = 0;
	__u32 zero = 0;

	memset(v, 0, sizeof(v));
	if (ncpu <= 0 || bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.lost_total), &zero, v) < 0)
		return 0;
	for (int c = 0; c < ncpu; c++)
		sum += v[c];
	return sum;
}

int loader_lost_by_cpu(struct loader *l, uint64_t *v, size_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	_cleanup_free_ __u64 *all = NULL;

	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	all = calloc(ncpu, sizeof(*all));
	if (!all)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.lost_total), &zero, all) < 0)
		return -errno;
	for (size_t c = 0; c < n && c < (size_t)ncpu; c++)
		v[c] = all[c];
	return (size_t)ncpu < n ? ncpu : (int)n;
}

/* Each copy has its own .bss: the flag is set in every one. A plain store
 * into the mapped page; the caller then waits for running programs. */
void loader_stop_programs(struct loader *l)
{
	__atomic_store_n(&l->skel->bss->stopped, 1, __ATOMIC_RELEASE);
	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++)
		if (l->extra[k])
			__atomic_store_n(&l->extra[k]->bss->stopped, 1, __ATOMIC_RELEASE);
	if (l->trigger)
		__atomic_store_n(&l->trigger->bss->stopped, 1, __ATOMIC_RELEASE);
}

int loader_prog_count(struct loader *l)
{
	/* The accept program, the class program's copies, and the compiled
	 * filters. */
	int n = 1;

	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++)
		n += l->extra[k] != NULL;
	return n + (l->trigger != NULL) + l->n_filter_progs;
}

/* Another instance of the object for program prog alone, sharing every
 * map with the skeleton but its own .rodata (the same constants) and .bss
 * (its own stop flag, set with the others'). */
static struct tracerd_bpf *open_copy(struct loader *l, size_t prog_off, int *err)
{
	struct tracerd_bpf *s = tracerd_bpf__open();
	struct bpf_program *p;
	struct bpf_map *m;

	if (!s) {
		*err = -errno;
		return NULL;
	}
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == *(struct bpf_program **)((char *)&s->progs + prog_off));
	*s->rodata = *l->skel->rodata;
	s->bss->stopped = l->skel->bss->stopped;
	bpf_object__for_each_map(m, s->obj) {
		const struct bpf_map *from;

		if (bpf_map__is_internal(m))
			continue;
		from = bpf_object__find_map_by_name(l->skel->obj, bpf_map__name(m));
		if (!from || bpf_map__reuse_fd(m, bpf_map__fd(from))) {
			*err = from ? -errno : -ENOENT;
			tracerd_bpf__destroy(s);
			return NULL;
		}
	}
	if (tracerd_bpf__load(s)) {
		*err = -errno;
		tracerd_bpf__destroy(s);
		return NULL;
	}
	return s;
}

/* Copy k of the class program. */
struct bpf_program *loader_instance(struct loader *l, unsigned k, int *err)
{
	struct tracerd_bpf *s = l->extra[k];

	if (s)
		return s->progs.trace_event_class;
	s = open_copy(l, offsetof(__typeof__(s->progs), trace_event_class), err);
	if (!s)
		return NULL;
	l->extra[k] = s;
	return s->progs.trace_event_class;
}

int loader_trigger_init(struct loader *l)
{
	__u32 k = TRACERD_TRIGGER_PROG;
	int fd, r = 0;

	if (l->trigger)
		return 0;
	l->trigger = open_copy(l, offsetof(__typeof__(l->trigger->progs), trace_event_trigger), &r);
	if (!l->trigger)
		return r;
	fd = bpf_program__fd(l->trigger->progs.trace_event_trigger);
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.accept_prog), &k, &fd, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static uint64_t prog_skipped(const struct tracerd_bpf *s)
{
	return s ? prog_fd_skipped(bpf_program__fd(s->progs.trace_event_class)) : 0;
}

/* A copy's skips outlive it: they are part of the accounting. */
void loader_instance_destroy(struct loader *l, unsigned k)
{
	l->skipped_retired += prog_skipped(l->extra[k]);
	tracerd_bpf__destroy(l->extra[k]);
	l->extra[k] = NULL;
}

void loader_instance_unuse(struct loader *l, unsigned k)
{
	if (--l->extra_users[k])
		return;
	loader_instance_destroy(l, k);
}

uint64_t loader_skipped(struct loader *l)
{
	uint64_t n = l->skipped_retired;

	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++)
		n += prog_skipped(l->extra[k]);
	for (unsigned i = 0; i < l->n_filter_progs; i++)
		n += prog_fd_skipped(l->filter_fds[i]);
	return n;
}

/* Unit=: the verdict on one cgroup for one set (UNIT_ACCEPT, UNIT_REJECT). */
int loader_unit_verdict(struct loader *l, unsigned set, uint64_t cgroup_id, unsigned verdict)
{
	struct unit_key k = { .cgroup_id = cgroup_id, .set = set };
	__u32 v = verdict;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.unit_verdicts), &k, &v, BPF_ANY))
		return -errno;
	return 0;
}

int loader_unit_root_level(const struct loader *l)
{
	return l->skel->rodata->unit_root_id ? (int)l->skel->rodata->unit_root_level : -1;
}

/* After verdicts were written: what each CPU remembered of them goes. */
void loader_unit_changed(struct loader *l)
{
	__u32 zero = 0, gen = ++l->unit_gen;

	bpf_map_update_elem(bpf_map__fd(l->skel->maps.unit_gen), &zero, &gen, BPF_ANY);
}

/* Forgets every verdict of a set, once no slot uses it. */
void loader_unit_forget(struct loader *l, unsigned set)
{
	int fd = bpf_map__fd(l->skel->maps.unit_verdicts);
	struct unit_key k, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (next.set == set && bpf_map_delete_elem(fd, &next) == 0)
			prev = NULL;	/* the walk starts over: deleting moved it */
	}
}
