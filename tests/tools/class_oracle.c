// SPDX-License-Identifier: GPL-2.0
/* Checks kernel-events/classes.c (BTF inference) against the kernel's own
 * event-to-class map (see class_oracle.bpf.c): prints every event where
 * they differ, and whether the difference matters (layouts differ). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "class_oracle.skel.h"
#include "kernel-events/events.h"
#include "resolve/registry.h"
#include "util.h"

struct sym {
	unsigned long long addr;
	char name[256];
};

static int kallsyms(struct sym **ret, size_t *n, unsigned long long *start, unsigned long long *stop)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], type, name[256];
	unsigned long long addr;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "__start__bpf_raw_tp"))
			*start = addr;
		else if (!strcmp(name, "__stop__bpf_raw_tp"))
			*stop = addr;
		else if (!strncmp(name, "__bpf_trace_", 12)) {
			if (GROW(*ret, cap, *n) < 0)
				return -ENOMEM;
			(*ret)[*n].addr = addr;
			snprintf((*ret)[*n].name, sizeof((*ret)[*n].name), "%s", name + 12);
			(*n)++;
		}
	}
	return *start && *stop && *start < *stop ? 0 : -ENOENT;
}

static const char *class_at(const struct sym *s, size_t n, unsigned long long addr)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].addr == addr)
			return s[i].name;
	return NULL;
}

/* The kernel's class of a regular event, or NULL. */
static const char *kernel_class(struct class_oracle_bpf *skel, const struct sym *s, size_t n,
				const char *event)
{
	int fd = bpf_map__fd(skel->maps.entries);
	struct { __u64 func; char name[64]; } e;

	for (__u32 i = 0; i < skel->bss->count; i++)
		if (!bpf_map_lookup_elem(fd, &i, &e) && !strcmp(e.name, event))
			return class_at(s, n, e.func);
	return NULL;
}

static bool same_fields(const struct tp_event *a, const struct tp_event *b)
{
	if (a->n_fields != b->n_fields)
		return false;
	for (size_t i = 0; i < a->n_fields; i++)
		if (a->fields[i].offset != b->fields[i].offset || a->fields[i].size != b->fields[i].size ||
		    strcmp(a->fields[i].name, b->fields[i].name))
			return false;
	return true;
}

/* 1: e has the layout of another event the kernel puts in class kc;
 * 0: it does not; -1: kc has no other event to compare with. */
static int layout_of_class(struct registry *t, struct class_oracle_bpf *skel, const struct sym *s,
			   size_t n, const char *kc, const struct tp_event *e)
{
	int verdict = -1;

	for (size_t i = 0; i < t->n_available && verdict != 1; i++) {
		const char *name = strchr(t->available[i], ':') + 1, *c;
		struct tp_event *o;

		if (!strncmp(t->available[i], "syscalls:", 9) || !strcmp(name, e->name))
			continue;
		c = kernel_class(skel, s, n, name);
		if (c && !strcmp(c, kc) && registry_event(t, t->available[i], &o) == 0)
			verdict = same_fields(o, e);
	}
	return verdict;
}

int main(void)
{
	unsigned long long start = 0, stop = 0;
	struct class_oracle_bpf *skel = NULL;
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct registry *t = NULL;
	struct diag d = { 0 };
	struct sym *syms = NULL;
	size_t n_syms = 0, checked = 0, same = 0, harmless = 0, wrong = 0, unknown = 0, lone = 0;

	if (kallsyms(&syms, &n_syms, &start, &stop) < 0 || !(skel = class_oracle_bpf__open()))
		return fprintf(stderr, "no kallsyms or BPF\n"), 2;
	skel->rodata->start_addr = start;
	skel->rodata->stop_addr = stop;
	if (class_oracle_bpf__load(skel) ||
	    bpf_prog_test_run_opts(bpf_program__fd(skel->progs.collect), &run) ||
	    registry_new(&t, NULL, 0, &d) < 0)
		return fprintf(stderr, "cannot run the oracle: %s\n", strerror(errno)), 2;
	for (size_t i = 0; i < t->n_available; i++) {
		const char *kc, *name = strchr(t->available[i], ':') + 1;
		struct tp_event *e;

		if (!strncmp(t->available[i], "syscalls:", 9) || registry_event(t, t->available[i], &e) < 0)
			continue;
		kc = kernel_class(skel, syms, n_syms, name);
		if (!kc) {
			unknown++;
			continue;
		}
		checked++;
		if (!strcmp(kc, e->class->name))
			same++;
		else switch (layout_of_class(t, skel, syms, n_syms, kc, e)) {
		case 1:
			harmless++;
			printf("# tie %s: kernel %s, tracerd %s (same layout)\n", t->available[i], kc, e->class->name);
			break;
		case 0:
			wrong++;
			printf("# WRONG %s: kernel %s, tracerd %s\n", t->available[i], kc, e->class->name);
			break;
		default:
			/* The field signature matched by construction; nothing else to compare. */
			lone++;
			printf("# tie %s: kernel %s (its only event), tracerd %s\n", t->available[i], kc,
			       e->class->name);
		}
	}
	printf("# checked %zu events: %zu same class, %zu ties with an identical layout, "
	       "%zu ties with the kernel class's only event, %zu wrong, %zu without a raw_tp entry\n",
	       checked, same, harmless, lone, wrong, unknown);
	printf("%s - BTF class inference agrees with the kernel for %zu of %zu events, none wrong\n",
	       !wrong && checked > 1000 && same * 100 >= checked * 98 ? "ok" : "not ok", same, checked);
	registry_free(t, NULL);
	class_oracle_bpf__destroy(skel);
	free(syms);
	return 0;
}
