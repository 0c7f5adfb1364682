// SPDX-License-Identifier: GPL-2.0
/* The foreground sink: one line per event in the kernel's trace layout,
 * "comm-pid [cpu] secs.usecs: event: fields". Daemon messages go to stderr. */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/stat.h>
#include "render/render.h"
#include "render/render_stack.h"
#include "sink.h"
#include "util.h"

/* The start of the last line: a task's records come in runs, and seconds
 * change once per second. Used by format() only, which one thread calls
 * (the consumer's). */
struct prefix_cache {
	char comm[TRACERD_COMM_LEN];
	uint32_t tid, cpu;
	char who[64];		/* "            comm-tid     [cpu] " */
	size_t who_len;
	uint64_t secs;
	char when[24];		/* "%5llu." */
	size_t when_len;
	const struct tp_event *event;	/* events outlive the sink (tracer_free) */
	size_t name_len;		/* of event->name */
	bool named;			/* the text has its own name (syscalls) */
};

struct sink_stdout {
	struct sink base;
	FILE *out;
	int fd;			/* -1: not a file descriptor (a memory stream) */
	struct strbuf line;
	struct prefix_cache pc;
	bool epipe;		/* written by the writer thread, read by the loop */
};

/* Notes a closed reader; passes the error on. */
static int stdout_failed(struct sink_stdout *so, int err)
{
	if (err == -EPIPE)
		__atomic_store_n(&so->epipe, true, __ATOMIC_RELAXED);
	return err;
}

static bool stdout_gone(struct sink *s)
{
	return __atomic_load_n(&((struct sink_stdout *)s)->epipe, __ATOMIC_RELAXED);
}

/* v in decimal at p, padded to width with pad (left: left-aligned, space
 * padded); returns the end. */
static char *put_padded(char *p, uint64_t v, unsigned width, char pad, bool left)
{
	char tmp[24], *d = tmp + sizeof(tmp);
	size_t n, fill;

	do
		*--d = '0' + v % 10;
	while (v /= 10);
	n = tmp + sizeof(tmp) - d;
	fill = n < width ? width - n : 0;
	if (!left) {
		memset(p, pad, fill);
		p += fill;
	}
	memcpy(p, d, n);
	p += n;
	if (left) {
		memset(p, ' ', fill);
		p += fill;
	}
	return p;
}

/* "%16s-%-7u [%03u] ", for the task and CPU of h, cached. */
static void format_who(struct prefix_cache *pc, const struct trace_rec_hdr *h)
{
	size_t clen = strnlen(h->comm, TRACERD_COMM_LEN);
	char *p = pc->who;

	if (pc->who_len && pc->tid == h->tid && pc->cpu == h->cpu &&
	    !memcmp(pc->comm, h->comm, TRACERD_COMM_LEN))
		return;
	memcpy(pc->comm, h->comm, TRACERD_COMM_LEN);
	pc->tid = h->tid;
	pc->cpu = h->cpu;
	if (clen < 16) {
		memset(p, ' ', 16 - clen);
		p += 16 - clen;
	}
	memcpy(p, h->comm, clen);
	p += clen;
	*p++ = '-';
	p = put_padded(p, h->tid, 7, ' ', true);
	memcpy(p, " [", 2);
	p = put_padded(p + 2, h->cpu, 3, '0', false);
	memcpy(p, "] ", 2);
	pc->who_len = p + 2 - pc->who;
}

/* "%16s-%-7u [%03u] %5llu.%06llu: %s: %s\n", built without printf: its
 * format parsing was a fifth of the daemon's time per event. Syscall
 * events have no "%s: " of the event's name: the text starts with the
 * syscall's ("sys_openat(dfd: ...)"), as in the kernel's trace. */
static void stdout_format(struct sink *s, const struct out_record *r, struct strbuf *l)
{
	struct prefix_cache *pc = &((struct sink_stdout *)s)->pc;
	const struct trace_rec_hdr *h = r->hdr;
	uint64_t secs = h->ts_ns / 1000000000ULL;
	size_t start = l->len, prefix_len;
	char usecs[8];

	format_who(pc, h);
	sb_put(l, pc->who, pc->who_len);
	if (!pc->when_len || pc->secs != secs) {
		pc->secs = secs;
		pc->when_len = put_padded(pc->when, secs, 5, ' ', false) + 1 - pc->when;
		pc->when[pc->when_len - 1] = '.';
	}
	sb_put(l, pc->when, pc->when_len);
	put_padded(usecs, h->ts_ns % 1000000000ULL / 1000, 6, '0', false);
	memcpy(usecs + 6, ": ", 2);
	sb_put(l, usecs, 8);
	prefix_len = l->len - start;
	if (pc->event != r->slot->event) {
		pc->event = r->slot->event;
		pc->name_len = strlen(pc->event->name);
		pc->named = render_names_itself(pc->event);
	}
	if (!pc->named) {
		sb_put(l, pc->event->name, pc->name_len);
		sb_put(l, ": ", 2);
	}
	sb_put(l, r->text, r->text_len);
	sb_putc(l, '\n');
	if (r->hdr->flags & TRACERD_REC_STACKS) {
		/* The prefix again, from where the line holds it: the block
		 * may move l's buffer, so copy it first. */
		char prefix[128];

		if (prefix_len > sizeof(prefix))
			prefix_len = sizeof(prefix);
		memcpy(prefix, l->buf + start, prefix_len);
		render_stacks_text(&r->stacks, &r->render, prefix, prefix_len, l);
	}
}

/* One fwrite per line, so the stream is locked once. */
static int stdout_emit(struct sink *s, const struct out_record *r)
{
	struct sink_stdout *so = (struct sink_stdout *)s;
	struct strbuf *l = &so->line;

	sb_reset(l);
	stdout_format(s, r, l);
	if (l->oom || fwrite(l->buf, 1, l->len, so->out) != l->len)
		return l->oom ? -ENOMEM : stdout_failed(so, -errno);
	return 0;
}

/* Many lines at once: write(2) straight from the queue's buffer, past
 * stdio, whose buffer would only add a copy. */
static int stdout_write_text(struct sink *s, const char *buf, size_t len, size_t *written)
{
	struct sink_stdout *so = (struct sink_stdout *)s;
	size_t done = 0;

	*written = 0;
	if (so->fd < 0) {
		done = fwrite(buf, 1, len, so->out);
		*written = done;
		return done == len ? 0 : stdout_failed(so, -(errno ? errno : EIO));
	}
	/* Lines written through stdio (before the queue started) go first. */
	if (fflush(so->out) != 0)
		return stdout_failed(so, -errno);
	while (done < len) {
		ssize_t n = write(so->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*written = done;
			return stdout_failed(so, n < 0 ? -errno : -EIO);
		}
		done += n;
	}
	*written = done;
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

static const struct sink_text_ops stdout_text_ops = {
	.format = stdout_format,
	.write = stdout_write_text,
	.abort = stdout_abort,
	.gone = stdout_gone,
	.message_direct = true,
};

static const struct sink_ops stdout_ops = {
	.emit = stdout_emit,
	.message = stdout_message,
	.flush = stdout_flush,
	.free = stdout_free,
	.text = &stdout_text_ops,
};

int sink_stdout_new(struct sink **ret, FILE *out)
{
	struct sink_stdout *s = calloc(1, sizeof(*s));
	struct stat st;

	if (!s)
		return -ENOMEM;
	s->base.ops = &stdout_ops;
	s->out = out;
	s->fd = fileno(out);
	/* Into a pipe, socket or terminal, writes of whole lines of at most
	 * PIPE_BUF bytes (one line per write(2) through stdio): a write to a
	 * pipe that size is then whole or not at all, so "delivered" counts
	 * exactly the lines the reader gets, even when a stalled pipe makes us
	 * give up. Files and /dev/null take writes of any size. */
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !(S_ISCHR(st.st_mode) && !isatty(s->fd)))
		s->base.atomic_write = PIPE_BUF;
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && S_ISFIFO(st.st_mode))
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
