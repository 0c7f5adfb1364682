// SPDX-License-Identifier: GPL-2.0
/* Attaching the class program to one event's tracepoint, with the event's
 * slot as the BPF cookie, through the first copy not yet on it. */
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "attach/loader_priv.h"
#include "util.h"

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
static struct bpf_link *attach_any(struct loader *l, const struct tp_event *e, unsigned id,
				   unsigned *instance)
{
	for (unsigned k = 0; k < TRACERD_PROG_INSTANCES; k++) {
		struct bpf_program *prog = l->skel->progs.trace_event_class;
		struct bpf_link *link;
		int err = 0;

		if (k > 0 && !(prog = loader_instance(l, k, &err))) {
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
				l->extra_users[k]++;
			return link;
		}
		err = errno;
		if (k > 0 && !l->extra_users[k])	/* loaded for nothing */
			loader_instance_destroy(l, k);
		if (err != EEXIST) {
			errno = err;
			return NULL;
		}
	}
	errno = EEXIST;
	return NULL;
}

int loader_attach(struct loader *l, const struct tp_event *e, unsigned id, struct attachment *a)
{
	a->link = attach_any(l, e, id, &a->instance);
	return a->link ? 0 : -errno;
}

void loader_detach(struct loader *l, struct attachment *a)
{
	if (!a->link)
		return;
	bpf_link__destroy(a->link);
	a->link = NULL;
	loader_instance_unuse(l, a->instance);
}
