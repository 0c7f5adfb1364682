// SPDX-License-Identifier: GPL-2.0
/* What goes into a trace.dat besides the pages: the events (each event's
 * format once, under its system, with the export's id), the tasks (pid ->
 * comm, for the cmdlines), and one page writer per CPU. The file itself is
 * written at the end (trace_dat_file.c), when all of that is known. */
#include <fcntl.h>
#include <libgen.h>
#include <search.h>
#include "export/trace_dat.h"
#include "export/trace_dat_priv.h"
#include "kernel-events/printfmt.h"
#include "strbuf.h"
#include "util.h"

#define TD_FIRST_ID	1000		/* above the ftrace events' own ids */
#define TD_MAX_CPUS	8192

static void td_event_free(struct td_event *e)
{
	free(e->system);
	free(e->name);
	free(e->stored);
	free(e->format);
}

/* A temporary file beside the output (the same file system, which has room
 * for the output anyway), else in /tmp. */
static int temp_fd(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	int fd;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

int trace_dat_new(struct trace_dat **ret, const char *path)
{
	struct trace_dat *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->path = strdup(path);
	t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!t->path || t->fd < 0) {
		int r = t->path ? -errno : -ENOMEM;

		trace_dat_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

/* The format with the export's id in its "ID:" line. */
static int export_format(struct tp_event *e, unsigned id, char **ret)
{
	struct strbuf sb = { 0 };
	const char *s, *nl;
	char *out;
	int r = tp_event_format_resolved(e, &sb);

	if (r < 0) {
		sb_free(&sb);
		return r;
	}
	s = strstr(sb_str(&sb), "\nID: ");
	if (!s) {
		sb_free(&sb);
		return -EINVAL;
	}
	nl = strchrnul(s + 1, '\n');
	r = asprintf(&out, "%.*s\nID: %u%s", (int)(s - sb_str(&sb)), sb_str(&sb), id, nl);
	sb_free(&sb);
	if (r < 0)
		return -ENOMEM;
	*ret = out;
	return 0;
}

int trace_dat_add_event(struct trace_dat *t, struct tp_event *e, unsigned *ret_id)
{
	struct td_event *n;
	int r;

	for (size_t i = 0; i < t->n_events; i++)
		if (!strcmp(t->events[i].system, e->system) && !strcmp(t->events[i].stored, e->format_text)) {
			*ret_id = t->events[i].id;
			return 0;
		}
	if (TD_FIRST_ID + t->n_events > UINT16_MAX)
		return -E2BIG;		/* common_type is 16 bits */
	if (GROW(t->events, t->cap_events, t->n_events) < 0)
		return -ENOMEM;
	n = &t->events[t->n_events];
	*n = (struct td_event){ .id = TD_FIRST_ID + t->n_events };
	n->system = strdup(e->system);
	n->name = strdup(e->name);
	n->stored = strdup(e->format_text);
	r = n->system && n->name && n->stored ? export_format(e, n->id, &n->format) : -ENOMEM;
	if (r < 0) {
		td_event_free(n);
		return r;
	}
	t->n_events++;
	*ret_id = n->id;
	return 0;
}

static struct td_cpu *cpu_get(struct trace_dat *t, unsigned cpu, int *err)
{
	if (cpu >= TD_MAX_CPUS) {
		*err = -ERANGE;
		return NULL;
	}
	while (t->n_cpus <= cpu) {
		struct td_cpu *c;
		int fd;

		if (GROW(t->cpus, t->cap_cpus, t->n_cpus) < 0 || !(c = calloc(1, sizeof(*c)))) {
			*err = -ENOMEM;
			return NULL;
		}
		fd = temp_fd(t->path);
		if (fd < 0) {
			free(c);
			*err = fd;
			return NULL;
		}
		c->fd = fd;
		t->cpus[t->n_cpus++] = c;
	}
	return t->cpus[cpu];
}

static int task_cmp(const void *a, const void *b)
{
	const struct td_task *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The task's latest comm: what trace-cmd shows for its pid. */
static int task_seen(struct trace_dat *t, uint32_t pid, const char *comm)
{
	struct td_task key = { .pid = pid }, *n, **found = tfind(&key, &t->tasks, task_cmp);

	if (found) {
		memcpy((*found)->comm, comm, TRACERD_COMM_LEN);
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->pid = pid;
	memcpy(n->comm, comm, TRACERD_COMM_LEN);
	if (!tsearch(n, &t->tasks, task_cmp)) {
		free(n);
		return -ENOMEM;
	}
	t->n_tasks++;
	return 0;
}

int trace_dat_add_record(struct trace_dat *t, unsigned id, const struct trace_rec_hdr *h,
			 const uint8_t *rec, size_t len)
{
	int r = td_add(t, id, h, rec, len);

	if (r == 1)
		t->records++;
	return r < 0 ? r : 0;
}

int td_add_symbol(struct trace_dat *t, uint64_t addr, uint64_t size, const char *name, size_t len)
{
	char *n;

	for (size_t i = t->n_syms; i-- > 0 && i + 64 >= t->n_syms;)	/* recent repeats */
		if (t->syms[i].addr == addr)
			return 0;
	n = strndup(name, len);
	if (!n || GROW(t->syms, t->cap_syms, t->n_syms) < 0) {
		free(n);
		return -ENOMEM;
	}
	t->syms[t->n_syms++] = (struct td_symbol){ addr, size, n };
	return 0;
}

/* 1: written; 0: too large, marked dropped instead. */
int td_add(struct trace_dat *t, unsigned id, const struct trace_rec_hdr *h, const uint8_t *rec, size_t len)
{
	int r = 0;
	struct td_cpu *c = cpu_get(t, h->cpu, &r);

	if (!c)
		return r;
	r = task_seen(t, h->tid, h->comm);
	if (r < 0)
		return r;
	r = td_cpu_append(c, h->ts_ns, rec, len, (uint16_t)id);
	if (r == -E2BIG) {
		/* The kernel's ring buffer would not have taken it either. */
		t->too_large++;
		return td_cpu_lost(c, 1);
	}
	return r < 0 ? r : 1;
}

int trace_dat_add_lost(struct trace_dat *t, unsigned cpu, uint64_t n)
{
	int r = 0;
	struct td_cpu *c = cpu_get(t, cpu, &r);

	if (!c)
		return r;
	t->dropped += n;
	return td_cpu_lost(c, n);
}

int trace_dat_finish(struct trace_dat *t, struct trace_dat_stats *s)
{
	int r;

	for (size_t i = 0; i < t->n_cpus; i++) {
		r = td_cpu_flush(t->cpus[i]);
		if (r < 0)
			return r;
		t->reordered += t->cpus[i]->reordered;
	}
	r = td_file_write(t);
	*s = (struct trace_dat_stats){ .records = t->records, .stacks = t->stacks, .too_large = t->too_large,
				       .reordered = t->reordered, .dropped = t->dropped,
				       .cpus = t->n_cpus };
	return r;
}

void trace_dat_free(struct trace_dat *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_events; i++)
		td_event_free(&t->events[i]);
	free(t->events);
	for (size_t i = 0; i < t->n_cpus; i++) {
		close(t->cpus[i]->fd);
		free(t->cpus[i]);
	}
	free(t->cpus);
	for (size_t i = 0; i < t->n_syms; i++)
		free(t->syms[i].name);
	free(t->syms);
	tdestroy(t->tasks, free);
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	free(t);
}
