// SPDX-License-Identifier: GPL-2.0
/* The journal sink: one entry per event, with the kernel-style line as
 * MESSAGE and every field as TRACE_<FIELD>=, through sd_journal_sendv. */
#include <ctype.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include "render.h"
#include "sink.h"
#include "util.h"

#define MAX_IOV 160

struct sink_journal {
	struct sink base;
	struct strbuf sb;		/* holds every "K=V" of one entry */
	size_t offs[MAX_IOV];		/* where each begins in sb */
	size_t n;
};

static void add(struct sink_journal *j, const char *fmt, ...) _printf_(2, 3);
static void add(struct sink_journal *j, const char *fmt, ...)
{
	va_list ap;

	if (j->n >= MAX_IOV)
		return;
	j->offs[j->n++] = j->sb.len;
	va_start(ap, fmt);
	sb_vprintf(&j->sb, fmt, ap);
	va_end(ap);
	sb_putc(&j->sb, 0);	/* entries are split at NULs below */
}

static const char *const reserved[] = {
	"EVENT", "CLASS", "SELECTION", "CPU", "PID", "TID", "COMM", "TIMESTAMP_NS",
	"TIME_REALTIME_USEC", "STATS",
};

/* A journal field name for an event field: A-Z, 0-9 and _, at most 64
 * characters with the TRACE_ prefix, clear of the fields tracerd sets. */
void journal_field_name(const char *field, char *out, size_t size)
{
	char up[64];
	size_t k = 0;

	for (const char *p = field; *p && k < sizeof(up) - 1; p++)
		up[k++] = isalnum((unsigned char)*p) ? toupper((unsigned char)*p) : '_';
	up[k] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
		if (!strcmp(up, reserved[i])) {
			snprintf(out, size, "TRACE_FIELD_%.40s", up);
			return;
		}
	/* 64 minus "TRACE_" minus "_RAW" leaves 54 for the name. */
	snprintf(out, size, "TRACE_%.54s", up);
}

static void add_field(void *ctx, const struct tp_field *f, const char *value, const char *raw)
{
	struct sink_journal *j = ctx;
	char name[80];

	journal_field_name(f->name, name, sizeof(name));
	add(j, "%s=%s", name, value);
	if (raw)
		add(j, "%s_RAW=%s", name, raw);
}

static int send_collected(struct sink_journal *j)
{
	struct iovec iov[MAX_IOV];

	if (j->sb.oom)
		return -ENOMEM;
	for (size_t i = 0; i < j->n; i++) {
		iov[i].iov_base = j->sb.buf + j->offs[i];
		iov[i].iov_len = strlen(j->sb.buf + j->offs[i]);
	}
	return sd_journal_sendv(iov, j->n);
}

static int journal_emit(struct sink *s, const struct out_record *r)
{
	struct sink_journal *j = (struct sink_journal *)s;
	const struct trace_rec_hdr *h = r->hdr;
	const struct tp_event *e = r->slot->event;

	sb_reset(&j->sb);
	j->n = 0;
	add(j, "MESSAGE=%s: %s", e->name, r->text);
	add(j, "PRIORITY=%d", r->slot->sel->conf->priority);
	add(j, "SYSLOG_IDENTIFIER=tracerd");
	add(j, "TRACE_EVENT=%s:%s", e->system, e->name);
	add(j, "TRACE_CLASS=%s", e->class ? e->class->name : e->name);
	add(j, "TRACE_SELECTION=%s", r->slot->sel->conf->name);
	add(j, "TRACE_CPU=%u", h->cpu);
	add(j, "TRACE_PID=%u", h->pid);
	add(j, "TRACE_TID=%u", h->tid);
	add(j, "TRACE_COMM=%.*s", (int)strnlen(h->comm, TRACERD_COMM_LEN), h->comm);
	add(j, "TRACE_TIMESTAMP_NS=%llu", (unsigned long long)h->ts_ns);
	add(j, "TRACE_TIME_REALTIME_USEC=%lld",
	    (long long)(((int64_t)h->ts_ns + r->realtime_offset_ns) / 1000));
	render_fields(e, r->rec, r->len, add_field, j);
	return send_collected(j);
}

static int journal_message(struct sink *s, int priority, const char *msg,
			   const char *const *fields, size_t n_fields)
{
	struct sink_journal *j = (struct sink_journal *)s;

	sb_reset(&j->sb);
	j->n = 0;
	add(j, "MESSAGE=%s", msg);
	add(j, "PRIORITY=%d", priority);
	add(j, "SYSLOG_IDENTIFIER=tracerd");
	for (size_t i = 0; i < n_fields; i++)
		add(j, "%s", fields[i]);
	return send_collected(j);
}

static void journal_free(struct sink *s)
{
	struct sink_journal *j = (struct sink_journal *)s;

	sb_free(&j->sb);
	free(j);
}

static const struct sink_ops journal_ops = {
	.emit = journal_emit,
	.message = journal_message,
	.free = journal_free,
};

int sink_journal_new(struct sink **ret)
{
	struct sink_journal *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->base.ops = &journal_ops;
	*ret = &j->base;
	return 0;
}
