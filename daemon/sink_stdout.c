// SPDX-License-Identifier: GPL-2.0
/* The foreground sink: one line per event in the kernel's trace layout,
 * "comm-pid [cpu] secs.usecs: event: fields". Daemon messages go to stderr. */
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sink.h"
#include "util.h"

struct sink_stdout {
	struct sink base;
	FILE *out;
	struct strbuf line;
};

/* n digits of v, zero-padded: the numbers of the line prefix. */
static void put_padded(struct strbuf *sb, uint64_t v, unsigned width, char pad, bool left)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	size_t n;

	do
		*--p = '0' + v % 10;
	while (v /= 10);
	n = tmp + sizeof(tmp) - p;
	if (left)
		sb_put(sb, p, n);
	for (; n < width; n++)
		sb_putc(sb, pad);
	if (!left)
		sb_put(sb, p, tmp + sizeof(tmp) - p);
}

/* "%16s-%-7u [%03u] %5llu.%06llu: %s: %s\n", built without printf: its
 * format parsing was a fifth of the daemon's time per event. One fwrite per
 * line, so the stream is locked once. */
static int stdout_emit(struct sink *s, const struct out_record *r)
{
	struct sink_stdout *so = (struct sink_stdout *)s;
	const struct trace_rec_hdr *h = r->hdr;
	struct strbuf *l = &so->line;
	size_t clen = strnlen(h->comm, TRACERD_COMM_LEN);

	sb_reset(l);
	for (size_t i = clen; i < 16; i++)
		sb_putc(l, ' ');
	sb_put(l, h->comm, clen);
	sb_putc(l, '-');
	put_padded(l, h->tid, 7, ' ', true);
	sb_put(l, " [", 2);
	put_padded(l, h->cpu, 3, '0', false);
	sb_put(l, "] ", 2);
	put_padded(l, h->ts_ns / 1000000000ULL, 5, ' ', false);
	sb_putc(l, '.');
	put_padded(l, h->ts_ns % 1000000000ULL / 1000, 6, '0', false);
	sb_put(l, ": ", 2);
	sb_puts(l, r->slot->event->name);
	sb_put(l, ": ", 2);
	sb_puts(l, r->text);
	sb_putc(l, '\n');
	if (l->oom || fwrite(l->buf, 1, l->len, so->out) != l->len)
		return l->oom ? -ENOMEM : -errno;
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

/* The writer thread was cancelled in a write to a pipe nobody reads: point
 * the stream at /dev/null so that neither the final flush nor exit() blocks
 * on what is still buffered (it was counted as not delivered). */
static void stdout_abort(struct sink *s)
{
	struct sink_stdout *so = (struct sink_stdout *)s;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	dup2(fd, fileno(so->out));
	close(fd);
}

static void stdout_free(struct sink *s)
{
	stdout_flush(s);
	sb_free(&((struct sink_stdout *)s)->line);
	free(s);
}

static const struct sink_ops stdout_ops = {
	.emit = stdout_emit,
	.message = stdout_message,
	.flush = stdout_flush,
	.abort = stdout_abort,
	.message_direct = true,
	.free = stdout_free,
};

int sink_stdout_new(struct sink **ret, FILE *out)
{
	struct sink_stdout *s = calloc(1, sizeof(*s));
	struct stat st;

	if (!s)
		return -ENOMEM;
	s->base.ops = &stdout_ops;
	s->out = out;
	/* Into a pipe, one write(2) per line: a line of up to PIPE_BUF bytes is
	 * then written whole or not at all, so "delivered" counts exactly the
	 * lines the reader gets, even when a stalled pipe makes us give up. */
	if (fstat(fileno(out), &st) == 0 && S_ISFIFO(st.st_mode))
		setvbuf(out, NULL, _IOLBF, 0);
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
