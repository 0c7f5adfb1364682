// SPDX-License-Identifier: GPL-2.0
/* The trace.dat file, version 6, in trace-cmd's order (trace-cmd.dat.v6(5)):
 * the magic, version, endianness, long and page size; header_page and
 * header_event (the kernel's ring-buffer layout: with an empty header_page
 * trace-cmd reads no event at all); the ftrace formats; each system's event
 * formats; kallsyms and printk formats (none); the tasks; the CPU count;
 * options (the clock); then "flyrecord", each CPU's offset and size, and the
 * CPUs' pages, page-aligned. Numbers in this machine's byte order, which the
 * records are in too. */
#include <search.h>
#include "export/trace_dat.h"
#include "export/trace_dat_priv.h"
#include "util.h"

/* trace-cmd's option numbers (trace-cmd.h enum tracecmd_file_options). */
#define TD_OPTION_DONE		0
#define TD_OPTION_TRACECLOCK	4

/* tracefs events/header_page and events/header_event: what every kernel
 * with this ring buffer prints (64-bit: local_t commit is 8 bytes). */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

/* The kernel's stack-trace entries (tracefs events/ftrace/), whose records
 * trace-cmd prints as "<stack trace >" blocks: stacks go out as these. */
#define STACK_FIELDS(first)                                                                      \
	"format:\n"                                                                                \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                    \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                    \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"            \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"                              \
	first                                                                                      \
	"\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"                   \
	"print fmt: \"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\" \"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\" " \
	"\"\\t=> %ps\\n\\t=> %ps\\n\", (void *)REC->caller[0], (void *)REC->caller[1], "          \
	"(void *)REC->caller[2], (void *)REC->caller[3], (void *)REC->caller[4], "               \
	"(void *)REC->caller[5], (void *)REC->caller[6], (void *)REC->caller[7]\n"
static const char *const ftrace_formats[] = {
	"name: kernel_stack\nID: " "4" "\n" STACK_FIELDS("\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n"),
	"name: user_stack\nID: " "13" "\n" STACK_FIELDS("\tfield:unsigned int tgid;\toffset:8;\tsize:4;\tsigned:0;\n"),
};

static void put(FILE *f, const void *p, size_t n)
{
	fwrite(p, 1, n, f);
}

static void put16(FILE *f, uint16_t v) { put(f, &v, 2); }
static void put32(FILE *f, uint32_t v) { put(f, &v, 4); }
static void put64(FILE *f, uint64_t v) { put(f, &v, 8); }

/* A text with its size before it, in 4 or 8 bytes. */
static void put_text(FILE *f, const char *s, size_t len, int size_bytes)
{
	if (size_bytes == 4)
		put32(f, (uint32_t)len);
	else
		put64(f, len);
	put(f, s, len);
}

static void put_head(FILE *f)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

	put(f, magic, sizeof(magic));
	put(f, "6", 2);
	fputc(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, f);
	fputc(8, f);			/* the writing kernel's long: tracerd runs on 64-bit */
	put32(f, TD_PAGE_SIZE);
	put(f, "header_page", 12);
	put_text(f, header_page, strlen(header_page), 8);
	put(f, "header_event", 13);
	put_text(f, header_event, strlen(header_event), 8);
	put32(f, ARRAY_SIZE(ftrace_formats));
	for (size_t i = 0; i < ARRAY_SIZE(ftrace_formats); i++)
		put_text(f, ftrace_formats[i], strlen(ftrace_formats[i]), 8);
}

/* Systems in the order they were first seen, each with its events. */
static void put_events(FILE *f, const struct trace_dat *t)
{
	uint32_t n_systems = 0;

	for (size_t i = 0; i < t->n_events; i++) {
		size_t j = 0;

		while (j < i && strcmp(t->events[j].system, t->events[i].system))
			j++;
		n_systems += j == i;
	}
	put32(f, n_systems);
	for (size_t i = 0; i < t->n_events; i++) {
		const char *sys = t->events[i].system;
		uint32_t n = 0;
		size_t j = 0;

		while (j < i && strcmp(t->events[j].system, sys))
			j++;
		if (j < i)
			continue;	/* written with its system's first event */
		for (j = i; j < t->n_events; j++)
			n += !strcmp(t->events[j].system, sys);
		put(f, sys, strlen(sys) + 1);
		put32(f, n);
		for (j = i; j < t->n_events; j++)
			if (!strcmp(t->events[j].system, sys))
				put_text(f, t->events[j].format, strlen(t->events[j].format), 8);
	}
}

static void put_task(const void *node, VISIT v, void *userdata)
{
	const struct td_task *k = *(const struct td_task *const *)node;

	if (v == postorder || v == leaf)
		fprintf(userdata, "%u %.*s\n", k->pid, (int)strnlen(k->comm, sizeof(k->comm)), k->comm);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct td_symbol *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The stacks' functions, as /proc/kallsyms lists them, each once. */
static int put_kallsyms(FILE *f, struct trace_dat *t)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return -ENOMEM;
	qsort_safe(t->syms, t->n_syms, sizeof(*t->syms), cmp_sym);
	for (size_t i = 0; i < t->n_syms; i++)
		if (!i || t->syms[i].addr != t->syms[i - 1].addr)
			fprintf(m, "%016llx t %s\n", (unsigned long long)t->syms[i].addr, t->syms[i].name);
	/* libtraceevent bounds a function by the next one: the last one's end. */
	if (t->n_syms)
		fprintf(m, "%016llx t %s\n",
			(unsigned long long)(t->syms[t->n_syms - 1].addr + t->syms[t->n_syms - 1].size),
			"(end of the stacks' functions)");
	if (fclose(m) != 0)
		return -ENOMEM;
	put_text(f, text ? text : "", len, 4);
	return 0;
}

/* "pid comm" lines, as saved_cmdlines has them. */
static int put_cmdlines(FILE *f, const struct trace_dat *t)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return -ENOMEM;
	twalk_r(t->tasks, put_task, m);
	if (fclose(m) != 0)
		return -ENOMEM;
	put_text(f, text ? text : "", len, 8);
	return 0;
}

/* The clock: tracerd's timestamps are CLOCK_MONOTONIC, ftrace's "mono". */
static void put_options(FILE *f)
{
	static const char clock[] = "[mono]\n";

	put(f, "options  ", 10);
	put16(f, TD_OPTION_TRACECLOCK);
	put32(f, sizeof(clock));
	put(f, clock, sizeof(clock));
	put16(f, TD_OPTION_DONE);
}

/* "flyrecord", then each CPU's pages' offset and size; the pages begin at
 * the next page boundary. */
static void put_flyrecord(FILE *f, const struct trace_dat *t, uint64_t *start)
{
	uint64_t at;

	put(f, "flyrecord", 10);
	at = (uint64_t)ftell(f) + 16 * t->n_cpus;
	at = (at + TD_PAGE_SIZE - 1) & ~(uint64_t)(TD_PAGE_SIZE - 1);
	*start = at;
	for (size_t i = 0; i < t->n_cpus; i++) {
		put64(f, at);
		put64(f, t->cpus[i]->bytes);
		at += t->cpus[i]->bytes;
	}
}

static int copy_pages(int out, uint64_t at, int in, uint64_t n)
{
	_cleanup_free_ uint8_t *buf = malloc(1 << 20);

	if (!buf)
		return -ENOMEM;
	for (uint64_t done = 0; done < n;) {
		uint64_t want = n - done < (1u << 20) ? n - done : 1u << 20;
		ssize_t k = pread(in, buf, want, done);

		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		if (pwrite(out, buf, k, at + done) != k)
			return -errno ? -errno : -EIO;
		done += k;
	}
	return 0;
}

int td_file_write(struct trace_dat *t)
{
	_cleanup_fclose_ FILE *f = fdopen(dup(t->fd), "w");
	uint64_t at;
	int r;

	if (!f)
		return -errno;
	put_head(f);
	put_events(f, t);
	/* kallsyms, then printk formats (none) */
	r = put_kallsyms(f, t);
	if (r < 0)
		return r;
	put32(f, 0);
	r = put_cmdlines(f, t);
	if (r < 0)
		return r;
	put32(f, t->n_cpus);
	put_options(f);
	put_flyrecord(f, t, &at);
	if (fflush(f) != 0 || ferror(f))
		return -errno ? -errno : -EIO;
	for (size_t i = 0; i < t->n_cpus; i++) {
		r = copy_pages(t->fd, at, t->cpus[i]->fd, t->cpus[i]->bytes);
		if (r < 0)
			return r;
		at += t->cpus[i]->bytes;
	}
	/* The pages end the file: no gap after the last one. */
	if (ftruncate(t->fd, at) < 0)
		return -errno;
	return 0;
}
