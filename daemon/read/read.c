// SPDX-License-Identifier: GPL-2.0
/* tracerd --read: the store's records rendered by the live path's own
 * code: each event rebuilt from its stored format (with the enum values
 * that were resolved when it was written), compiled by the renderer, and
 * printed by the stdout sink's line formatter, or as one JSON object per
 * line with the journal sink's field names. */
#include "boot_id.h"
#include "export/trace_dat.h"
#include "filter/filter.h"
#include "kernel-events/field_source.h"
#include "kernel-events/unit_path.h"
#include "ptrkey.h"
#include "read.h"
#include "render/render.h"
#include "render/render_stack.h"
#include "sink/sink.h"
#include "store/store.h"
#include "store/store_filter.h"
#include "util.h"

struct read_ev {
	struct event_desc desc;
	char **names;			/* journal field names by field index */
	size_t n_names;
	unsigned dat_id;		/* --trace-dat: the event's id there */
};

struct reader_ctx {
	const struct read_opts *o;
	struct render_opts ropts;
	struct sink *text_sink;		/* the stdout sink, for its line format */
	struct trace_dat *dat;		/* --trace-dat */
	int dat_err;
	uint64_t lost;			/* records the ring buffer lost, marked in the store */
	uint64_t deleted_marked;	/* records MaxUse= deleted unread, marked in the trace.dat */
	struct strbuf line, text;
	struct read_ev **evs;
	size_t n_evs, cap_evs;
	struct ptrkey boot_key, own_key;
	int boot_key_err;		/* ptrkey_load()'s */
	char key_id[PTRKEY_ID_LEN + 1];	/* the file's whose key is in use; "" none named */
	bool key_chosen, warned;
};

static bool event_selected(const char *globs, const struct tp_event *e)
{
	_cleanup_free_ char *copy = globs ? strdup(globs) : NULL, *name = NULL;
	char *save = NULL;

	if (!globs)
		return true;
	if (!copy || asprintf(&name, "%s:%s", e->system, e->name) < 0)
		return false;
	for (char *g = strtok_r(copy, " ,", &save); g; g = strtok_r(NULL, " ,", &save))
		if (tp_glob_match(g, name))
			return true;
	return false;
}

static bool want_event(struct store_event *ev, void *userdata)
{
	struct reader_ctx *ctx = userdata;
	struct read_ev *re;
	struct diag d = { 0 };

	if (!event_selected(ctx->o->events, ev->event))
		return false;
	re = calloc(1, sizeof(*re));
	if (!re || GROW(ctx->evs, ctx->cap_evs, ctx->n_evs) < 0) {
		free(re);
		return false;
	}
	ctx->evs[ctx->n_evs++] = re;
	ev->userdata = re;
	/* A stored syscall record may carry its user strings: --filter
	 * compares them where it does (records without match no string). */
	event_desc_user_strings(ev->event, &re->desc);
	if (ctx->o->filter && filter_compile(ctx->o->filter, ev->event, NULL, &re->desc, &d) < 0) {
		fprintf(stderr, "tracerd: --filter does not apply to %s:%s (%s): its records are not shown\n",
			ev->event->system, ev->event->name, d.msg);
		return false;
	}
	if (ctx->dat) {
		int r = trace_dat_add_event(ctx->dat, ev->event, &re->dat_id);

		if (r < 0) {
			fprintf(stderr, "tracerd: --trace-dat: %s:%s: %s: its records are not written\n",
				ev->event->system, ev->event->name, strerror(-r));
			ctx->dat_err = r;
			return false;
		}
		return true;
	}
	(void)render_prepare(ev->event);
	if (ctx->o->json && journal_event_field_names(ev->event, &re->names) == 0)
		re->n_names = ev->event->n_fields;
	return true;
}

static void json_str(struct strbuf *sb, const char *s, size_t n)
{
	sb_putc(sb, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			sb_putc(sb, '\\');
			sb_putc(sb, c);
		} else if (c < 0x20 || c == 0x7f)
			sb_printf(sb, "\\u%04x", c);
		else
			sb_putc(sb, c);
	}
	sb_putc(sb, '"');
}

static void json_kv(struct strbuf *sb, const char *k, const char *v, size_t n)
{
	sb_putc(sb, ',');
	json_str(sb, k, strlen(k));
	sb_putc(sb, ':');
	json_str(sb, v, n);
}

static void json_kn(struct strbuf *sb, const char *k, long long v)
{
	char num[24];

	json_kv(sb, k, num, snprintf(num, sizeof(num), "%lld", v));
}

struct json_fields {
	struct strbuf *sb;
	const struct store_rec *rec;
};

static void json_field(void *userdata, const struct tp_field *f, const char *value, const char *raw)
{
	struct json_fields *jf = userdata;
	const struct tp_event *e = jf->rec->ev->event;
	const struct read_ev *re = jf->rec->ev->userdata;
	char name[80], raw_name[96];

	if (f >= e->fields && f < e->fields + e->n_fields && re->names && re->names[f - e->fields])
		snprintf(name, sizeof(name), "%s", re->names[f - e->fields]);
	else
		journal_field_name(f->name, name, sizeof(name));
	json_kv(jf->sb, name, value, strlen(value));
	if (raw) {
		snprintf(raw_name, sizeof(raw_name), "%s_RAW", name);
		json_kv(jf->sb, raw_name, raw, strlen(raw));
	}
}

static void json_kv_n(void *userdata, const char *key, const char *value, size_t n)
{
	json_kv(userdata, key, value, n);
}

static void json_user_string(void *userdata, const struct render_ustr *u)
{
	struct json_fields *jf = userdata;
	const struct read_ev *re = jf->rec->ev->userdata;
	char name[80];

	if (re->names && re->names[u->field - jf->rec->ev->event->fields])
		snprintf(name, sizeof(name), "%s", re->names[u->field - jf->rec->ev->event->fields]);
	else
		journal_field_name(u->field->name, name, sizeof(name));
	journal_user_string(name, u, json_kv_n, jf->sb);
}

/* The journal sink's entry for the record, as journalctl -o json shows it. */
static void print_json(struct reader_ctx *ctx, const struct store_rec *r,
		       const struct rec_stacks *stacks)
{
	const struct tp_event *e = r->ev->event;
	struct strbuf *sb = &ctx->line;
	struct strbuf msg = { 0 };
	struct json_fields jf = { sb, r };
	char ev_name[256];

	if (!render_names_itself(e))
		sb_printf(&msg, "%s: ", e->name);
	render_event(e, &ctx->ropts, r->data, r->len, &msg);
	sb_puts(sb, "{\"MESSAGE\":");
	json_str(sb, sb_str(&msg), msg.len);
	sb_free(&msg);
	json_kn(sb, "PRIORITY", r->ev->priority);
	json_kv(sb, "SYSLOG_IDENTIFIER", "tracerd", 7);
	snprintf(ev_name, sizeof(ev_name), "%s:%s", e->system, e->name);
	json_kv(sb, "TRACE_EVENT", ev_name, strlen(ev_name));
	json_kv(sb, "TRACE_CLASS", r->ev->class_name, strlen(r->ev->class_name));
	json_kv(sb, "TRACE_SELECTION", r->ev->selection, strlen(r->ev->selection));
	json_kn(sb, "TRACE_CPU", r->hdr.cpu);
	json_kn(sb, "TRACE_PID", r->hdr.pid);
	json_kn(sb, "TRACE_TID", r->hdr.tid);
	json_kv(sb, "TRACE_COMM", r->hdr.comm, strnlen(r->hdr.comm, TRACERD_COMM_LEN));
	if (r->hdr.cgroup_id)	/* 0: a file from before the cgroup was kept */
		journal_cgroup_fields(r->hdr.cgroup_id, r->cgroup, json_kv_n, sb);
	json_kn(sb, "TRACE_TIMESTAMP_NS", r->hdr.ts_ns);
	json_kn(sb, "TRACE_TIME_REALTIME_USEC",
		((int64_t)r->hdr.ts_ns + r->file->realtime_offset_ns) / 1000);
	render_fields(e, &ctx->ropts, r->data, r->len, json_field, &jf);
	render_user_strings(e, r->data, r->len, json_user_string, &jf);
	render_stacks_fields(stacks, &ctx->ropts, json_kv_n, sb);
	sb_puts(sb, "}\n");
}

static void print_text(struct reader_ctx *ctx, const struct store_rec *r,
		       const struct rec_stacks *stacks)
{
	struct out_slot slot = { .event = r->ev->event, .selection = r->ev->selection,
				 .priority = r->ev->priority };
	struct out_record out = {
		.slot = &slot, .priority = r->ev->priority, .hdr = &r->hdr, .rec = r->data,
		.len = r->len, .stacks = *stacks, .render = ctx->ropts,
		.realtime_offset_ns = r->file->realtime_offset_ns,
	};

	/* What the consumer does live: render, then the sink formats the line. */
	sb_reset(&ctx->text);
	render_event(r->ev->event, &ctx->ropts, r->data, r->len, &ctx->text);
	out.text = sb_str(&ctx->text);
	out.text_len = ctx->text.len;
	ctx->text_sink->ops->text->format(ctx->text_sink, &out, &ctx->line);
}

static void idle(void *userdata)
{
	(void)userdata;
	fflush(stdout);
}

/* A record's time on the clock of t. */
static int64_t rec_time(const struct store_rec *r, const struct read_time *t)
{
	return (int64_t)r->hdr.ts_ns + (t->monotonic ? 0 : r->file->realtime_offset_ns);
}

static bool in_range(const struct read_opts *o, const struct store_rec *r)
{
	const struct read_time *s = &o->since, *u = &o->until;

	return (s->ns == INT64_MIN || rec_time(r, s) >= s->ns) &&
	       (u->ns == INT64_MAX || rec_time(r, u) <= u->ns + (u->span_ns - 1));
}

/* Why f's pointers cannot hash as its writer hashed them. */
static void say_other_key(const struct reader_ctx *ctx, const struct store_file_info *f)
{
	char boot[BOOT_ID_MAX];

	fprintf(stderr, "tracerd: %s: ", f->path);
	if (!f->pointer_key_id)
		fprintf(stderr, "it names no pointer key");
	else if (boot_id_get(boot) == 0 && !streq_ptr(f->boot_id, boot))
		fprintf(stderr, "written on another boot (%s)", strna(f->boot_id));
	else if (ctx->boot_key_err)
		fprintf(stderr, "this boot's pointer key in %s cannot be used (%s)", ptrkey_path(),
			ptrkey_strerror(ctx->boot_key_err));
	else
		fprintf(stderr, "written with another pointer key than this boot's in %s", ptrkey_path());
	fprintf(stderr, ": pointers are hashed with a key of this run only; "
		"their hashes do not compare with the journal's\n");
}

/* The key f's writer hashed with, where it is this boot's key and this
 * process may read it (root, on the same boot), so that hashes compare
 * with the journal's; else a key of this run (said once). */
static void use_file_key(struct reader_ctx *ctx, const struct store_file_info *f)
{
	const char *id = f->pointer_key_id ? f->pointer_key_id : "";
	bool same;

	if (ctx->o->raw_pointers || (ctx->key_chosen && !strcmp(id, ctx->key_id)))
		return;
	ctx->key_chosen = true;
	snprintf(ctx->key_id, sizeof(ctx->key_id), "%s", id);
	same = !ctx->boot_key_err && !strcmp(id, ctx->boot_key.id);
	ptrkey_use(same ? &ctx->boot_key : &ctx->own_key);
	if (!same && !ctx->warned) {
		ctx->warned = true;
		say_other_key(ctx, f);
	}
}

/* The ring buffer lost records there: a mark in the trace.dat where they
 * were lost, else counted (said at the end). Or MaxUse= deleted them before
 * they were read (the reader said so and counts them): a mark in the
 * trace.dat alone. */
static int lost(struct reader_ctx *ctx, const struct store_rec *r)
{
	if (r->deleted && ctx->dat)
		ctx->deleted_marked += r->lost;
	else if (!r->deleted)
		ctx->lost += r->lost;
	return ctx->dat ? trace_dat_add_lost(ctx->dat, r->hdr.cpu, r->lost) : 0;
}

/* A kernel frame as the file's writer named it (KSYMS): a store read on
 * another boot or machine shows the writing kernel's symbols. */
static const char *file_ksym(const void *ctx, uint64_t addr)
{
	return store_file_ksym(ctx, addr);
}

/* --unit: by the names the writer stored; a record whose cgroup is not
 * known is in no unit. */
static bool in_units(const struct read_opts *o, const struct store_rec *r)
{
	return !o->n_units || (r->cgroup && r->cgroup->path &&
			       unit_path_match(o->units, o->n_units, r->cgroup->path, &r->cgroup->names));
}

static int read_all(struct reader_ctx *ctx, struct store_reader *sr)
{
	const struct read_opts *o = ctx->o;
	struct store_rec r;
	int k;

	while ((k = store_reader_next(sr, &r)) > 0) {
		const struct read_ev *re;
		struct rec_stacks stacks;
		uint32_t whole;

		if (r.lost) {
			if (in_range(o, &r) && (k = lost(ctx, &r)) < 0)
				return k;
			continue;
		}
		re = r.ev->userdata;
		/* The record proper, as the live path renders it; its stacks apart. */
		whole = r.len;
		r.len = rec_stacks_split(r.hdr.flags, r.data, r.len, &stacks);
		stacks.ksym = file_ksym;
		stacks.ksym_ctx = r.file;
		if (!in_range(o, &r) || !in_units(o, &r) ||
		    !store_filter_match(&re->desc, &r.hdr, r.data, r.len))
			continue;
		if (ctx->dat) {
			k = trace_dat_add_record(ctx->dat, re->dat_id, &r.hdr, r.data, r.len);
			if (k >= 0 && r.len < whole)
				k = trace_dat_add_stacks(ctx->dat, &r.hdr, &stacks);
			if (k < 0)
				return k;
			continue;
		}
		use_file_key(ctx, r.file);
		sb_reset(&ctx->line);
		if (o->json)
			print_json(ctx, &r, &stacks);
		else
			print_text(ctx, &r, &stacks);
		if (fwrite(ctx->line.buf, 1, ctx->line.len, stdout) != ctx->line.len)
			return -errno;
	}
	return k;
}

/* The trace.dat written out, and what it says (or leaves out) on stderr;
 * 1 if an event could not go into it. */
static int finish_trace_dat(struct reader_ctx *ctx)
{
	struct trace_dat_stats s;
	int r = trace_dat_finish(ctx->dat, &s);

	if (r < 0) {
		fprintf(stderr, "tracerd: --trace-dat: %s: %s\n", ctx->o->trace_dat, strerror(-r));
		return r;
	}
	fprintf(stderr, "tracerd: %s: %llu records on %u CPUs", ctx->o->trace_dat,
		(unsigned long long)s.records, s.cpus);
	if (s.stacks)
		fprintf(stderr, ", %llu stack traces", (unsigned long long)s.stacks);
	if (s.dropped > ctx->deleted_marked)
		fprintf(stderr, ", %llu lost records marked where they were lost",
			(unsigned long long)(s.dropped - ctx->deleted_marked));
	if (ctx->deleted_marked)
		fprintf(stderr, ", %llu records deleted (MaxUse=) before they were read marked "
			"where they were", (unsigned long long)ctx->deleted_marked);
	fprintf(stderr, "\n");
	if (s.too_large)
		fprintf(stderr, "tracerd: %s: %llu records longer than a ring-buffer page holds "
			"are left out, marked as dropped\n", ctx->o->trace_dat,
			(unsigned long long)s.too_large);
	if (s.reordered)
		fprintf(stderr, "tracerd: %s: %llu records earlier than their CPU's previous one "
			"(another boot's clock?) are written at that one's time\n", ctx->o->trace_dat,
			(unsigned long long)s.reordered);
	return ctx->dat_err || s.too_large || s.reordered ? 1 : 0;
}

/* Whether files were deleted before they were read (each reported as found). */
static bool report_unread(struct store_reader *sr)
{
	uint64_t unknown, n = store_reader_unread(sr, &unknown);

	if (n)
		fprintf(stderr, "tracerd: %llu records were deleted (MaxUse=) before they were read\n",
			(unsigned long long)n);
	if (unknown)
		fprintf(stderr, "tracerd: and the rest of %llu files, how many records not known\n",
			(unsigned long long)unknown);
	return n || unknown;
}

int read_store(const struct read_opts *o)
{
	struct reader_ctx ctx = { .o = o, .ropts = { .raw_pointers = o->raw_pointers } };
	struct store_reader_opts so = { .follow = o->follow, .want_event = want_event, .idle = idle,
					.want_lost = true, .userdata = &ctx };
	struct store_reader *sr = NULL;
	int k;

	if (read_time_range(&o->since, &o->until) < 0) {
		fprintf(stderr, "tracerd: --until is before --since: no record can be in between\n");
		return 2;
	}
	if (!o->raw_pointers) {
		ctx.boot_key_err = ptrkey_load(ptrkey_path(), false, &ctx.boot_key);
		if (ptrkey_random(&ctx.own_key) < 0)
			return 2;
	}
	k = sink_stdout_new(&ctx.text_sink, stdout);
	if (k >= 0 && o->trace_dat && (k = trace_dat_new(&ctx.dat, o->trace_dat)) < 0)
		fprintf(stderr, "tracerd: --trace-dat: %s: %s\n", o->trace_dat, strerror(-k));
	if (k >= 0)
		k = store_reader_new(&sr, o->paths, o->n_paths, &so);
	if (k >= 0)
		k = read_all(&ctx, sr);
	if (k >= 0 && ctx.dat)
		k = finish_trace_dat(&ctx);
	if (fflush(stdout) != 0 && k >= 0)
		k = -errno;
	if (k < 0 && k != -EPIPE)
		fprintf(stderr, "tracerd: --read: %s\n", strerror(-k));
	if (k >= 0 && sr && store_reader_skipped(sr))
		fprintf(stderr, "tracerd: %llu damaged chunks skipped\n",
			(unsigned long long)store_reader_skipped(sr));
	if (k >= 0 && sr && report_unread(sr))
		k = 1;
	if (k >= 0 && ctx.lost && !ctx.dat)
		fprintf(stderr, "tracerd: %llu records were lost in the ring buffer while these were "
			"written (of any selection)\n", (unsigned long long)ctx.lost);
	k = k < 0 ? 2 : k == 1 || (sr && store_reader_skipped(sr)) ? 1 : 0;
	store_reader_free(sr);
	for (size_t i = 0; i < ctx.n_evs; i++) {
		strv_free(ctx.evs[i]->names, ctx.evs[i]->n_names);
		free(ctx.evs[i]);
	}
	free(ctx.evs);
	sb_free(&ctx.line);
	sb_free(&ctx.text);
	sink_free(ctx.text_sink);
	trace_dat_free(ctx.dat);
	return k;
}

