// SPDX-License-Identifier: GPL-2.0
/* Loading the class program and attaching it, once per selected event, with
 * the event's slot as the BPF cookie. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
#include "filter/filter.h"
#include "render/render.h"
#include "consume/ringbuf.h"
#include "sink/sink.h"
#include "tracer.h"
#include "self_tgid.skel.h"
#include "tracerd.skel.h"
#include "util.h"

/* A selection being built by tracer_apply, before anything is attached. */
struct sel_build {
	const struct selection *conf;
	struct sel_state *keep;		/* unchanged: reuse this state */
	struct tp_event **events;
	size_t n_events;
	struct event_desc *descs;
	struct hist **hists;		/* Aggregate=, per event; NULL: none */
};

static int64_t realtime_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
}

/* Our tgid in the init PID namespace, which is what the class program gets
 * from bpf_get_current_pid_tgid(); getpid() is the number in our own PID
 * namespace, another one in a container. A tiny raw_tp program, run once by
 * BPF_PROG_TEST_RUN in our context, reads it. */
static int kernel_tgid(uint32_t *tgid)
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
	else
		*tgid = s->bss->tgid;
	self_tgid_bpf__destroy(s);
	return r;
}

/* What is wrong with tracefs, for someone who can fix it. Returns -EACCES
 * when it is there but we may not read it, -ENOMEDIUM when it is not there:
 * the daemon exits with EX_NOPERM or EX_UNAVAILABLE, which the unit does not
 * restart on. */
static int tracefs_error(int r, const char *path, struct diag *d)
{
	struct stat st;

	if (r == -EACCES) {
		if (stat(path, &st) < 0)
			st.st_mode = st.st_uid = st.st_gid = 0;
		diag_set(d, NULL, 0, 0, "cannot read tracefs at %s: %s (mode %04o, owner %u:%u; "
			 "tracerd runs as uid %u and needs CAP_DAC_READ_SEARCH to read it)",
			 path, strerror(-r), st.st_mode & 07777, st.st_uid, st.st_gid, geteuid());
		return -EACCES;
	}
	if (r == -EPERM)	/* only mount() gives this: no CAP_SYS_ADMIN, or seccomp */
		diag_set(d, NULL, 0, 0, "tracefs is not mounted at %s, and tracerd may not mount it "
			 "(%s): mount it first, as root: mount -t tracefs nodev %s",
			 path, strerror(-r), path);
	else if (r != -ENOENT)	/* mount() failed otherwise */
		diag_set(d, NULL, 0, 0, "tracefs is not mounted at %s, and mounting it failed: %s",
			 path, strerror(-r));
	else
		diag_set(d, NULL, 0, 0, "tracefs is not mounted at %s: %s", path, strerror(-r));
	return -ENOMEDIUM;
}

static int load_bpf(struct tracer *t, const struct config *cfg, struct diag *d)
{
	uint32_t tgid = 0;
	int r;

	t->skel = tracerd_bpf__open();
	if (!t->skel) {
		r = -errno;
		diag_set(d, NULL, 0, 0, "cannot open the BPF object: %s", strerror(-r));
		return r;
	}
	bpf_map__set_max_entries(t->skel->maps.rb, cfg->ring_buffer_size);
	t->skel->rodata->wakeup_bytes = cfg->wakeup_bytes;
	r = kernel_tgid(&tgid);
	if (r >= 0) {
		t->skel->rodata->self_tgid = tgid;
		r = tracerd_bpf__load(t->skel);
	}
	if (r < 0) {
		diag_set(d, NULL, 0, 0, "cannot load the BPF program: %s%s", strerror(-r),
			 r == -EPERM ? " (tracerd needs CAP_BPF and CAP_PERFMON)" : "");
		/* The verifier's EACCES is not tracefs's: keep it from EX_NOPERM. */
		return r == -EACCES ? -EINVAL : r;
	}
	return 0;
}

int tracer_new(struct tracer **ret, const struct config *cfg, struct diag *d)
{
	struct tracer *t = calloc(1, sizeof(*t));
	const char *root;
	int r;

	if (!t)
		return -ENOMEM;
	r = tracefs_find(&root);
	if (r < 0) {
		r = tracefs_error(r, root, d);
		goto fail;
	}
	r = tracefs_list_events(&t->available, &t->n_available);
	if (r < 0) {
		diag_set(d, NULL, 0, 0, "cannot list events in %s/available_events: %s%s", root,
			 strerror(-r), r == -EACCES ? " (tracerd needs CAP_DAC_READ_SEARCH)" : "");
		goto fail;
	}
	tp_classes_init(&t->classes);
	if (!cfg)	/* inspection only: no BPF */
		goto done;
	r = load_bpf(t, cfg, d);
	if (r < 0)
		goto fail;
	r = hist_maps_init(&t->hist_maps, bpf_map__fd(t->skel->maps.agg_descs),
			   bpf_map__fd(t->skel->maps.agg_budgets),
			   bpf_map__fd(t->skel->maps.agg_small), bpf_map__fd(t->skel->maps.agg_large));
	if (r < 0) {
		diag_set(d, NULL, 0, 0, "cannot count the CPUs: %s", strerror(-r));
		goto fail;
	}
	r = rb_reader_new(&t->rb, bpf_map__fd(t->skel->maps.rb));
	if (r < 0) {
		diag_set(d, NULL, 0, 0, "cannot set up the ring buffer: %s", strerror(-r));
		goto fail;
	}
	t->realtime_offset_ns = realtime_offset();
done:
	*ret = t;
	return 0;
fail:
	tracer_free(t);
	return r;
}

static int fill_desc(const struct tp_event *e, const struct selection *s,
		     struct event_desc *desc, struct diag *d)
{
	memset(desc, 0, sizeof(*desc));
	desc->fixed_size = e->fixed_size;
	desc->id = e->id;
	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		if (f->kind != TP_FIELD_DATA_LOC && f->kind != TP_FIELD_REL_LOC)
			continue;
		if (desc->n_dyn == TRACERD_MAX_DYN)
			return diag_set(d, s->pos.file, s->pos.line, s->pos.col,
					"%s:%s has more than %d dynamic fields", e->system, e->name,
					TRACERD_MAX_DYN);
		if (f->kind == TP_FIELD_REL_LOC)
			desc->dyn_rel |= 1u << desc->n_dyn;
		desc->dyn_off[desc->n_dyn++] = f->offset;
	}
	return filter_compile(s->filter, e, &s->filter_pos, desc, d);
}

/* Aggregate=: the event's histogram; its records then go to the hash map,
 * and the class program copies the record prefix that the filter, the
 * keys and the sums read, or all of it for a __data_loc string key. */
static int fill_hist(const struct tp_event *e, const struct selection *s,
		     struct event_desc *desc, struct hist **ret, struct diag *d)
{
	int r;

	*ret = NULL;
	if (!s->aggregate || !*s->aggregate)
		return 0;
	r = hist_compile(s->aggregate, e, &s->aggregate_pos, ret, d);
	if (r < 0)
		return r;
	desc->agg = 1;
	desc->filter_span = hist_record_span(*ret, desc);
	return 0;
}

static void build_free(struct sel_build *b)
{
	for (size_t i = 0; b->hists && i < b->n_events; i++)
		hist_free(b->hists[i]);
	free(b->hists);
	free(b->events);
	free(b->descs);
}

static bool str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Whether b can keep a's attachments: the same name, events and filter.
 * Priority= and RateLimit= live in userspace only, and take effect through
 * the new conf that commit() hands the kept state, so keeping the links
 * loses nothing and needs no second copy of the class program. */
static bool same_attachments(const struct selection *a, const struct selection *b)
{
	if (!str_same(a->name, b->name) || !str_same(a->filter, b->filter) ||
	    !str_same(a->aggregate, b->aggregate) || a->n_events != b->n_events)
		return false;
	for (size_t i = 0; i < a->n_events; i++)
		if (strcmp(a->events[i], b->events[i]))
			return false;
	return true;
}

/* Resolves and compiles one selection; touches nothing in the kernel. */
static int build_selection(struct tracer *t, const struct config *cfg, const struct selection *s,
			   struct sel_build *b, struct diag *d)
{
	int r;

	b->conf = s;
	for (size_t i = 0; i < t->n_sels; i++)
		if (same_attachments(t->sels[i]->conf, s)) {
			b->keep = t->sels[i];
			return 0;
		}
	r = resolve_selection(t, s, &b->events, &b->n_events, d);
	if (r < 0)
		return r;
	b->descs = calloc(b->n_events, sizeof(*b->descs));
	b->hists = calloc(b->n_events, sizeof(*b->hists));
	if (!b->descs || !b->hists)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_events; i++) {
		struct render_opts ro = { .raw_pointers = cfg->raw_pointers };

		r = render_prepare(b->events[i], &ro);
		if (r >= 0)
			r = fill_desc(b->events[i], s, &b->descs[i], d);
		if (r >= 0)
			r = fill_hist(b->events[i], s, &b->descs[i], &b->hists[i], d);
		if (r < 0)
			return r;
	}
	return 0;
}

static int slot_alloc(struct tracer *t)
{
	for (unsigned i = 0; i < TRACERD_MAX_EVENTS; i++)
		if (!t->slots[i])
			return i;
	return -ENOSPC;
}

/* Zeroes a slot's counters, so that a reused slot starts from nothing. */
static int slot_reset_stats(struct tracer *t, unsigned id)
{
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ struct event_stats *zero = NULL;

	if (ncpu < 0)
		return ncpu;
	zero = calloc(ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	return bpf_map_update_elem(bpf_map__fd(t->skel->maps.stats), &id, zero, BPF_ANY) ? -errno : 0;
}

/* The index of the Events= word naming e outright, or -1 if only globs matched it. */
static int named_explicitly(const struct selection *s, const struct tp_event *e)
{
	char full[256];

	snprintf(full, sizeof(full), "%s:%s", e->system, e->name);
	for (size_t i = 0; i < s->n_events; i++)
		if (!strcmp(s->events[i], full))
			return i;
	return -1;
}

/* Copy k (>= 1) of the class program, loaded on first use, sharing every
 * map with the first. */
static struct bpf_program *prog_instance(struct tracer *t, unsigned k, int *err)
{
	struct tracerd_bpf *s = t->extra[k];

	if (s)
		return s->progs.trace_event_class;
	s = tracerd_bpf__open();
	if (!s) {
		*err = -errno;
		return NULL;
	}
	s->rodata->wakeup_bytes = t->skel->rodata->wakeup_bytes;
	s->rodata->self_tgid = t->skel->rodata->self_tgid;
	if (bpf_map__reuse_fd(s->maps.rb, bpf_map__fd(t->skel->maps.rb)) ||
	    bpf_map__reuse_fd(s->maps.events, bpf_map__fd(t->skel->maps.events)) ||
	    bpf_map__reuse_fd(s->maps.stats, bpf_map__fd(t->skel->maps.stats)) ||
	    bpf_map__reuse_fd(s->maps.scratch, bpf_map__fd(t->skel->maps.scratch)) ||
	    bpf_map__reuse_fd(s->maps.agg_descs, bpf_map__fd(t->skel->maps.agg_descs)) ||
	    bpf_map__reuse_fd(s->maps.agg_budgets, bpf_map__fd(t->skel->maps.agg_budgets)) ||
	    bpf_map__reuse_fd(s->maps.agg_small, bpf_map__fd(t->skel->maps.agg_small)) ||
	    bpf_map__reuse_fd(s->maps.agg_large, bpf_map__fd(t->skel->maps.agg_large)) ||
	    tracerd_bpf__load(s)) {
		*err = -errno;
		tracerd_bpf__destroy(s);
		return NULL;
	}
	t->extra[k] = s;
	return s->progs.trace_event_class;
}

/* What the kernel counted for a program: runs it skipped because another
 * BPF program was running on that CPU. Read through bpf(BPF_OBJ_GET_INFO_BY_FD),
 * which, unlike a map syscall, does not hold the CPU's BPF-active count. */
static uint64_t prog_skipped(const struct tracerd_bpf *s)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = s ? bpf_program__fd(s->progs.trace_event_class) : -1;

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return 0;
	return info.recursion_misses;
}

/* A copy's skips outlive it: they are part of the accounting. */
static void instance_destroy(struct tracer *t, unsigned k)
{
	t->skipped_retired += prog_skipped(t->extra[k]);
	tracerd_bpf__destroy(t->extra[k]);
	t->extra[k] = NULL;
}

uint64_t tracer_skipped(struct tracer *t)
{
	uint64_t n = t->skipped_retired + prog_skipped(t->skel);

	for (unsigned k = 1; k < TRACERD_PROG_INSTANCES; k++)
		n += prog_skipped(t->extra[k]);
	return n;
}

static void instance_unuse(struct tracer *t, unsigned k)
{
	if (k == 0 || --t->extra_users[k])
		return;
	instance_destroy(t, k);
}

/* libbpf's warnings as usual, except while probing for a free copy: an
 * EEXIST there is expected, and a real failure gets our own message. */
static bool libbpf_quiet;
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || libbpf_quiet)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Attaches prog to the tracepoint through a perf event that is then
 * disabled. The program runs all the same (the kernel runs the tracepoint's
 * BPF programs whether or not its perf events are enabled), but a disabled
 * event is on no CPU's list of perf events for the tracepoint. libbpf's
 * bpf_program__attach_tracepoint() leaves it enabled on CPU 0: there, every
 * event the program passes on (it returns 1 for other perf users) went
 * through perf_tp_event() over that list, ~15-20 ns per event on CPU 0 alone
 * (bench/reject-floor.py). */
static struct bpf_link *attach_tracepoint(struct bpf_program *prog, const struct tp_event *e,
					  unsigned id)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = id);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = e->id,
	};
	struct bpf_link *link;
	int pfd, err;

	pfd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return NULL;
	link = bpf_program__attach_perf_event_opts(prog, pfd, &opts);
	if (!link) {
		err = errno;
		close(pfd);
		errno = err;
		return NULL;
	}
	/* The link owns pfd now: bpf_link__destroy() closes it. */
	if (ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0) < 0) {
		err = errno;
		bpf_link__destroy(link);
		errno = err;
		return NULL;
	}
	return link;
}

/* Attaches the first copy of the class program not yet on this tracepoint. */
static struct bpf_link *attach_any(struct tracer *t, const struct tp_event *e, unsigned id,
				   unsigned *instance)
{

	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++) {
		struct bpf_program *prog = t->skel->progs.trace_event_class;
		struct bpf_link *link;
		int err = 0;

		if (k > 0 && !(prog = prog_instance(t, k, &err))) {
			errno = -err;
			return NULL;
		}
		libbpf_set_print(libbpf_print);
		libbpf_quiet = true;
		link = attach_tracepoint(prog, e, id);
		libbpf_quiet = false;
		if (link) {
			*instance = k;
			if (k > 0)
				t->extra_users[k]++;
			return link;
		}
		err = errno;
		if (k > 0 && !t->extra_users[k])	/* loaded for nothing */
			instance_destroy(t, k);
		if (err != EEXIST) {
			errno = err;
			return NULL;
		}
	}
	errno = EEXIST;
	return NULL;
}

/* Returns -errno; *refused tells that the kernel refused the attachment. */
static int slot_attach(struct tracer *t, struct sel_state *st, struct tp_event *e,
		       const struct event_desc *desc, struct hist **hist, bool *refused,
		       struct diag *d)
{
	struct trace_slot *slot;
	int id = slot_alloc(t), r;

	if (id < 0)
		return diag_set(d, st->conf->pos.file, st->conf->pos.line, 0,
				"more than %d events selected", TRACERD_MAX_EVENTS);
	slot = calloc(1, sizeof(*slot));
	if (!slot || GROW(st->slots, st->cap_slots, st->n_slots) < 0) {
		free(slot);
		return -ENOMEM;
	}
	r = slot_reset_stats(t, id);
	if (!r && *hist)	/* before the descriptor that sends events to it */
		r = hist_slot_setup(&t->hist_maps, id, &(*hist)->desc);
	if (!r && bpf_map_update_elem(bpf_map__fd(t->skel->maps.events), &id, desc, BPF_ANY))
		r = -errno;
	if (r < 0) {
		free(slot);
		return diag_set(d, NULL, 0, 0, "cannot write the BPF maps: %s", strerror(-r)), r;
	}
	slot->link = attach_any(t, e, id, &slot->instance);
	if (!slot->link) {
		r = -errno;
		free(slot);
		*refused = true;
		return r;
	}
	slot->id = id;
	slot->hist = TAKE_PTR(*hist);
	slot->refs = 1;
	slot->event = e;
	slot->sel = st;
	t->slots[id] = slot;
	st->slots[st->n_slots++] = slot;
	return 0;
}

static void slot_detach(struct tracer *t, struct trace_slot *slot)
{
	if (!slot->link)
		return;
	bpf_link__destroy(slot->link);
	slot->link = NULL;
	instance_unuse(t, slot->instance);
}

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/* t->busy, at most once a second. */
static void busy(struct tracer *t, size_t done, size_t total)
{
	uint64_t now = mono_usec();

	if (!t->busy || now - t->busy_last_usec < 1000000)
		return;
	t->busy_last_usec = now;
	t->busy(t->busy_userdata, done, total);
}

/* Destroying a link waits for RCU grace periods in the kernel: closing a
 * tracepoint perf event takes event_mutex and, under it, waits for the
 * tracepoint's unregistration (tasks-trace RCU, then RCU): 50-80 ms an
 * event here, one event at a time whatever the number of threads. Threads
 * still help a little (~30% with 64), since the rest of a link's release
 * overlaps. The caller waits, calling busy() as links go. */
#define DETACH_THREADS 64

struct detach_work {
	struct trace_slot **slots;
	size_t n, next;		/* next: taken with __atomic_fetch_add */
	size_t done;		/* under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *detach_worker(void *arg)
{
	struct detach_work *w = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n) {
		bpf_link__destroy(w->slots[i]->link);
		w->slots[i]->link = NULL;
		pthread_mutex_lock(&w->lock);
		w->done++;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/* Waits for the workers, reporting progress every second. */
static void detach_wait(struct tracer *t, struct detach_work *w)
{
	pthread_mutex_lock(&w->lock);
	while (w->done < w->n) {
		struct timespec ts;
		size_t done;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec++;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		done = w->done;
		pthread_mutex_unlock(&w->lock);
		busy(t, done, w->n);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
}

static void detach_slots(struct tracer *t, struct trace_slot **slots, size_t n)
{
	struct detach_work w = { .slots = slots, .n = n, .lock = PTHREAD_MUTEX_INITIALIZER };
	unsigned drops[TRACERD_PROG_INSTANCES] = { 0 };
	pthread_t th[DETACH_THREADS];
	pthread_condattr_t ca;
	size_t started = 0;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);
	for (size_t i = 0; i < n; i++)
		if (slots[i]->link)
			drops[slots[i]->instance]++;
	/* A thread for every 8 links: a few events need none. */
	for (size_t i = 0; i < DETACH_THREADS && (i + 1) * 8 < n; i++)
		if (pthread_create(&th[started], NULL, detach_worker, &w) == 0)
			started++;
	if (!started)
		detach_worker(&w);
	detach_wait(t, &w);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_cond_destroy(&w.cond);
	/* copies of the class program go once their links have */
	for (unsigned k = 1; k < TRACERD_PROG_INSTANCES; k++)
		while (drops[k]--)
			instance_unuse(t, k);
}

static int note_refused(struct sel_state *st, const struct tp_event *e, int err)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s:%s (%s)", e->system, e->name, strerror(-err));
	if (GROW(st->refused, st->cap_refused, st->n_refused) < 0 ||
	    !(st->refused[st->n_refused] = strdup(buf)))
		return -ENOMEM;
	st->n_refused++;
	return 0;
}

static int attach_selection(struct tracer *t, struct sel_build *b, struct sel_state **ret,
			    struct diag *d)
{
	struct sel_state *st = calloc(1, sizeof(*st));
	const struct selection *s = b->conf;
	int r = 0;

	if (!st)
		return -ENOMEM;
	st->conf = s;
	st->tokens = s->rate_burst;
	*ret = st;
	for (size_t i = 0; i < b->n_events && r >= 0; i++) {
		struct tp_event *e = b->events[i];
		bool refused = false;
		int gi;

		busy(t, i, b->n_events);
		r = slot_attach(t, st, e, &b->descs[i], &b->hists[i], &refused, d);
		if (r >= 0 || !refused)
			continue;
		/* An event a glob matched may be one the kernel keeps from BPF
		 * (ftrace: internals): note it. One named outright must attach. */
		gi = named_explicitly(s, e);
		if (gi < 0)
			r = note_refused(st, e, r);
		else
			diag_set(d, s->events_file, s->event_lines[gi], s->event_cols[gi],
				 "the kernel refused to attach to %s:%s: %s", e->system, e->name,
				 strerror(-r));
	}
	return r;
}

/* Detaches every slot of st, drains what they already wrote, frees st. */
static void sel_state_free(struct tracer *t, struct sel_state *st)
{
	if (!st)
		return;
	detach_slots(t, st->slots, st->n_slots);
	if (t->rb)
		tracer_drain_all(t);
	for (size_t i = 0; i < st->n_slots; i++) {
		hist_out_last(t, st->slots[i], "replaced");
		t->slots[st->slots[i]->id] = NULL;
		/* records still in the sink queue hold their own reference */
		trace_slot_unref(st->slots[i]);
	}
	free(st->slots);
	strv_free(st->refused, st->n_refused);
	free(st);
}

static bool kept(struct sel_build *b, size_t n, const struct sel_state *st)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].keep == st)
			return true;
	return false;
}

/* Swaps in the new selection states and config; frees the old ones. */
static int commit(struct tracer *t, struct config *cfg, struct sel_build *b, size_t n,
		  struct sel_state **fresh)
{
	struct sel_state **sels = calloc(n ? n : 1, sizeof(*sels));

	if (!sels)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		sels[i] = b[i].keep ? b[i].keep : fresh[i];
		sels[i]->conf = &cfg->sels[i];
	}
	for (size_t i = 0; i < t->n_sels; i++)
		if (!kept(b, n, t->sels[i]))
			sel_state_free(t, t->sels[i]);
	free(t->sels);
	t->sels = sels;
	t->n_sels = t->cap_sels = n;
	config_free(&t->cfg);
	t->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	return 0;
}

/* Entries of the histograms' maps that slots may take: size= of each, in
 * both generations. The running slots count too: a changed selection is
 * attached before the old one goes. */
static void hist_room_add(const struct hist *h, uint64_t used[2])
{
	if (h)
		used[h->desc.large] += 2ULL * h->desc.max_entries;
}

static int check_hist_room(struct tracer *t, struct sel_build *b, size_t n, struct diag *d)
{
	static const uint64_t room[2] = { TRACERD_AGG_SMALL_ENTRIES, TRACERD_AGG_LARGE_ENTRIES };
	uint64_t used[2] = { 0, 0 };

	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++)
			hist_room_add(t->sels[i]->slots[k]->hist, used);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; !b[i].keep && b[i].hists && k < b[i].n_events; k++)
			hist_room_add(b[i].hists[k], used);
		for (int c = 0; c < 2; c++)
			if (used[c] > room[c])
				return diag_set(d, b[i].conf->aggregate_pos.file,
						b[i].conf->aggregate_pos.line, b[i].conf->aggregate_pos.col,
						"the histograms' size= over all their events (twice: "
						"one generation is read while the other counts) exceed "
						"the %llu entries of the map for %s keys: lower size=",
						(unsigned long long)room[c],
						c ? "keys of more than 24 bytes" : "keys of up to 24 bytes");
	}
	return 0;
}

int tracer_check(struct tracer *t, const struct config *cfg, struct diag *d)
{
	int r = 0;

	for (size_t i = 0; i < cfg->n_sels && r >= 0; i++) {
		struct sel_build b = { 0 };

		r = build_selection(t, cfg, &cfg->sels[i], &b, d);
		build_free(&b);
	}
	return r;
}

int tracer_apply(struct tracer *t, struct config *cfg, struct diag *d)
{
	size_t n = cfg->n_sels;
	struct sel_build *b = calloc(n ? n : 1, sizeof(*b));
	struct sel_state **fresh = calloc(n ? n : 1, sizeof(*fresh));
	int r = b && fresh ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && r >= 0; i++)
		r = build_selection(t, cfg, &cfg->sels[i], &b[i], d);
	if (r >= 0)
		r = check_hist_room(t, b, n, d);
	/* New attachments first: an event in both old and new config is then
	 * traced twice for a moment rather than not at all. */
	for (size_t i = 0; i < n && r >= 0; i++)
		if (!b[i].keep)
			r = attach_selection(t, &b[i], &fresh[i], d);
	if (r >= 0)
		r = commit(t, cfg, b, n, fresh);
	for (size_t i = 0; i < n; i++) {
		/* a failed reload's new slots: their counts go unreported */
		for (size_t k = 0; r < 0 && fresh && fresh[i] && k < fresh[i]->n_slots; k++)
			fresh[i]->slots[k]->hist_done = true;
		if (r < 0)
			sel_state_free(t, fresh ? fresh[i] : NULL);
		if (b)
			build_free(&b[i]);
	}
	free(b);
	free(fresh);
	return r;
}

int tracer_drain(struct tracer *t)
{
	int r;

	r = rb_reader_consume(t->rb, tracer_on_record, t, TRACER_DRAIN_BUDGET, TRACER_DRAIN_USEC);
	if (t->sink)
		sink_flush(t->sink);
	return r;
}

void tracer_drain_all(struct tracer *t)
{
	while (tracer_drain(t) > 0)
		;
}

static void add_bpf_stats(struct tracer *t, unsigned id, struct sel_totals *tot)
{
	int ncpu = libbpf_num_possible_cpus();
	struct event_stats v[ncpu > 0 ? ncpu : 1];

	if (ncpu <= 0)
		return;
	/* The kernel fills every CPU's value; valgrind believes only the first,
	 * and would flag every sum below without this. */
	memset(v, 0, sizeof(v));
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stats), &id, v))
		return;
	for (int c = 0; c < ncpu; c++) {
		tot->hits += v[c].hits;
		tot->filtered += v[c].filtered;
		tot->lost += v[c].lost;
		tot->truncated += v[c].truncated;
		tot->aggregated += v[c].aggregated;
		tot->agg_dropped += v[c].agg_dropped;
	}
}

void tracer_slot_totals(struct tracer *t, const struct trace_slot *slot, struct sel_totals *tot)
{
	add_bpf_stats(t, slot->id, tot);
	trace_slot_add_counts(slot, tot);
}

void tracer_totals(struct tracer *t, const struct sel_state *s, struct sel_totals *tot)
{
	memset(tot, 0, sizeof(*tot));
	for (size_t i = 0; i < s->n_slots; i++)
		tracer_slot_totals(t, s->slots[i], tot);
}

/* Programs loaded by this tracer: the class program, however many events. */
int tracer_prog_count(struct tracer *t)
{
	int n = 0;
	struct bpf_program *p;

	bpf_object__for_each_program(p, t->skel->obj)
		n += bpf_program__fd(p) >= 0;
	for (unsigned k = 1; k < TRACERD_PROG_INSTANCES; k++)
		n += t->extra[k] != NULL;
	return n;
}

/* Detaches every event, drains what they wrote, and lets the sink finish
 * (in bounded time): after this, the counters are final. */
void tracer_stop(struct tracer *t)
{
	_cleanup_free_ struct trace_slot **all = NULL;
	size_t n = 0;

	for (size_t i = 0; i < t->n_sels; i++)
		n += t->sels[i]->n_slots;
	all = calloc(n ? n : 1, sizeof(*all));
	n = 0;
	for (size_t i = 0; i < t->n_sels; i++)
		for (size_t k = 0; k < t->sels[i]->n_slots; k++) {
			if (!t->sels[i]->slots[k]->link)
				continue;
			if (all)
				all[n++] = t->sels[i]->slots[k];
			else	/* no memory: one by one */
				slot_detach(t, t->sels[i]->slots[k]);
		}
	if (all)
		detach_slots(t, all, n);
	if (t->rb)
		tracer_drain_all(t);
	/* Nothing counts any more: the histograms' last dumps are exact. */
	hist_out_stop(t);
	sink_close(t->sink);
}

void tracer_free(struct tracer *t)
{
	if (!t)
		return;
	/* The sink queue's writer reads events and slots: stop it first. */
	if (t->sink)
		tracer_stop(t);
	for (size_t i = 0; i < t->n_sels; i++)
		sel_state_free(t, t->sels[i]);
	free(t->sels);
	sink_free(t->sink);
	rb_reader_free(t->rb);
	for (unsigned k = 1; k < TRACERD_PROG_INSTANCES; k++)
		tracerd_bpf__destroy(t->extra[k]);
	tracerd_bpf__destroy(t->skel);
	for (size_t i = 0; i < t->n_events; i++) {
		render_release(t->events[i]);
		tp_event_free(t->events[i]);
	}
	free(t->events);
	tp_classes_free(&t->classes);
	strv_free(t->available, t->n_available);
	config_free(&t->cfg);
	sb_free(&t->text);
	free(t);
}
