// SPDX-License-Identifier: GPL-2.0
/* Records rendered per second on one core, for five representative events,
 * by tracerd's compiled renderer and by libtraceevent's tep_print_event, on
 * the same synthetic records over this kernel's captured formats. */
#include <time.h>
#include <traceevent/event-parse.h>
#include "kernel-events/printfmt.h"
#include "render/render.h"
#include "kernel-events/symbols.h"
#include "util.h"

#define FIXTURE "tests/fixtures/formats-6.18.txt"

/* As a root service with RawPointers=yes would print them. */
static const struct render_opts raw = { .raw_pointers = true };

static const char *const events[] = {
	"sched:sched_switch", "kmem:kmalloc", "writeback:writeback_dirty_inode",
	"sock:inet_sock_set_state", "sched:sched_process_exec",
	/* the end-to-end benchmark's events (bench/bench.py) */
	"filelock:fcntl_setlk", "sched:sched_process_wait",
};

static char *fixture(const char *name)
{
	_cleanup_fclose_ FILE *f = fopen(FIXTURE, "re");
	_cleanup_free_ char *all = NULL;
	char key[256], *p, *end;
	size_t n = 0;

	if (!f || getdelim(&all, &n, 0, f) < 0)
		return NULL;
	snprintf(key, sizeof(key), "#### %s\n", name);
	p = strstr(all, key);
	if (!p)
		return NULL;
	p += strlen(key);
	end = strstr(p, "\n#### ");
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/* A plausible record: every flag/symbol field set to its table's first
 * entries, strings filled, __data_loc strings appended. */
static size_t make_record(const struct tp_event *e, uint8_t *rec, size_t cap)
{
	size_t len = e->fixed_size;
	uint16_t id = e->id;

	memset(rec, 0, cap);
	memcpy(rec, &id, 2);
	for (size_t i = 0; i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];
		const struct tp_symtab *t = tp_event_symtab(e, f->name);
		uint64_t v = t && t->n ? t->syms[0].value | (t->n > 2 ? t->syms[2].value : 0) :
				      0xffff888102c777c0ULL >> (64 - 8 * (f->size < 8 ? f->size : 8)) % 64;

		if (f->is_common)
			continue;
		if (f->kind == TP_FIELD_SCALAR)
			memcpy(rec + f->offset, &v, f->size);
		else if (f->kind == TP_FIELD_ARRAY && f->is_string)
			snprintf((char *)rec + f->offset, f->size, "kworker/1:2");
		else if (f->kind == TP_FIELD_DATA_LOC && len + 32 < cap) {
			uint32_t loc = 32u << 16 | (uint32_t)len;

			snprintf((char *)rec + len, 32, "/usr/lib/x86_64-linux-gnu/ld.so");
			memcpy(rec + f->offset, &loc, 4);
			len += 32;
		}
	}
	return len;
}

/* The thread's CPU time: on a shared machine, time spent preempted by
 * other jobs is not the renderer's. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double rate_compiled(const struct tp_event *e, const uint8_t *rec, size_t len, size_t n)
{
	struct strbuf sb = { 0 };
	double t0;

	render_event(e, &raw, rec, len, &sb);	/* loads kallsyms outside the timing */
	t0 = now();

	for (size_t i = 0; i < n; i++) {
		sb_reset(&sb);
		render_event(e, &raw, rec, len, &sb);
	}
	t0 = now() - t0;
	sb_free(&sb);
	return n / t0;
}

static double rate_tep(const struct tp_event *e, const uint8_t *rec, size_t len, size_t n)
{
	const struct tp_printfmt *pf = e->printfmt;
	struct tep_record r = { .data = (void *)rec, .size = len };
	struct trace_seq s;
	double t0;

	trace_seq_init(&s);
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		trace_seq_reset(&s);
		tep_print_event(pf->tep, &s, &r, "%s", TEP_PRINT_INFO);
	}
	t0 = now() - t0;
	trace_seq_destroy(&s);
	return n / t0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;

	printf("%-34s %14s %14s %7s\n", "event (records/s, one core)", "compiled", "libtraceevent", "ratio");
	for (size_t k = 0; k < ARRAY_SIZE(events); k++) {
		_cleanup_free_ char *text = NULL;

		if (argc > 2 && !strstr(events[k], argv[2]))	/* render-bench N EVENT */
			continue;
		text = fixture(events[k]);
		struct tp_event *e = NULL;
		uint8_t rec[1024];
		size_t len;
		double c, t;

		if (!text || tp_format_parse(text, &e, NULL) < 0 || render_prepare(e) < 0 ||
		    !e->printfmt || !((struct tp_printfmt *)e->printfmt)->ev) {
			fprintf(stderr, "render-bench: cannot load %s\n", events[k]);
			return 1;
		}
		len = make_record(e, rec, sizeof(rec));
		c = rate_compiled(e, rec, len, n);
		t = rate_tep(e, rec, len, n / 4);
		printf("%-34s %14.0f %14.0f %6.1fx   (%.0f vs %.0f ns/record)\n", events[k], c, t, c / t,
		       1e9 / c, 1e9 / t);
		render_release(e);
		tp_event_free(e);
	}
	return 0;
}
