// SPDX-License-Identifier: GPL-2.0
/* bpf_beside: a second BPF user of the hot events beside tracerd, and an
 * observer that tells why a tracepoint program misses a firing (see
 * bpf_beside.bpf.c). For tests/integration/kernel_skips.sh.
 *
 *   bpf_beside [--spin N] [--no-beside] [--exclude-tgid PID] [--watch-prog ID]...
 *              [--also SYS:EVENT]... [--seconds S]
 *
 * Attaches, prints "ready", counts for S seconds (or until SIGINT/SIGTERM),
 * then prints per event what the observers saw in that window (CLOCK_MONOTONIC,
 * as bpf_ktime_get_ns), the rise of the watched programs' recursion_misses
 * over it, and the commonest contexts of the firings the perf path dropped. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpf_beside.skel.h"

#define N_EVENTS 6
static const char *const events[N_EVENTS][2] = {
	{ "sched", "sched_switch" },	 { "sched", "sched_wakeup" },
	{ "timer", "hrtimer_start" },	 { "timer", "hrtimer_expire_entry" },
	{ "irq", "softirq_raise" },	 { "irq", "softirq_entry" },
};

/* As in the BPF object. */
struct counts {
	__u64 fired, perf_busy, bpf_busy, self_fired, self_perf_busy, self_bpf_busy, beside;
	__u64 level[4];
	__u64 unknown;
};
struct sample {
	__u64 ts;
	__u32 event, cpu, pid, tgid;
	__u32 preempt_count, level;
	__u32 prev_event, pad;
	__u64 prev_ts;
	char comm[16];
	__u64 stack[32];
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __u64 prog_misses(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.recursion_misses;
}

static __u64 watched_misses(const int *fds, int n)
{
	__u64 sum = 0;

	for (int i = 0; i < n; i++)
		sum += prog_misses(fds[i]);
	return sum;
}

/* The offsets in .data..percpu of the per-CPU variables the observers read. */
static int percpu_offsets(struct bpf_beside_bpf *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *sec;
	const struct btf_var_secinfo *v;
	int id, found = 0;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	if (id < 0)
		goto out;
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);

		if (!strcmp(name, "runqueues"))
			skel->rodata->off_runqueues = v->offset, found |= 1;
		else if (!strcmp(name, "__preempt_count"))
			skel->rodata->off_preempt_count = v->offset, found |= 2;
		else if (!strcmp(name, "bpf_prog_active"))
			skel->rodata->off_bpf_prog_active = v->offset, found |= 4;
	}
out:
	btf__free(btf);
	if (found != 7)
		fprintf(stderr, "per-CPU variables not found in vmlinux BTF\n");
	return found == 7 ? 0 : -1;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	int r = (int)x->event - (int)y->event;

	if (!r)
		r = (int)x->level - (int)y->level;
	if (!r)
		r = strncmp(x->comm, y->comm, sizeof(x->comm));
	if (!r)
		r = (int)x->prev_event - (int)y->prev_event;
	return r;
}

static int cmp_sym(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The text symbol at or below addr, from /proc/kallsyms (loaded once). */
static const char *ksym(__u64 addr)
{
	static struct { __u64 a; char *name; } *syms;
	static size_t n;
	static char buf[160];
	size_t lo = 0, hi;

	if (!syms) {
		FILE *f = fopen("/proc/kallsyms", "r");
		char line[256], t, name[128];
		unsigned long long a;
		size_t cap = 0;

		if (!f)
			return "?";
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c %127s", &a, &t, name) == 3 && (t == 't' || t == 'T')) {
				if (n == cap) {
					void *p = realloc(syms, (cap = cap ? 2 * cap : 65536) * sizeof(*syms));

					if (!p)
						break;
					syms = p;
				}
				syms[n].a = a;
				syms[n++].name = strdup(name);
			}
		fclose(f);
		qsort(syms, n, sizeof(*syms), cmp_sym);
	}
	hi = n;
	while (lo + 1 < hi) {	/* kallsyms is sorted by address */
		size_t mid = (lo + hi) / 2;

		if (syms[mid].a <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (!n || syms[lo].a > addr)
		return "?";
	snprintf(buf, sizeof(buf), "%s+0x%llx", syms[lo].name, (unsigned long long)(addr - syms[lo].a));
	return buf;
}

static const char *ev_name(__u32 i)
{
	return i < N_EVENTS ? events[i][1] : "-";
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "spin", required_argument, NULL, 's' },
		{ "no-beside", no_argument, NULL, 'n' },
		{ "exclude-tgid", required_argument, NULL, 'x' },
		{ "watch-prog", required_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 't' },
		{ "also", required_argument, NULL, 'a' },
		{}
	};
	unsigned long long spin = 0, seconds = 0;
	unsigned exclude = 0;
	int watch[64], n_watch = 0, beside_on = 1, c, ncpu = libbpf_num_possible_cpus();
	struct bpf_beside_bpf *skel;
	struct bpf_link *links[N_EVENTS + 16] = {};
	char *also[16];
	int n_also = 0;
	__u64 w0, w1, t0, t1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': spin = strtoull(optarg, NULL, 0); break;
		case 'n': beside_on = 0; break;
		case 'x': exclude = strtoul(optarg, NULL, 0); break;
		case 't': seconds = strtoull(optarg, NULL, 0); break;
		case 'a':
			if (n_also == 16 || !strchr(optarg, ':'))
				return 2;
			also[n_also++] = optarg;
			break;
		case 'w':
			if (n_watch == 64)
				return 2;
			watch[n_watch] = bpf_prog_get_fd_by_id(strtoul(optarg, NULL, 0));
			if (watch[n_watch] < 0) {
				fprintf(stderr, "prog %s: %m\n", optarg);
				return 1;
			}
			n_watch++;
			break;
		default:
			return 2;
		}
	}
	if (ncpu <= 0)
		return 1;
	skel = bpf_beside_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->spin_loops = spin;
	skel->rodata->exclude_tgid = exclude;
	if (percpu_offsets(skel))
		return 1;
	if (bpf_beside_bpf__load(skel)) {
		fprintf(stderr, "load: %m\n");
		return 1;
	}
	/* The observers first, so they see the whole window. */
	skel->bss->window_start = ~0ULL;
	if (bpf_beside_bpf__attach(skel)) {
		fprintf(stderr, "attach observers: %m\n");
		return 1;
	}
	for (int i = 0; beside_on && i < N_EVENTS; i++) {
		LIBBPF_OPTS(bpf_tracepoint_opts, o, .bpf_cookie = i);

		links[i] = bpf_program__attach_tracepoint_opts(skel->progs.beside, events[i][0],
							       events[i][1], &o);
		if (!links[i]) {
			fprintf(stderr, "attach %s:%s: %m\n", events[i][0], events[i][1]);
			return 1;
		}
	}
	/* More events for the spinning program only (uncounted): ones whose
	 * handlers run with interrupts enabled, so that interrupts land inside. */
	for (int i = 0; beside_on && i < n_also; i++) {
		LIBBPF_OPTS(bpf_tracepoint_opts, o, .bpf_cookie = N_EVENTS);
		char *sep = strchr(also[i], ':');

		*sep = 0;
		links[N_EVENTS + i] = bpf_program__attach_tracepoint_opts(skel->progs.beside, also[i],
									  sep + 1, &o);
		if (!links[N_EVENTS + i]) {
			fprintf(stderr, "attach %s:%s: %m\n", also[i], sep + 1);
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);

	w0 = watched_misses(watch, n_watch);
	t0 = now_ns();
	skel->bss->window_start = t0;
	for (__u64 end = t0 + seconds * 1000000000ULL; !stop && (!seconds || now_ns() < end);)
		usleep(20000);
	t1 = now_ns();
	skel->data->window_stop = t1;
	w1 = watched_misses(watch, n_watch);

	printf("window %llu %llu\n", (unsigned long long)t0, (unsigned long long)t1);
	for (__u32 i = 0; i < N_EVENTS; i++) {
		struct counts v[ncpu], s = {};

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &i, v))
			return 1;
		for (int k = 0; k < ncpu; k++) {
			s.fired += v[k].fired;
			s.perf_busy += v[k].perf_busy;
			s.bpf_busy += v[k].bpf_busy;
			s.self_fired += v[k].self_fired;
			s.self_perf_busy += v[k].self_perf_busy;
			s.self_bpf_busy += v[k].self_bpf_busy;
			s.beside += v[k].beside;
			s.unknown += v[k].unknown;
			for (int l = 0; l < 4; l++)
				s.level[l] += v[k].level[l];
		}
		printf("event %s:%s fired %llu perf_busy %llu bpf_busy %llu self_fired %llu "
		       "self_perf_busy %llu self_bpf_busy %llu beside %llu levels %llu/%llu/%llu/%llu unknown %llu\n",
		       events[i][0], events[i][1], (unsigned long long)s.fired,
		       (unsigned long long)s.perf_busy, (unsigned long long)s.bpf_busy,
		       (unsigned long long)s.self_fired, (unsigned long long)s.self_perf_busy,
		       (unsigned long long)s.self_bpf_busy, (unsigned long long)s.beside,
		       (unsigned long long)s.level[0], (unsigned long long)s.level[1],
		       (unsigned long long)s.level[2], (unsigned long long)s.level[3],
		       (unsigned long long)s.unknown);
	}
	printf("watched_skipped %llu\n", (unsigned long long)(w1 - w0));
	printf("beside_skipped %llu\n", (unsigned long long)prog_misses(bpf_program__fd(skel->progs.beside)));
	{
		__u64 m = 0;
		struct bpf_program *p;

		bpf_object__for_each_program(p, skel->obj)
			if (p != skel->progs.beside)
				m += prog_misses(bpf_program__fd(p));
		printf("observer_skipped %llu\n", (unsigned long long)m);
	}

	/* Every thread group a firing was seen in, for the test to tell the
	 * tasks no BPF program ever runs for. */
	{
		__u32 k, *prev = NULL;
		__u64 v;

		while (!bpf_map_get_next_key(bpf_map__fd(skel->maps.per_tgid), prev, &k)) {
			if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.per_tgid), &k, &v))
				printf("tgid %u %llu\n", k, (unsigned long long)v);
			prev = &k;
		}
	}

	/* The contexts of the dropped firings, commonest first (at most 20 groups). */
	{
		__u32 n = skel->bss->n_samples < 4096 ? skel->bss->n_samples : 4096, g = 0;
		struct sample *s = calloc(n ? n : 1, sizeof(*s));

		if (!s)
			return 1;
		for (__u32 i = 0; i < n; i++)
			bpf_map_lookup_elem(bpf_map__fd(skel->maps.samples), &i, &s[i]);
		for (__u32 i = 0; i < n && i < 50; i++)
			printf("drop ts %llu %s level %u preempt_count 0x%x comm %.16s tid %u cpu %u\n",
			       (unsigned long long)s[i].ts, ev_name(s[i].event), s[i].level,
			       s[i].preempt_count, s[i].comm, s[i].pid, s[i].cpu);
		for (__u32 i = 0; i < n && i < 5; i++) {
			printf("stack of drop %u:", i);
			for (int k = 0; k < 32 && s[i].stack[k]; k++)
				printf(" %s", ksym(s[i].stack[k]));
			printf("\n");
		}
		qsort(s, n, sizeof(*s), cmp_sample);
		for (__u32 i = 0; i < n && g < 40; g++) {
			__u32 j = i;

			while (j < n && !cmp_sample(&s[i], &s[j]))
				j++;
			printf("dropped %u x %s level %u preempt_count 0x%x comm %.16s cpu %u "
			       "after %s at the same level %llu ns before\n",
			       j - i, ev_name(s[i].event), s[i].level, s[i].preempt_count, s[i].comm,
			       s[i].cpu, ev_name(s[i].prev_event),
			       (unsigned long long)(s[i].ts - s[i].prev_ts));
			i = j;
		}
		free(s);
	}
	for (int i = 0; i < N_EVENTS + 16; i++)
		bpf_link__destroy(links[i]);
	bpf_beside_bpf__destroy(skel);
	return 0;
}
