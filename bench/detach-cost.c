// SPDX-License-Identifier: GPL-2.0
/* What detaching costs, by way of detaching: attaches tracerd's class
 * program to the first N events of a system (as tracerd does: a perf event
 * per tracepoint, disabled, with a BPF link), then detaches them one way
 * and prints the time per event. The kernel waits for a grace period when
 * the last perf event of a tracepoint goes (perf_trace_event_unreg ->
 * tracepoint_synchronize_unregister, under event_mutex); this measures
 * whether any order or path avoids it.
 *
 *   detach-cost SYSTEM N WAY
 *   WAY: link      bpf_link__destroy() each (link fd, then perf fd), one thread
 *        threads   the same from 16 threads
 *        split     every link fd first, then every perf fd, each from 16 threads
 *        links     every link fd first, then every perf fd (timed apart)
 *        ioctl     attached with PERF_EVENT_IOC_SET_BPF (no link): close each perf fd
 *        exit      a child attaches, is SIGKILLed; time until it is reaped */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tracerd.skel.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The ids of the first n events of system, from tracefs. */
static int event_ids(const char *system, int n, int *ids)
{
	FILE *f = fopen("/sys/kernel/tracing/available_events", "r");
	char line[512], path[768];
	int k = 0;

	if (!f)
		return -1;
	while (k < n && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		FILE *idf;

		line[strcspn(line, "\n")] = 0;
		if (!colon || strncmp(line, system, colon - line) || system[colon - line])
			continue;
		*colon = '/';
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", line);
		idf = fopen(path, "r");
		if (idf && fscanf(idf, "%d", &ids[k]) == 1)
			k++;
		if (idf)
			fclose(idf);
	}
	fclose(f);
	return k;
}

static int pfds[8192];
static struct bpf_link *links[8192];
static int n_att;

static int attach(struct tracerd_bpf *s, const int *ids, int n, int use_link)
{
	int prog = bpf_program__fd(s->progs.trace_event_class);

	for (n_att = 0; n_att < n; n_att++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = ids[n_att],
		};
		LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = n_att);

		pfds[n_att] = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (pfds[n_att] < 0)
			return -errno;
		if (use_link) {
			links[n_att] = bpf_program__attach_perf_event_opts(s->progs.trace_event_class,
									   pfds[n_att], &opts);
			if (!links[n_att])
				return -errno;
		} else if (ioctl(pfds[n_att], PERF_EVENT_IOC_SET_BPF, prog) < 0) {
			return -errno;
		}
		ioctl(pfds[n_att], PERF_EVENT_IOC_DISABLE, 0);
	}
	return 0;
}

/* 0: bpf_link__destroy; 1: the link fd only; 2: the perf fd only. */
static int next, step;
static void *worker(void *arg)
{
	int i;

	(void)arg;
	while ((i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED)) < n_att) {
		if (step == 0) {
			bpf_link__destroy(links[i]);
		} else if (step == 1) {
			close(bpf_link__fd(links[i]));
			bpf_link__disconnect(links[i]);	/* destroy frees, closes nothing */
			bpf_link__destroy(links[i]);
		} else {
			close(pfds[i]);
		}
	}
	return NULL;
}

static void run_threads(int s)
{
	pthread_t th[16];

	step = s;
	next = 0;
	for (int i = 0; i < 16; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	static int ids[8192];
	struct tracerd_bpf *s;
	const char *way;
	double t0, t1;
	int n, r;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SYSTEM N link|threads|split|links|ioctl|exit\n", argv[0]);
		return 2;
	}
	way = argv[3];
	n = event_ids(argv[1], atoi(argv[2]) > 8192 ? 8192 : atoi(argv[2]), ids);
	if (n <= 0)
		return 1;
	if (!strcmp(way, "exit")) {
		int p[2];
		pid_t pid;
		char c;

		if (pipe(p) < 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			s = tracerd_bpf__open_and_load();
			r = s ? attach(s, ids, n, 1) : -1;
			c = r < 0 ? 'x' : 'k';
			if (write(p[1], &c, 1) < 0 || r < 0)
				_exit(1);
			pause();
			_exit(0);
		}
		if (read(p[0], &c, 1) != 1 || c != 'k')
			return 1;
		t0 = now();
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		t1 = now();
		printf("%s %d events, exit: %.0f ms, %.1f ms/event\n", argv[1], n, (t1 - t0) * 1e3,
		       (t1 - t0) * 1e3 / n);
		return 0;
	}
	s = tracerd_bpf__open_and_load();
	if (!s)
		return 1;
	r = attach(s, ids, n, strcmp(way, "ioctl") != 0);
	if (r < 0) {
		fprintf(stderr, "attach: %s after %d\n", strerror(-r), n_att);
		return 1;
	}
	t0 = now();
	t1 = 0;
	if (!strcmp(way, "link")) {
		for (int i = 0; i < n_att; i++)
			bpf_link__destroy(links[i]);	/* closes pfds[i] too */
	} else if (!strcmp(way, "threads")) {
		run_threads(0);
	} else if (!strcmp(way, "split")) {
		run_threads(1);
		t1 = now();
		run_threads(2);
	} else if (!strcmp(way, "links")) {
		/* The link fds: the programs go; the perf events stay open. */
		for (int i = 0; i < n_att; i++) {
			close(bpf_link__fd(links[i]));
			bpf_link__disconnect(links[i]);	/* destroy frees, closes nothing */
			bpf_link__destroy(links[i]);
		}
		t1 = now();
		for (int i = 0; i < n_att; i++)
			close(pfds[i]);
	} else {
		for (int i = 0; i < n_att; i++)
			close(pfds[i]);
	}
	printf("%s %d events, %s: %.0f ms, %.1f ms/event", argv[1], n_att, way,
	       (now() - t0) * 1e3, (now() - t0) * 1e3 / n_att);
	if (t1)
		printf(" (link fds %.0f ms, then perf fds %.0f ms)", (t1 - t0) * 1e3, (now() - t1) * 1e3);
	printf("\n");
	tracerd_bpf__destroy(s);
	return 0;
}
