// SPDX-License-Identifier: GPL-2.0
/* Attaching a program to one event's tracepoint, with the event's slot as
 * the BPF cookie: the class program (the first copy not yet on it), or an
 * emitted filter (filter_prog.c) in its place. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "attach/loader_priv.h"
#include "knobs.h"
#include "util.h"

/* Attaches prog_fd to the tracepoint through a perf event that is then
 * disabled. The program runs all the same (the kernel runs the tracepoint's
 * BPF programs whether or not its perf events are enabled), but a disabled
 * event is on no CPU's list of perf events for the tracepoint. libbpf's
 * bpf_program__attach_tracepoint() leaves it enabled on CPU 0: there, every
 * event the program passes on (it returns 1 for other perf users) went
 * through perf_tp_event() over that list, ~15-20 ns per event on CPU 0 alone
 * (bench/reject-floor.py). A BPF link (bpf_link_create()), not a libbpf
 * bpf_link: an emitted program has no bpf_program. */
static int attach_tracepoint(int prog_fd, const struct tp_event *e, unsigned id,
			     struct attachment *a)
{
	/* The slot in the low half (what the programs read as __u32); the
	 * event's id in the high half, which an emitted program writes as
	 * common_type, so that its code is the same for a layout's events. */
	LIBBPF_OPTS(bpf_link_create_opts, opts,
		    .perf_event.bpf_cookie = (uint64_t)e->id << 32 | id);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = e->id,
	};
	_cleanup_close_ int pfd = -1;
	int lfd;

	pfd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	lfd = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &opts);
	if (lfd < 0)
		return -errno;
	a->link_fd = lfd;
	a->perf_fd = TAKE_FD(pfd);
	a->attached = true;
	return 0;
}

/* Attaches the first copy of the class program not yet on this tracepoint
 * (the kernel takes a program once per tracepoint: EEXIST). */
static int attach_any(struct loader *l, const struct tp_event *e, unsigned id,
		      struct attachment *a)
{
	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++) {
		struct bpf_program *prog;
		int r = 0;

		if (!(prog = loader_instance(l, k, &r)))
			return r;
		r = attach_tracepoint(bpf_program__fd(prog), e, id, a);
		if (r >= 0) {
			a->instance = k + 1;
			l->extra_users[k]++;
			return 0;
		}
		if (!l->extra_users[k])	/* loaded for nothing */
			loader_instance_destroy(l, k);
		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

/* TRACERD_TEST_REFUSE=system:name: that event plays one the kernel refuses. */
static bool refuse_on_purpose(const struct tp_event *e)
{
	const char *k = knob_str(KNOB_TEST_REFUSE);
	size_t n = strlen(e->system);

	return k && !strncmp(k, e->system, n) && k[n] == ':' && !strcmp(k + n + 1, e->name);
}

int loader_attach(struct loader *l, const struct tp_event *e, unsigned id, int prog_fd,
		  struct attachment *a)
{
	*a = (struct attachment){ 0 };
	/* Fired by an action (bpf/hist_trigger.bpf.h), on no tracepoint. */
	if (tp_event_is_synthetic(e))
		return 0;
	if (refuse_on_purpose(e))
		return -EPERM;
	if (prog_fd >= 0)	/* an emitted filter: loaded for this selection */
		return attach_tracepoint(prog_fd, e, id, a);
	return attach_any(l, e, id, a);
}

/* Closing the link takes the program off the tracepoint; closing the perf
 * event then unregisters it (the grace periods of detach.c). */
void attachment_close(struct attachment *a)
{
	if (!a->attached)
		return;
	close(a->link_fd);
	close(a->perf_fd);
	a->attached = false;
}

void loader_detach(struct loader *l, struct attachment *a)
{
	if (!a->attached)
		return;
	attachment_close(a);
	if (a->instance)
		loader_instance_unuse(l, a->instance - 1);
}
