// SPDX-License-Identifier: GPL-2.0
/* Reading one store file chunk by chunk. Every chunk is checked before it
 * is believed: a header whose checksum fails is skipped by searching for
 * the next chunk's magic; a payload whose checksum, decompression or
 * decoding fails is skipped whole (its header said how long it is); a chunk
 * cut off by the end of the file (a crash mid-write) ends the file. Each is
 * reported on stderr with the file and offset, and counted. */
#include <fcntl.h>
#include <sys/stat.h>
#include "kernel-events/events.h"
#include "render/render.h"
#include "store/store_read_priv.h"
#include "util.h"

static void report(struct store_cursor *c, uint64_t off, const char *what)
{
	fprintf(stderr, "tracerd: %s: offset %llu: %s, skipped\n", c->path, (unsigned long long)off,
		what);
	c->r->skipped++;
}

static int cursor_reopen(struct store_cursor *c)
{
	c->fd = open(c->path, O_RDONLY | O_CLOEXEC);
	return c->fd < 0 ? -errno : 0;
}

static void cursor_close(struct store_cursor *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int cursor_open(struct store_reader *r, const char *path, const char *dir,
		struct store_cursor **ret)
{
	struct store_cursor *c = calloc(1, sizeof(*c));
	int k;

	if (!c)
		return -ENOMEM;
	c->r = r;
	c->dir = dir;
	c->fd = -1;
	c->path = strdup(path);
	c->info.path = strdup(path);
	k = c->path && c->info.path ? cursor_peek(c) : -ENOMEM;
	if (k < 0) {
		cursor_free(c);
		return k;
	}
	*ret = c;
	return 0;
}

static void event_free(struct store_event *ev)
{
	if (!ev)
		return;
	if (ev->event)
		render_release(ev->event);
	tp_event_free(ev->event);
	free(ev->class_name);
	free(ev->selection);
	free(ev);
}

void cursor_free(struct store_cursor *c)
{
	if (!c)
		return;
	cursor_close(c);
	for (size_t i = 0; i < c->cap_ev; i++)
		event_free(c->ev[i]);
	free(c->ev);
	free(c->recs);
	free(c->order);
	bbuf_free(&c->data);
	bbuf_free(&c->disk);
	bbuf_free(&c->raw);
	free(c->last_of);
	free(c->last_gen);
	free(c->info.path);
	free(c->info.kernel_release);
	free(c->info.boot_id);
	free(c->info.pointer_key_id);
	store_ksyms_free(&c->ksyms);
	free(c->stream);
	cpu_counts_free(&c->first_cpus);
	cpu_counts_free(&c->passed_cpus);
	free(c->path);
	free(c);
}

static void parse_file_chunk(struct store_cursor *c, const char *text, size_t len)
{
	char *copy = strndup(text, len), *save = NULL;

	if (!copy)
		return;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');

		if (!eq)
			continue;
		*eq++ = 0;
		if (!strcmp(l, "kernel_release") && !c->info.kernel_release)
			c->info.kernel_release = strdup(eq);
		else if (!strcmp(l, "boot_id") && !c->info.boot_id)
			c->info.boot_id = strdup(eq);
		else if (!strcmp(l, "pointer_key_id") && !c->info.pointer_key_id)
			c->info.pointer_key_id = strdup(eq);
		else if (!strcmp(l, "realtime_offset_ns"))
			c->info.realtime_offset_ns = strtoll(eq, NULL, 10);
		else if (!strcmp(l, "stream") && !c->stream)
			c->stream = strdup(eq);
		else if (!strcmp(l, "first_record"))
			c->first_record = strtoull(eq, NULL, 10);
		else if (!strcmp(l, "first_record_cpus") && !c->has_first_cpus) {
			cpu_counts_free(&c->first_cpus);
			c->has_first_cpus = cpu_counts_parse(&c->first_cpus, eq) == 0;
		}
	}
	free(copy);
	c->have_info = true;
}

/* One event's description; 0, or -EBADMSG. */
static int parse_event(struct store_cursor *c, struct rcur *rc)
{
	uint64_t id = rcur_varint(rc), n_enums;
	_cleanup_free_ char *system = rcur_string(rc), *name = rcur_string(rc), *format = NULL;
	struct store_event *ev = calloc(1, sizeof(*ev));
	int r = -EBADMSG;

	if (!ev)
		return -ENOMEM;
	(void)name;	/* the format's own "name:" line is what counts */
	ev->id = id;
	ev->class_name = rcur_string(rc);
	ev->selection = rcur_string(rc);
	ev->priority = unzigzag(rcur_varint(rc));
	format = rcur_string(rc);
	if (rc->bad || id >= STORE_MAX_EVENT_ID || !format ||
	    tp_format_parse(format, &ev->event, NULL) < 0)
		goto fail;
	free(ev->event->system);
	ev->event->system = TAKE_PTR(system);
	ev->event->enums_given = true;
	n_enums = rcur_varint(rc);
	for (uint64_t i = 0; i < n_enums && !rc->bad; i++) {
		_cleanup_free_ char *en = rcur_string(rc);
		int64_t v = unzigzag(rcur_varint(rc));

		if (en && tp_event_add_enum(ev->event, en, strlen(en), v) < 0)
			goto fail;
	}
	if (rc->bad)
		goto fail;
	if (GROW_TO(c->ev, c->cap_ev, id) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (c->ev[id]) {	/* described twice: the first one stands */
		event_free(ev);
		return 0;
	}
	c->ev[id] = ev;
	ev->wanted = !c->r->o.want_event || c->r->o.want_event(ev, c->r->o.userdata);
	return 0;
fail:
	event_free(ev);
	return r;
}

static int parse_events(struct store_cursor *c, const struct store_chunk_hdr *h)
{
	struct rcur rc = { c->raw.p, c->raw.p + c->raw.len, false };

	for (uint32_t i = 0; i < h->n_records; i++) {
		int r = parse_event(c, &rc);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Reads size bytes at off; the count actually read. */
static ssize_t read_at(struct store_cursor *c, void *buf, size_t size, uint64_t off)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = pread(c->fd, (uint8_t *)buf + got, size - got, off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

/* After a bad header at c->off: the next offset where a good one starts, or
 * the end of the file. */
static void resync(struct store_cursor *c)
{
	uint8_t buf[65536];
	uint64_t off = c->off + 1;
	ssize_t n;

	while ((n = read_at(c, buf, sizeof(buf), off)) >= (ssize_t)sizeof(struct store_chunk_hdr)) {
		for (ssize_t i = 0; i + (ssize_t)sizeof(struct store_chunk_hdr) <= n; i++) {
			struct store_chunk_hdr h;

			memcpy(&h, buf + i, sizeof(h));
			if (h.magic == STORE_MAGIC && store_chunk_check(&h) == 0) {
				c->off = off + i;
				return;
			}
		}
		off += n - sizeof(struct store_chunk_hdr) + 1;
	}
	c->off = UINT64_MAX;	/* nothing more in this file */
}

/* The decoded block's records per CPU, every event's, wanted or not. */
static int count_cpus(struct store_cursor *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->recs[i].lost && cpu_counts_add(&c->passed_cpus, c->recs[i].hdr.cpu, 1) < 0)
			return -ENOMEM;
	return 0;
}

/* The chunk at c->off: 1 read and handled, 0 none (the end), < 0 error. */
static int next_chunk(struct store_cursor *c, bool *got_block)
{
	struct store_chunk_hdr h;
	uint64_t at = c->off;
	bool unknown_before;
	ssize_t n;

	if (at == UINT64_MAX)
		return 0;
	n = read_at(c, &h, sizeof(h), at);
	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	if (n < (ssize_t)sizeof(h)) {
		if (!c->r->o.follow) {
			report(c, at, "torn chunk header at the end of the file");
			c->off = UINT64_MAX;
		}
		return 0;
	}
	if (store_chunk_check(&h) < 0) {
		report(c, at, "corrupt chunk header");
		resync(c);
		return 1;
	}
	if (bbuf_reserve(&c->disk, h.disk_len + 1) < 0)
		return -ENOMEM;
	n = read_at(c, c->disk.p, h.disk_len, at + sizeof(h));
	if (n < 0)
		return n;
	if (n < (ssize_t)h.disk_len) {
		if (!c->r->o.follow) {
			report(c, at, "torn chunk at the end of the file (a crash while writing)");
			c->off = UINT64_MAX;
		}
		return 0;
	}
	c->off = at + sizeof(h) + h.disk_len;
	unknown_before = c->passed_cpus_unknown;
	if (h.type == STORE_CHUNK_BLOCK) {
		c->passed += h.n_records;	/* read, or reported as skipped */
		c->passed_cpus_unknown |= h.n_records > 0;	/* until it decodes */
	}
	if (store_crc(c->disk.p, h.disk_len) != h.payload_crc) {
		char what[96];

		snprintf(what, sizeof(what), "corrupt chunk (checksum), %u records", h.n_records);
		report(c, at, what);
		return 1;
	}
	if (store_decompress(h.codec, c->disk.p, h.disk_len, h.raw_len, &c->raw) < 0) {
		report(c, at, "chunk does not decompress");
		return 1;
	}
	if (h.type == STORE_CHUNK_FILE)
		parse_file_chunk(c, (const char *)c->raw.p, c->raw.len);
	else if (h.type == STORE_CHUNK_EVENTS && parse_events(c, &h) < 0)
		report(c, at, "undecodable event descriptions");
	else if (h.type == STORE_CHUNK_KSYMS) {
		int r = store_ksyms_parse(&c->ksyms, c->raw.p, c->raw.len, h.n_records);

		if (r == -ENOMEM)
			return r;
		if (r < 0)
			report(c, at, "undecodable kernel symbols");
		c->info.ksyms = &c->ksyms;
	}
	else if (h.type == STORE_CHUNK_BLOCK) {
		int r = decode_block(c, &h);

		if (r == -ENOMEM)
			return r;
		if (r < 0)
			report(c, at, r == -ENOENT ? "block of events whose description was lost"
						   : "undecodable block");
		else {
			c->passed_cpus_unknown = unknown_before || count_cpus(c) < 0;
			*got_block = c->n_kept > 0;
		}
	}
	return 1;
}

/* The file is over: keep only what names it (a follower sees thousands).
 * The caller's last record stays valid: this runs in the next call. */
void cursor_end(struct store_cursor *c)
{
	c->done = true;
	c->n = c->pos = c->n_kept = 0;
	bbuf_free(&c->data);
	bbuf_free(&c->disk);
	bbuf_free(&c->raw);
	free(c->recs);
	free(c->order);
	free(c->last_of);
	free(c->last_gen);
	c->recs = NULL;
	c->order = c->last_of = c->last_gen = NULL;
	c->cap = c->cap_last = 0;
	for (size_t i = 0; i < c->cap_ev; i++)
		event_free(c->ev[i]);
	free(c->ev);
	c->ev = NULL;
	c->cap_ev = 0;
}

static int fill(struct store_cursor *c)
{
	while (!c->done) {
		bool got = false;
		int r = next_chunk(c, &got);

		if (r <= 0) {
			if (r == 0 && !c->r->o.follow)
				cursor_end(c);
			return r;
		}
		if (got)
			return 1;
	}
	return 0;
}

int cursor_fill(struct store_cursor *c)
{
	int r;

	c->n = c->pos = c->n_kept = 0;
	if (c->done)
		return 0;
	r = cursor_reopen(c);
	if (r < 0)
		return r;
	r = fill(c);
	cursor_close(c);
	return r;
}

/* The time of the file's first block from its chunk headers alone (the FILE
 * chunk read for the clock), as wall-clock ns; INT64_MAX if it has none. */
static void peek_start(struct store_cursor *c)
{
	uint64_t off = 0;

	c->start_ns = INT64_MAX;
	for (unsigned i = 0; i < 64; i++) {
		struct store_chunk_hdr h;

		if (read_at(c, &h, sizeof(h), off) != sizeof(h) || store_chunk_check(&h) < 0)
			return;
		if (h.type == STORE_CHUNK_FILE && h.codec == STORE_CODEC_NONE && !c->have_info &&
		    bbuf_reserve(&c->disk, h.disk_len + 1) == 0 &&
		    read_at(c, c->disk.p, h.disk_len, off + sizeof(h)) == h.disk_len &&
		    store_crc(c->disk.p, h.disk_len) == h.payload_crc)
			parse_file_chunk(c, (const char *)c->disk.p, h.disk_len);
		if (h.type == STORE_CHUNK_BLOCK) {
			c->start_ns = (int64_t)h.ts_first + c->info.realtime_offset_ns;
			c->first_ts = h.ts_first;
			return;
		}
		off += sizeof(h) + h.disk_len;
	}
}

int cursor_peek(struct store_cursor *c)
{
	int r = cursor_reopen(c);

	if (r < 0)
		return r;
	peek_start(c);
	cursor_close(c);
	return 0;
}

const char *store_file_ksym(const struct store_file_info *f, uint64_t addr)
{
	return f && f->ksyms ? store_ksyms_find(f->ksyms, addr) : NULL;
}
