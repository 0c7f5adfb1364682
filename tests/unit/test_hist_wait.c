// SPDX-License-Identifier: GPL-2.0
/* hist_wait_programs (aggregate/hist_map.c), the wait between flipping a
 * histogram's generation and reading the old one out, against a real BPF
 * program that is running when it is called (root): tests/tools/spin.bpf.c
 * spins for 100 ms in another thread. The wait must return after the
 * program ended. A 1 ms sleep, tracerd's wait before, returns while the
 * program still runs: the test tells the two apart. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include "aggregate/hist_map.h"
#include "spin.skel.h"
#include "test.h"

#define SPIN_NS 100000000ULL

struct spinner {
	struct spin_bpf *skel;
	pthread_t thread;
	cpu_set_t was;		/* the test thread's CPUs before */
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns's clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *run(void *p)
{
	struct spinner *s = p;
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	s->err = bpf_prog_test_run_opts(bpf_program__fd(s->skel->progs.spin), &opts) < 0 ? -errno : 0;
	return NULL;
}

/* The program runs with preemption off: the test thread must be on another
 * CPU to act meanwhile, so the two are pinned to two different CPUs. */
static bool two_cpus(const cpu_set_t *all, cpu_set_t *spin, cpu_set_t *test)
{
	int n = 0;

	CPU_ZERO(spin);
	CPU_ZERO(test);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, all))
			CPU_SET(c, n++ ? test : spin);
	return n == 2;
}

/* Starts the program in a thread; returns once it runs. */
static bool start(struct spinner *s)
{
	uint64_t deadline = now_ns() + 5000000000ULL;
	cpu_set_t spin, test;
	pthread_attr_t attr;
	int r;

	if (sched_getaffinity(0, sizeof(s->was), &s->was) < 0 || !two_cpus(&s->was, &spin, &test) ||
	    sched_setaffinity(0, sizeof(test), &test) < 0) {
		EXPECT(0, "needs two CPUs to run on");
		return false;
	}
	s->skel = spin_bpf__open_and_load();
	if (!s->skel) {
		EXPECT(0, "cannot load tests/tools/spin.bpf.c: %s (root needed)", strerror(errno));
		sched_setaffinity(0, sizeof(s->was), &s->was);
		return false;
	}
	s->skel->bss->spin_ns = SPIN_NS;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(spin), &spin);
	r = pthread_create(&s->thread, &attr, run, s);
	pthread_attr_destroy(&attr);
	if (r) {
		EXPECT(0, "pthread_create failed");
		spin_bpf__destroy(s->skel);
		sched_setaffinity(0, sizeof(s->was), &s->was);
		return false;
	}
	while (!__atomic_load_n(&s->skel->bss->started_ns, __ATOMIC_ACQUIRE) && now_ns() < deadline)
		;
	return true;
}

/* Joins the thread; *ended is when the program returned (0: it never ran). */
static void finish(struct spinner *s, uint64_t *ended)
{
	pthread_join(s->thread, NULL);
	EXPECT(s->err == 0, "test run: %s", strerror(-s->err));
	*ended = s->skel->bss->ended_ns;
	spin_bpf__destroy(s->skel);
	sched_setaffinity(0, sizeof(s->was), &s->was);
}

static void waits_for_a_running_program(void)
{
	struct hist_maps m;
	struct spinner s = { 0 };
	uint64_t called, returned, ended;
	int r;

	r = hist_maps_init(&m, -1, -1, (const int[AGG_MAPS]){ -1, -1, -1 }, -1);
	EXPECT(r == 0, "hist_maps_init: %s", strerror(-r));
	if (r < 0 || !start(&s))
		return hist_maps_close(&m);
	called = now_ns();
	r = hist_wait_programs(&m);
	returned = now_ns();
	finish(&s, &ended);
	hist_maps_close(&m);
	EXPECT(r == 0, "hist_wait_programs: %s", strerror(-r));
	/* Called with most of the spin still ahead, else it proves nothing. */
	EXPECT(ended > called + SPIN_NS / 2, "called %.1f ms before the program ended",
	       ((double)ended - (double)called) / 1e6);
	EXPECT(returned >= ended, "returned %.1f ms before the program ended",
	       ((double)ended - (double)returned) / 1e6);
}

static void a_short_sleep_does_not(void)
{
	struct timespec ms = { 0, 1000000 };
	struct spinner s = { 0 };
	uint64_t returned, ended;

	if (!start(&s))
		return;
	nanosleep(&ms, NULL);
	returned = now_ns();
	finish(&s, &ended);
	EXPECT(ended > returned, "a 1 ms sleep outlasted the %llu ms program",
	       SPIN_NS / 1000000ULL);
}

int main(void)
{
	cpu_set_t all, spin, test;

	/* One CPU cannot run the program and the test side by side. */
	if (sched_getaffinity(0, sizeof(all), &all) < 0 || !two_cpus(&all, &spin, &test)) {
		printf("ok - waits_for_a_running_program # SKIP needs two CPUs\n");
		return 0;
	}
	RUN(waits_for_a_running_program);
	RUN(a_short_sleep_does_not);
	return TEST_EXIT();
}
