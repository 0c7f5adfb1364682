/* SPDX-License-Identifier: GPL-2.0 */
/* For the bench loaders: attaches a program to a tracepoint as tracerd
 * does (daemon/attach/attach.c): a perf event opened on CPU 0, disabled,
 * then linked, with BPF cookie 3. NULL on failure. Not part of tracerd. */
#ifndef BENCH_ATTACH_DISABLED_H
#define BENCH_ATTACH_DISABLED_H

#include <linux/perf_event.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static struct bpf_link *attach_disabled(struct bpf_program *p, const char *system, const char *event)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a) };
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = 3);
	struct bpf_link *l;
	char path[512];
	int id = -1, pfd;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/id", system, event);
	if (!(f = fopen(path, "r")))
		return NULL;
	if (fscanf(f, "%d", &id) != 1)
		id = -1;
	fclose(f);
	if (id < 0)
		return NULL;
	a.config = id;
	pfd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return NULL;
	if (!(l = bpf_program__attach_perf_event_opts(p, pfd, &po)) || ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0)) {
		bpf_link__destroy(l);
		close(pfd);
		return NULL;
	}
	return l;	/* the link owns pfd */
}

#endif
