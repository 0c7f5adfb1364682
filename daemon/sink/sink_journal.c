// SPDX-License-Identifier: GPL-2.0
/* The journal sink: one entry per event, with the kernel-style line as
 * MESSAGE and every field as TRACE_<FIELD>=, through sd_journal_sendv.
 *
 * This is the per-record hot path, so whatever does not change from one
 * record of a slot to the next is computed once per slot: the journal name
 * of every field (upper-cased, clash-free, with its _RAW twin) and the
 * constant fields PRIORITY=, TRACE_EVENT=, TRACE_CLASS=, TRACE_SELECTION=.
 * A record then costs its MESSAGE, six numbers, and one copy per field
 * value into a buffer reused from record to record. */

/* CODE_FILE/CODE_LINE/CODE_FUNC of this file would be noise on every event. */
#define SD_JOURNAL_SUPPRESS_LOCATION 1

#include <ctype.h>
#include <inttypes.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include "clock.h"
#include "render/render.h"
#include "render/render_stack.h"
#include "journal_fields.h"
#include "log.h"
#include "sink.h"
#include "util.h"

/* "TRACE_" + name + "_RAW" within journald's 64 characters. */
#define JOURNAL_NAME_MAX 64
#define PREFIX "TRACE_"

struct jname {
	char *eq;		/* "TRACE_X=", NULL for common fields */
	char *raw_eq;		/* "TRACE_X_RAW=" */
	size_t eq_len, raw_len;
};

/* Everything about a slot's entries that does not change per record. The
 * slot id indexes the cache; event, priority and selection name validate it,
 * since slot ids are reused after a reload, which may change the priority. */
struct jslot {
	const struct tp_event *event;
	size_t n_fields;
	int priority;
	char *selection;
	char *fixed;		/* the constant "K=V" strings, NUL-separated */
	struct iovec fixed_iov[4];
	struct jname *names;	/* by field index in event->fields */
};

struct sink_journal {
	struct sink base;
	struct jslot *slots[TRACERD_MAX_EVENTS];
	const struct jslot *cur;	/* of the record being emitted */
	struct strbuf sb;		/* the per-record "K=V" strings */
	size_t *offs;			/* where each begins in sb, and its end */
	size_t n, cap;
	struct iovec *iov;
	size_t cap_iov;
	uint64_t probe_usec;		/* when records last asked journal_probe() */
	int reach;			/* its answer */
};

/* "TRACE_CPU=" and so on, for the writer: each is used, or it warns. */
#define JF_EQ(id, name) static const char jf_##id[] = name "=";
TRACE_HEADER_FIELDS(JF_EQ)
#undef JF_EQ

#define JF_ID(id, name) #id,
static const char *const reserved[] = {
	TRACE_HEADER_FIELDS(JF_ID)
	TRACE_CGROUP_FIELDS(JF_ID)
	TRACE_MARKER_FIELDS(JF_ID)
	TRACE_STACK_FIELDS(JF_ID)
};
#undef JF_ID

/* A journal field name for an event field: A-Z, 0-9 and _, at most 64
 * characters with the TRACE_ prefix and a _RAW suffix, clear of the fields
 * tracerd sets itself (those become TRACE_FIELD_<NAME>). */
void journal_field_name(const char *field, char *out, size_t size)
{
	char up[JOURNAL_NAME_MAX];
	size_t k = 0;

	for (const char *p = field; *p && k < sizeof(up) - 1; p++)
		up[k++] = isalnum((unsigned char)*p) ? toupper((unsigned char)*p) : '_';
	up[k] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
		if (!strcmp(up, reserved[i]) ||
		    !strncmp(up, TRACE_RESERVED_PREFIX, strlen(TRACE_RESERVED_PREFIX))) {
			/* 64 - "TRACE_FIELD_" - "_RAW" */
			snprintf(out, size, PREFIX "FIELD_%.48s", up);
			return;
		}
	/* 64 - "TRACE_" - "_RAW" leaves 54 for the name. */
	snprintf(out, size, PREFIX "%.54s", up);
}

static bool name_taken(const struct jname *names, size_t n, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		if (names[i].eq && names[i].eq_len == len + 1 && !strncmp(names[i].eq, name, len))
			return true;
		if (names[i].raw_eq && names[i].raw_len == len + 1 && !strncmp(names[i].raw_eq, name, len))
			return true;
	}
	return false;
}

/* Journal names of every field of e, distinct from each other and from each
 * other's _RAW twins: two fields that map to the same name after upper-casing
 * or cutting get _2, _3... on the later one. */
static struct jname *names_new(const struct tp_event *e)
{
	struct jname *names = calloc(e->n_fields ? e->n_fields : 1, sizeof(*names));

	if (!names)
		return NULL;
	for (size_t i = 0; i < e->n_fields; i++) {
		char base[JOURNAL_NAME_MAX + 8], name[JOURNAL_NAME_MAX + 8], raw[JOURNAL_NAME_MAX + 16];

		if (e->fields[i].is_common)
			continue;
		journal_field_name(e->fields[i].name, base, sizeof(base));
		snprintf(name, sizeof(name), "%s", base);
		for (unsigned k = 2;; k++) {
			snprintf(raw, sizeof(raw), "%s_RAW", name);
			if (!name_taken(names, i, name) && !name_taken(names, i, raw))
				break;
			/* Leave room for the suffix and _RAW. */
			snprintf(name, sizeof(name), "%.*s_%u", JOURNAL_NAME_MAX - 4 - 1 - 4, base, k);
		}
		if (asprintf(&names[i].eq, "%s=", name) < 0 ||
		    asprintf(&names[i].raw_eq, "%s=", raw) < 0) {
			names[i].eq = names[i].raw_eq = NULL;
			return names;	/* the callback falls back to computing it */
		}
		names[i].eq_len = strlen(names[i].eq);
		names[i].raw_len = strlen(names[i].raw_eq);
	}
	return names;
}

int journal_event_field_names(const struct tp_event *e, char ***ret)
{
	struct jname *names = names_new(e);
	char **v = calloc(e->n_fields ? e->n_fields : 1, sizeof(*v));

	if (!names || !v) {
		free(v);
		v = NULL;
	}
	for (size_t i = 0; names && i < e->n_fields; i++) {
		if (v && names[i].eq)
			v[i] = strndup(names[i].eq, names[i].eq_len - 1);	/* without '=' */
		free(names[i].eq);
		free(names[i].raw_eq);
	}
	free(names);
	*ret = v;
	return v ? 0 : -ENOMEM;
}

static void jslot_free(struct jslot *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->names && i < c->n_fields; i++) {
		free(c->names[i].eq);
		free(c->names[i].raw_eq);
	}
	free(c->names);
	free(c->selection);
	free(c->fixed);
	free(c);
}

static struct jslot *jslot_new(const struct tp_event *e, const char *selection, int priority)
{
	struct jslot *c = calloc(1, sizeof(*c));
	char *p;
	int n;

	if (!c)
		return NULL;
	c->event = e;
	c->n_fields = e->n_fields;
	c->priority = priority;
	c->selection = strdup(selection);
	n = asprintf(&c->fixed, "PRIORITY=%d%c%s%s:%s%c%s%s%c%s%s",
		     priority, 0, jf_EVENT, e->system, e->name, 0,
		     jf_CLASS, e->class ? e->class->name : e->name, 0, jf_SELECTION, selection);
	c->names = names_new(e);
	if (n < 0 || !c->selection || !c->names) {
		if (n < 0)
			c->fixed = NULL;
		jslot_free(c);
		return NULL;
	}
	p = c->fixed;
	for (size_t i = 0; i < ARRAY_SIZE(c->fixed_iov); i++) {
		c->fixed_iov[i] = (struct iovec){ .iov_base = p, .iov_len = strlen(p) };
		p += strlen(p) + 1;
	}
	return c;
}

static const struct jslot *jslot_get(struct sink_journal *j, const struct out_record *r)
{
	const char *sel = r->slot->selection;
	unsigned id = r->slot->id;
	struct jslot *c;

	if (id >= TRACERD_MAX_EVENTS)
		return NULL;
	c = j->slots[id];
	if (c && c->event == r->slot->event && c->priority == r->priority &&
	    !strcmp(c->selection, sel))
		return c;
	jslot_free(c);
	j->slots[id] = c = jslot_new(r->slot->event, sel, r->priority);
	return c;
}

/* Starts a "K=V" string in sb; end_entry() finishes it. */
static int begin_entry(struct sink_journal *j)
{
	if (j->n + 2 > j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 64;
		size_t *o = realloc(j->offs, (cap + 1) * sizeof(*o));

		if (!o)
			return -ENOMEM;
		j->offs = o;
		j->cap = cap;
	}
	j->offs[j->n] = j->sb.len;
	return 0;
}

static void end_entry(struct sink_journal *j)
{
	j->n++;
	j->offs[j->n] = j->sb.len;
}

static void add(struct sink_journal *j, const char *fmt, ...) _printf_(2, 3);
static void add(struct sink_journal *j, const char *fmt, ...)
{
	va_list ap;

	if (begin_entry(j) < 0)
		return;
	va_start(ap, fmt);
	sb_vprintf(&j->sb, fmt, ap);
	va_end(ap);
	end_entry(j);
}

/* "K=" then a decimal number, without printf's format parsing. */
static void add_u64(struct sink_journal *j, const char *key_eq, size_t key_len, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	if (begin_entry(j) < 0)
		return;
	do
		*--p = '0' + v % 10;
	while (v /= 10);
	sb_put(&j->sb, key_eq, key_len);
	sb_put(&j->sb, p, buf + sizeof(buf) - p);
	end_entry(j);
}
#define ADD_U64(j, key_eq, v) add_u64(j, key_eq, sizeof(key_eq) - 1, v)

static void add_kv(struct sink_journal *j, const char *key_eq, size_t key_len, const char *value)
{
	if (begin_entry(j) < 0)
		return;
	sb_put(&j->sb, key_eq, key_len);
	sb_puts(&j->sb, value);
	end_entry(j);
}

static void add_field(void *ctx, const struct tp_field *f, const char *value, const char *raw)
{
	struct sink_journal *j = ctx;
	const struct tp_event *e = j->cur->event;
	const struct jname *nm = NULL;
	char name[JOURNAL_NAME_MAX + 8];

	if (f >= e->fields && f < e->fields + e->n_fields && j->cur->names[f - e->fields].eq)
		nm = &j->cur->names[f - e->fields];
	if (nm) {
		add_kv(j, nm->eq, nm->eq_len, value);
		if (raw)
			add_kv(j, nm->raw_eq, nm->raw_len, raw);
		return;
	}
	/* A field the renderer made up, or no memory for the precomputed names. */
	journal_field_name(f->name, name, sizeof(name));
	add(j, "%s=%s", name, value);
	if (raw)
		add(j, "%s_RAW=%s", name, raw);
}

void journal_user_string(const char *name, const struct render_ustr *u, journal_kv_fn kv,
			 void *ctx)
{
	char key[JOURNAL_NAME_MAX + 32], num[16];
	const char *err;

	if (u->err) {
		err = strerrorname_np(u->err);
		if (!err)
			snprintf(num, sizeof(num), "%d", u->err), err = num;
		snprintf(key, sizeof(key), "%s_STR_UNREADABLE", name);
		kv(ctx, key, err, strlen(err));
		return;
	}
	snprintf(key, sizeof(key), "%s_STR", name);
	kv(ctx, key, u->s, u->n);
	if (u->cut) {
		snprintf(key, sizeof(key), "%s_STR_CUT", name);
		kv(ctx, key, "1", 1);
	}
}

static void add_kv_n(void *ctx, const char *key, const char *value, size_t n)
{
	struct sink_journal *j = ctx;

	if (begin_entry(j) < 0)
		return;
	sb_puts(&j->sb, key);
	sb_putc(&j->sb, '=');
	sb_put(&j->sb, value, n);
	end_entry(j);
}

void journal_cgroup_fields(uint64_t id, const struct cgroup_info *c, journal_kv_fn kv, void *ctx)
{
	char num[24];

	kv(ctx, "TRACE_CGROUP_ID", num, snprintf(num, sizeof(num), "%" PRIu64, id));
	if (!c || !c->path)	/* not known: gone, or outside our cgroup namespace */
		return;
	kv(ctx, "TRACE_CGROUP", c->path, strlen(c->path));
	if (c->names.unit[0])
		kv(ctx, "TRACE_UNIT", c->names.unit, strlen(c->names.unit));
	kv(ctx, "TRACE_SLICE", c->names.slice, strlen(c->names.slice));
	if (c->names.user_unit[0])
		kv(ctx, "TRACE_USER_UNIT", c->names.user_unit, strlen(c->names.user_unit));
}

static void add_user_string(void *ctx, const struct render_ustr *u)
{
	struct sink_journal *j = ctx;
	const struct tp_event *e = j->cur->event;
	const struct jname *nm = &j->cur->names[u->field - e->fields];
	char name[JOURNAL_NAME_MAX + 8];

	if (nm->eq)
		snprintf(name, sizeof(name), "%.*s", (int)nm->eq_len - 1, nm->eq);
	else
		journal_field_name(u->field->name, name, sizeof(name));
	journal_user_string(name, u, add_kv_n, j);
}

static void reset(struct sink_journal *j)
{
	sb_reset(&j->sb);
	j->sb.oom = false;
	j->n = 0;
}

/* Sends fixed (n_fixed entries) followed by what was collected in sb. */
static int send_collected(struct sink_journal *j, const struct iovec *fixed, size_t n_fixed)
{
	size_t n = n_fixed + j->n;

	if (j->sb.oom || (j->n && !j->offs))
		return -ENOMEM;
	if (n > j->cap_iov) {
		struct iovec *iov = realloc(j->iov, n * 2 * sizeof(*iov));

		if (!iov)
			return -ENOMEM;
		j->iov = iov;
		j->cap_iov = n * 2;
	}
	if (n_fixed)
		memcpy(j->iov, fixed, n_fixed * sizeof(*fixed));
	for (size_t i = 0; i < j->n; i++)
		j->iov[n_fixed + i] = (struct iovec){
			.iov_base = j->sb.buf + j->offs[i],
			.iov_len = j->offs[i + 1] - j->offs[i],
		};
	return sd_journal_sendv(j->iov, n);
}

/* sd_journal_sendv() takes records into a missing journal without an
 * error: they would count as delivered. The socket is asked once a second
 * (a record costs tens of microseconds, a probe a few), and while it is
 * gone records count as sink errors. */
static int records_reach(struct sink_journal *j)
{
	uint64_t now = now_usec(CLOCK_MONOTONIC);

	if (!j->probe_usec || now - j->probe_usec >= 1000000) {
		j->probe_usec = now;
		j->reach = journal_probe();
		journal_reached(j->reach);
	}
	return j->reach;
}

static int journal_emit(struct sink *s, const struct out_record *r)
{
	static const struct iovec ident = { .iov_base = (char *)"SYSLOG_IDENTIFIER=tracerd",
					    .iov_len = sizeof("SYSLOG_IDENTIFIER=tracerd") - 1 };
	struct sink_journal *j = (struct sink_journal *)s;
	const struct trace_rec_hdr *h = r->hdr;
	const struct tp_event *e = r->slot->event;
	struct iovec fixed[1 + ARRAY_SIZE(j->cur->fixed_iov)];
	int k = records_reach(j);

	if (k < 0)
		return k;
	j->cur = jslot_get(j, r);
	if (!j->cur)
		return -ENOMEM;
	fixed[0] = ident;
	memcpy(fixed + 1, j->cur->fixed_iov, sizeof(j->cur->fixed_iov));
	reset(j);
	if (begin_entry(j) >= 0) {
		sb_puts(&j->sb, "MESSAGE=");
		/* The kernel's line: syscall events have no "event_name: ". */
		if (!render_names_itself(e)) {
			sb_puts(&j->sb, e->name);
			sb_put(&j->sb, ": ", 2);
		}
		sb_puts(&j->sb, r->text);
		end_entry(j);
	}
	ADD_U64(j, jf_CPU, h->cpu);
	ADD_U64(j, jf_PID, h->pid);
	ADD_U64(j, jf_TID, h->tid);
	if (begin_entry(j) >= 0) {
		sb_put(&j->sb, jf_COMM, sizeof(jf_COMM) - 1);
		sb_put(&j->sb, h->comm, strnlen(h->comm, TRACERD_COMM_LEN));
		end_entry(j);
	}
	journal_cgroup_fields(h->cgroup_id, cgroup_lookup(h->cgroup_id), add_kv_n, j);
	ADD_U64(j, jf_TIMESTAMP_NS, h->ts_ns);
	ADD_U64(j, jf_TIME_REALTIME_USEC, ((int64_t)h->ts_ns + r->realtime_offset_ns) / 1000);
	/* Field values as the journal wants them, one per field: journal
	 * formatting of the record's fields, so it stays here; the line
	 * (MESSAGE) is the consumer's rendering. */
	render_fields(e, &r->render, r->rec, r->len, add_field, j);
	render_user_strings(e, r->rec, r->len, add_user_string, j);
	render_stacks_fields(&r->stacks, &r->render, add_kv_n, j);
	return send_collected(j, fixed, ARRAY_SIZE(fixed));
}

/* A message the journal does not take goes to stderr (journal_reach.c):
 * statistics and reload results must show somewhere. */
static int journal_message(struct sink *s, int priority, const char *msg,
			   const char *const *fields, size_t n_fields)
{
	struct sink_journal *j = (struct sink_journal *)s;
	int r = journal_probe();

	if (r >= 0) {
		reset(j);
		add(j, "MESSAGE=%s", msg);
		add(j, "PRIORITY=%d", priority);
		add(j, "SYSLOG_IDENTIFIER=tracerd");
		for (size_t i = 0; i < n_fields; i++)
			add(j, "%s", fields[i]);
		r = send_collected(j, NULL, 0);
	}
	journal_reached(r);
	if (r < 0)
		log_msg(priority, "%s", msg);
	return r;
}

static void journal_free(struct sink *s)
{
	struct sink_journal *j = (struct sink_journal *)s;

	for (size_t i = 0; i < ARRAY_SIZE(j->slots); i++)
		jslot_free(j->slots[i]);
	sb_free(&j->sb);
	free(j->offs);
	free(j->iov);
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
	/* Said at once, and in STATUS=, not at the first statistics. */
	journal_reached(journal_probe());
	*ret = &j->base;
	return 0;
}
