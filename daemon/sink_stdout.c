// SPDX-License-Identifier: GPL-2.0
/* The foreground sink: one line per event in the kernel's trace layout,
 * "comm-pid [cpu] secs.usecs: event: fields". Daemon messages go to stderr. */
#include <stdarg.h>
#include "sink.h"
#include "util.h"

struct sink_stdout {
	struct sink base;
	FILE *out;
};

static int stdout_emit(struct sink *s, const struct out_record *r)
{
	struct sink_stdout *so = (struct sink_stdout *)s;
	const struct trace_rec_hdr *h = r->hdr;
	char comm[TRACERD_COMM_LEN + 1];

	memcpy(comm, h->comm, TRACERD_COMM_LEN);
	comm[TRACERD_COMM_LEN] = 0;
	if (fprintf(so->out, "%16s-%-7u [%03u] %5llu.%06llu: %s: %s\n", comm, h->tid, h->cpu,
		    (unsigned long long)(h->ts_ns / 1000000000ULL),
		    (unsigned long long)(h->ts_ns % 1000000000ULL / 1000),
		    r->slot->event->name, r->text) < 0)
		return -errno;
	return 0;
}

static int stdout_message(struct sink *s, int priority, const char *msg,
			  const char *const *fields, size_t n_fields)
{
	(void)s;
	(void)priority;
	(void)fields;
	(void)n_fields;
	fprintf(stderr, "tracerd: %s\n", msg);
	return 0;
}

static void stdout_flush(struct sink *s)
{
	fflush(((struct sink_stdout *)s)->out);
}

static void stdout_free(struct sink *s)
{
	stdout_flush(s);
	free(s);
}

static const struct sink_ops stdout_ops = {
	.emit = stdout_emit,
	.message = stdout_message,
	.flush = stdout_flush,
	.free = stdout_free,
};

int sink_stdout_new(struct sink **ret, FILE *out)
{
	struct sink_stdout *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->base.ops = &stdout_ops;
	s->out = out;
	*ret = &s->base;
	return 0;
}

int sink_message(struct sink *s, int priority, const char *const *fields, size_t n_fields,
		 const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return s->ops->message(s, priority, msg, fields, n_fields);
}
