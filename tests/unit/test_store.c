// SPDX-License-Identifier: GPL-2.0
/* The event store on events of this kernel (the captured formats): records
 * written through the writer come back byte for byte, in time order, with
 * their events rebuilt from the stored formats; a flipped byte costs its
 * block and nothing else; a torn tail costs the torn chunk only. */
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include "render/render.h"
#include "store/store.h"
#include "store/store_format.h"
#include "fixtures.h"
#include "test.h"

#define N_PER_BLOCK 500
#define N_BLOCKS 6

struct wrec {
	struct trace_rec_hdr h;
	uint8_t data[256];
};

static struct wrec recs[N_PER_BLOCK * N_BLOCKS];
static const char *const evs[][2] = {
	{ "sched", "sched_switch" }, { "filelock", "fcntl_setlk" }, { "irq", "softirq_entry" },
};

static void make_recs(void)
{
	uint64_t ts = 1000000000ULL;

	srand(7);
	for (size_t i = 0; i < ARRAY_SIZE(recs); i++) {
		struct wrec *w = &recs[i];
		const struct tp_event *e = fx_find(evs[i % 3][0], evs[i % 3][1]);

		memset(w, 0, sizeof(*w));
		ts += rand() % 5000;
		/* a little out of order, as records from several CPUs are */
		w->h.ts_ns = ts - (i % 7 == 3 ? 2500 : 0);
		w->h.slot = i % 3;
		w->h.cpu = rand() % 2;
		w->h.pid = 100 + rand() % 4;
		w->h.tid = w->h.pid + rand() % 2;
		snprintf(w->h.comm, sizeof(w->h.comm), "task-%u", w->h.tid);
		w->h.len = e->fixed_size < sizeof(w->data) ? e->fixed_size : sizeof(w->data);
		for (size_t b = 8; b < w->h.len; b++)
			w->data[b] = b % 5 ? (uint8_t)i : (uint8_t)rand();
		*(uint16_t *)w->data = e->id;
	}
}

static void make_dir(char *dir)
{
	strcpy(dir, "/tmp/tracerd-test-store-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

/* max_file_size 1: a file per block. */
static void write_store_files(const char *dir, enum store_codec codec, uint64_t max_file_size)
{
	struct store_writer_opts o = { .directory = dir, .codec = codec, .flush_usec = 100000,
				       .max_file_size = max_file_size };
	struct store_writer_stats st;
	struct store_writer *w;
	int ids[3];

	EXPECT(store_writer_new(&w, &o) == 0, "writer");
	for (int i = 0; i < 3; i++) {
		ids[i] = store_writer_add_event(w, fx_find(evs[i][0], evs[i][1]), NULL, "sel", 6, NULL);
		EXPECT(ids[i] == i, "event id %d", ids[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(recs); i++) {
		EXPECT(store_writer_append(w, ids[recs[i].h.slot], &recs[i].h, recs[i].data,
					   recs[i].h.len) == 0, "append %zu", i);
		if ((i + 1) % N_PER_BLOCK == 0)
			store_writer_flush(w, true);
	}
	store_writer_sync(w);
	store_writer_get_stats(w, &st);
	EXPECT(st.written == ARRAY_SIZE(recs) && st.lost == 0 && st.blocks == N_BLOCKS,
	       "written %llu lost %llu blocks %llu", (unsigned long long)st.written,
	       (unsigned long long)st.lost, (unsigned long long)st.blocks);
	store_writer_free(w);
}

static void write_store(const char *dir, enum store_codec codec)
{
	write_store_files(dir, codec, 0);
}

static int cmp_ts(const void *a, const void *b)
{
	const struct wrec *x = *(struct wrec *const *)a, *y = *(struct wrec *const *)b;

	return x->h.ts_ns < y->h.ts_ns ? -1 : x->h.ts_ns > y->h.ts_ns ? 1 : x < y ? -1 : x > y;
}

/* Reads dir back; expects the records of blocks not in skip_mask, in time
 * order within each block; returns how many came back. */
static size_t read_store(const char *dir, unsigned skip_mask, uint64_t want_skipped)
{
	char *paths[] = { (char *)dir };
	struct store_reader_opts o = { 0 };
	struct store_reader *r;
	struct store_rec rec;
	static struct wrec *want[ARRAY_SIZE(recs)];
	size_t n_want = 0, got = 0;

	for (unsigned b = 0; b < N_BLOCKS; b++) {
		size_t first = n_want;

		if (skip_mask & (1u << b))
			continue;
		for (size_t i = b * N_PER_BLOCK; i < (b + 1) * N_PER_BLOCK; i++)
			want[n_want++] = &recs[i];
		qsort(want + first, n_want - first, sizeof(*want), cmp_ts);
	}
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "reader");
	while (store_reader_next(r, &rec) > 0) {
		const struct wrec *w = got < n_want ? want[got] : NULL;

		EXPECT(w, "more records than written");
		if (!w)
			break;
		EXPECT(rec.hdr.ts_ns == w->h.ts_ns && rec.hdr.cpu == w->h.cpu && rec.hdr.pid == w->h.pid &&
		       rec.hdr.tid == w->h.tid && !strcmp(rec.hdr.comm, w->h.comm) &&
		       rec.len == w->h.len && !memcmp(rec.data, w->data, rec.len),
		       "record %zu differs", got);
		EXPECT(!strcmp(rec.ev->event->name, evs[w->h.slot][1]) && !strcmp(rec.ev->selection, "sel") &&
		       rec.ev->priority == 6, "record %zu: event %s", got, rec.ev->event->name);
		got++;
	}
	EXPECT(got == n_want, "read %zu of %zu", got, n_want);
	EXPECT(store_reader_skipped(r) == want_skipped, "skipped %llu",
	       (unsigned long long)store_reader_skipped(r));
	store_reader_free(r);
	return got;
}

static char *only_file(const char *dir)
{
	char cmd[256], *line = NULL;
	size_t cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/*.tstore", dir);
	p = popen(cmd, "r");
	if (getline(&line, &cap, p) > 0)
		line[strcspn(line, "\n")] = 0;
	pclose(p);
	return line;
}

static void rm_dir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

static void round_trip(enum store_codec codec)
{
	char dir[64];

	make_recs();
	make_dir(dir);
	write_store(dir, codec);
	read_store(dir, 0, 0);
	rm_dir(dir);
}

/* The recorder's window (Output=recorder): no file until a snapshot; past
 * its size whole blocks go, counted; a snapshot holds the window's blocks
 * at its start and those appended until its end, not after, and reads back
 * as any store. A window of 1 byte keeps the newest block alone. */
static void test_window_snapshot(void)
{
	char dir[64];
	struct store_writer_opts o = { .directory = dir, .codec = STORE_CODEC_ZSTD,
				       .flush_usec = 100000, .window = 1 };
	struct store_window_stats st;
	struct store_snapshot_info info = { 0 };
	struct store_writer *w;
	char pattern[96];
	glob_t g = { 0 };
	int ids[3], r = 0;

	make_recs();
	make_dir(dir);
	EXPECT(store_writer_new(&w, &o) == 0, "writer");
	for (int i = 0; i < 3; i++)
		ids[i] = store_writer_add_event(w, fx_find(evs[i][0], evs[i][1]), NULL, "sel", 6, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(recs); i++) {
		if (i == 4 * N_PER_BLOCK)	/* blocks 0-3 given: 3 is the window */
			r = store_snapshot_start(w, "test");
		if (i == 5 * N_PER_BLOCK)	/* block 4 recorded after the trigger */
			store_snapshot_end(w);
		EXPECT(store_writer_append(w, ids[recs[i].h.slot], &recs[i].h, recs[i].data,
					   recs[i].h.len) == 0, "append %zu", i);
		if (i < 4 * N_PER_BLOCK && (i + 1) % N_PER_BLOCK == 0)
			store_writer_sync(w);	/* sealed, and in the window */
	}
	EXPECT(r == 0, "snapshot: %s", strerror(-r));
	EXPECT(store_snapshot_start(w, "again") == -EBUSY, "one at a time");
	EXPECT(store_snapshot_poll(w, true, &info) == 1 && info.err == 0, "written: %s",
	       strerror(-info.err));
	store_writer_sync(w);
	store_window_get_stats(w, &st);
	EXPECT(st.records == ARRAY_SIZE(recs) && st.overwritten == 5 * N_PER_BLOCK && st.blocks == 1,
	       "records %llu overwritten %llu blocks %llu", (unsigned long long)st.records,
	       (unsigned long long)st.overwritten, (unsigned long long)st.blocks);
	EXPECT(info.records == 2 * N_PER_BLOCK && info.overwritten == 3 * N_PER_BLOCK && !info.lost,
	       "snapshot: records %llu overwritten %llu", (unsigned long long)info.records,
	       (unsigned long long)info.overwritten);
	EXPECT(info.path && strstr(info.path, "/" STORE_SNAPSHOT_PREFIX) && strstr(info.path, "-test"),
	       "path %s", info.path);
	EXPECT(info.path && store_snapshot_name(strrchr(info.path, '/') + 1),
	       "MaxSnapshots= would not count %s", info.path);
	snprintf(pattern, sizeof(pattern), "%s/*" STORE_SUFFIX, dir);
	EXPECT(glob(pattern, 0, NULL, &g) == GLOB_NOMATCH, "no store file beside the snapshot");
	globfree(&g);
	if (info.path)
		read_store(info.path, ~(1u << 3 | 1u << 4), 0);	/* blocks 3 and 4 */
	store_snapshot_info_free(&info);
	store_writer_free(w);
	rm_dir(dir);
}

/* A snapshot that cannot be written says why and leaves nothing. */
static void test_window_snapshot_fails(void)
{
	struct store_writer_opts o = { .directory = "/dev/null/nowhere", .codec = STORE_CODEC_ZSTD,
				       .flush_usec = 100000, .window = 1 << 20 };
	struct store_snapshot_info info = { 0 };
	struct store_writer *w;
	int id;

	make_recs();
	EXPECT(store_writer_new(&w, &o) == 0, "writer: no directory until a snapshot");
	id = store_writer_add_event(w, fx_find(evs[0][0], evs[0][1]), NULL, "sel", 6, NULL);
	EXPECT(store_writer_append(w, id, &recs[0].h, recs[0].data, recs[0].h.len) == 0, "append");
	EXPECT(store_snapshot_start(w, "fails") == 0, "start");
	store_snapshot_end(w);
	EXPECT(store_snapshot_poll(w, true, &info) == 1 && info.err == -ENOTDIR, "err %d", info.err);
	store_snapshot_info_free(&info);
	EXPECT(store_snapshot_start(w, "again") == 0, "the next one starts");
	store_writer_free(w);	/* ends and reaps it */
}

static void test_round_trip_zstd(void) { round_trip(STORE_CODEC_ZSTD); }
static void test_round_trip_zlib(void) { round_trip(STORE_CODEC_ZLIB); }
static void test_round_trip_none(void) { round_trip(STORE_CODEC_NONE); }

/* Offsets of the block chunks of a file. */
static size_t block_offsets(const char *path, off_t *offs, size_t max)
{
	int fd = open(path, O_RDONLY);
	struct store_chunk_hdr h;
	off_t off = 0;
	size_t n = 0;

	while (pread(fd, &h, sizeof(h), off) == sizeof(h)) {
		if (h.type == STORE_CHUNK_BLOCK && n < max)
			offs[n++] = off;
		off += sizeof(h) + h.disk_len;
	}
	close(fd);
	return n;
}

static void flip(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	(void)!pread(fd, &b, 1, off);
	b ^= 0x5a;
	(void)!pwrite(fd, &b, 1, off);
	close(fd);
}

static void test_flipped_payload(void)
{
	char dir[64];
	off_t offs[16];
	char *path;

	make_recs();
	make_dir(dir);
	write_store(dir, STORE_CODEC_ZSTD);
	path = only_file(dir);
	EXPECT(block_offsets(path, offs, 16) == N_BLOCKS, "blocks");
	flip(path, offs[2] + sizeof(struct store_chunk_hdr) + 40);
	read_store(dir, 1u << 2, 1);
	free(path);
	rm_dir(dir);
}

static void test_flipped_header(void)
{
	char dir[64];
	off_t offs[16];
	char *path;

	make_recs();
	make_dir(dir);
	write_store(dir, STORE_CODEC_ZLIB);
	path = only_file(dir);
	EXPECT(block_offsets(path, offs, 16) == N_BLOCKS, "blocks");
	flip(path, offs[3] + 13);	/* the record count */
	read_store(dir, 1u << 3, 1);
	free(path);
	rm_dir(dir);
}

static void test_torn_tail(void)
{
	char dir[64];
	off_t offs[16];
	char *path;

	make_recs();
	make_dir(dir);
	write_store(dir, STORE_CODEC_NONE);
	path = only_file(dir);
	EXPECT(block_offsets(path, offs, 16) == N_BLOCKS, "blocks");
	EXPECT(truncate(path, offs[N_BLOCKS - 1] + 100) == 0, "truncate");
	read_store(dir, 1u << (N_BLOCKS - 1), 1);
	free(path);
	rm_dir(dir);
}

static void field_name(void *ctx, const struct tp_field *f, const char *value,
		       _unused_ const char *raw)
{
	struct strbuf *sb = ctx;

	if (!f->is_common)
		sb_printf(sb, "%s=%s ", f->name, value);
}

/* A synthetic event (issue 31, built from its definition, not tracefs)
 * stores its format as any event does: read back where no config defines
 * it, it is the same event (system, id, fields) and renders as the live
 * one, its fields named for the journal (TRACE_LAT=) from its format. */
static void test_synthetic_stored(void)
{
	char dir[64], *paths[1] = { dir };
	struct store_writer_opts wo = { .directory = dir, .codec = STORE_CODEC_ZSTD, .flush_usec = 100000 };
	struct store_reader_opts o = { 0 };
	struct strbuf live = { 0 }, back = { 0 }, fields = { 0 };
	struct trace_rec_hdr h = { .ts_ns = 5, .cpu = 1, .pid = 9, .tid = 9, .comm = "cyclictest" };
	struct tp_synth_error err;
	struct tp_event *e = NULL;
	uint8_t rec[32] = { 0 };
	uint64_t lat = 12;
	int32_t pid = 4711, prio = 120;
	struct store_writer *w;
	struct store_reader *r;
	struct store_rec got;

	EXPECT(tp_synthetic_parse("wakeup_latency u64 lat; pid_t pid; int prio", TP_SYNTH_ID_FIRST,
				  &e, &err) == 0, "definition: %s", e ? "" : err.expected);
	if (!e)
		return;
	*(uint16_t *)rec = TP_SYNTH_ID_FIRST;
	memcpy(rec + 8, &lat, 8);
	memcpy(rec + 16, &pid, 4);
	memcpy(rec + 24, &prio, 4);
	make_dir(dir);
	EXPECT(store_writer_new(&w, &wo) == 0, "writer");
	EXPECT(store_writer_add_event(w, e, e->name, "latency", 6, NULL) == 0, "event");
	store_writer_append(w, 0, &h, rec, sizeof(rec));
	store_writer_free(w);
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "reader");
	EXPECT(store_reader_next(r, &got) == 1, "one record");
	EXPECT(tp_event_is_synthetic(got.ev->event) && !strcmp(got.ev->event->name, "wakeup_latency") &&
	       got.ev->event->id == TP_SYNTH_ID_FIRST && got.ev->event->n_fields == e->n_fields,
	       "%s:%s id %d", got.ev->event->system, got.ev->event->name, got.ev->event->id);
	render_prepare(e);
	render_prepare(got.ev->event);
	render_event(e, NULL, rec, sizeof(rec), &live);
	render_event(got.ev->event, NULL, got.data, got.len, &back);
	EXPECT_STREQ(sb_str(&back), "lat=12 pid=4711 prio=120");
	EXPECT_STREQ(sb_str(&back), sb_str(&live));
	render_fields(got.ev->event, NULL, got.data, got.len, field_name, &fields);
	EXPECT_STREQ(sb_str(&fields), "lat=12 pid=4711 prio=120 ");
	sb_free(&live);
	sb_free(&back);
	sb_free(&fields);
	store_reader_free(r);
	render_release(e);
	tp_event_free(e);
	rm_dir(dir);
}

/* The enum values a print fmt needed (block_rq_issue's IOPRIO_CLASS_*, which
 * tracefs leaves as names) come back from the file, not from BTF, and the
 * event read back renders as the live one does. */
static void test_enums_stored(void)
{
	char dir[64], *paths[1] = { dir };
	struct store_writer_opts wo = { .directory = dir, .codec = STORE_CODEC_ZSTD, .flush_usec = 100000 };
	struct store_reader_opts o = { 0 };
	struct strbuf live = { 0 }, back = { 0 };
	struct tp_event *e = fx_find("block", "block_rq_issue");
	const struct tp_field *f = e ? tp_event_field(e, "ioprio") : NULL;
	struct trace_rec_hdr h = { .ts_ns = 5, .cpu = 1, .pid = 9, .tid = 9, .comm = "kworker" };
	static uint8_t rec[512];
	struct store_writer *w;
	struct store_reader *r;
	struct store_rec got;
	uint16_t prio = 2 << 13 | 4;	/* IOPRIO_CLASS_BE, level 4 */

	EXPECT(e && f && f->size == 2, "block_rq_issue's ioprio");
	if (!f)
		return;
	make_dir(dir);
	memcpy(rec + f->offset, &prio, 2);
	EXPECT(store_writer_new(&w, &wo) == 0, "writer");
	EXPECT(store_writer_add_event(w, e, NULL, "io", 6, NULL) == 0, "event");
	EXPECT(e->n_enums > 0, "the live event resolved no enum name");
	store_writer_append(w, 0, &h, rec, e->fixed_size);
	store_writer_free(w);
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "reader");
	EXPECT(store_reader_next(r, &got) == 1, "one record");
	EXPECT(got.ev->event->enums_given && got.ev->event->n_enums == e->n_enums,
	       "enums %zu, want %zu", got.ev->event->n_enums, e->n_enums);
	render_prepare(e);
	render_prepare(got.ev->event);
	render_event(e, NULL, rec, e->fixed_size, &live);
	render_event(got.ev->event, NULL, got.data, got.len, &back);
	EXPECT_STREQ(sb_str(&back), sb_str(&live));
	EXPECT(strstr(sb_str(&back), " be,0,4 "), "ioprio class shown: %s", sb_str(&back));
	sb_free(&live);
	sb_free(&back);
	store_reader_free(r);
	rm_dir(dir);
}

/* TRACERD_STORE_SEEDS=DIR: leave a small store file there (the fuzz seeds). */
static void write_seeds(const char *dir)
{
	for (enum store_codec c = STORE_CODEC_NONE; c <= STORE_CODEC_ZSTD; c++) {
		struct store_writer_opts o = { .directory = dir, .codec = c, .flush_usec = 100000 };
		struct store_writer *w;

		make_recs();
		if (store_writer_new(&w, &o) < 0)
			return;
		for (int i = 0; i < 3; i++)
			store_writer_add_event(w, fx_find(evs[i][0], evs[i][1]), NULL, "seed", 6, NULL);
		for (size_t i = 0; i < 12; i++) {
			store_writer_append(w, recs[i].h.slot, &recs[i].h, recs[i].data, recs[i].h.len);
			if (i % 4 == 3)
				store_writer_flush(w, true);
		}
		store_writer_free(w);
	}
}

static char *nth_file(const char *dir, int n)
{
	char cmd[256], *line = NULL;
	size_t cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/*.tstore | sed -n %dp", dir, n + 1);
	p = popen(cmd, "r");
	if (getline(&line, &cap, p) > 0)
		line[strcspn(line, "\n")] = 0;
	else if (line)
		line[0] = 0;
	pclose(p);
	return line;
}

/* Files deleted while the reader reads (MaxUse=, or by hand): their records
 * are counted as deleted unread, exactly, from the numbering in the files;
 * the last file's, which no later file bounds, as not known. Files the
 * reader had read whole before they went count nothing. */
static void test_deleted_unread(void)
{
	char *paths[1], dir[64];
	struct store_reader_opts o = { 0 };
	struct store_reader *r;
	struct store_rec rec;
	uint64_t unknown = 0, unread;
	size_t got = 0;

	make_recs();
	make_dir(dir);
	write_store_files(dir, STORE_CODEC_ZSTD, 1);	/* 6 files of one block each */
	paths[0] = dir;
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "reader");
	EXPECT(store_reader_next(r, &rec) == 1, "first record");
	got++;
	/* The first file's block is read; it goes, and the 2nd, 3rd and last. */
	char *files[N_BLOCKS];

	for (int i = 0; i < N_BLOCKS; i++)
		files[i] = nth_file(dir, i);
	for (int i = 0; i < N_BLOCKS; i++) {
		if ((i <= 2 || i == N_BLOCKS - 1) && files[i])
			EXPECT(unlink(files[i]) == 0, "unlink %s", files[i]);
		free(files[i]);
	}
	while (store_reader_next(r, &rec) > 0)
		got++;
	unread = store_reader_unread(r, &unknown);
	EXPECT(got == 3 * N_PER_BLOCK, "read %zu records", got);
	EXPECT(unread == 2 * N_PER_BLOCK && unknown == 1, "unread %llu, not known %llu",
	       (unsigned long long)unread, (unsigned long long)unknown);
	EXPECT(store_reader_skipped(r) == 0, "skipped %llu", (unsigned long long)store_reader_skipped(r));
	store_reader_free(r);
	rm_dir(dir);
}

/* A writer restarted on the directory numbers on from its last file: the
 * first writer's last file, gone before it is read (as MaxUse= takes a
 * file a reader listed), is counted exactly up to the second writer's
 * first file, and with want_lost its records come as marks on their CPUs. */
static void test_deleted_across_restart(void)
{
	char *paths[1], dir[64], *last;
	struct store_reader_opts o = { .want_lost = true };
	uint64_t want[2] = { 0 }, marked[2] = { 0 }, unknown = 1, unread;
	struct store_reader *r;
	struct store_rec rec;
	size_t got = 0;

	make_recs();
	make_dir(dir);
	write_store_files(dir, STORE_CODEC_ZSTD, 1);	/* 6 files of one block each */
	for (size_t i = 0; i < ARRAY_SIZE(recs); i++)	/* the restart: later */
		recs[i].h.ts_ns += 1000000000000ULL;
	write_store_files(dir, STORE_CODEC_ZSTD, 1);
	for (size_t i = (N_BLOCKS - 1) * N_PER_BLOCK; i < N_BLOCKS * N_PER_BLOCK; i++)
		want[recs[i].h.cpu]++;
	last = nth_file(dir, N_BLOCKS - 1);
	EXPECT(last && unlink(last) == 0, "unlink %s", strna(last));
	free(last);
	paths[0] = dir;
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "reader");
	while (store_reader_next(r, &rec) == 1) {
		if (rec.deleted && rec.hdr.cpu < 2)
			marked[rec.hdr.cpu] += rec.lost;
		got += !rec.lost;
	}
	unread = store_reader_unread(r, &unknown);
	EXPECT(got == (2 * N_BLOCKS - 1) * N_PER_BLOCK, "read %zu records", got);
	EXPECT(unread == N_PER_BLOCK && unknown == 0, "unread %llu, not known %llu",
	       (unsigned long long)unread, (unsigned long long)unknown);
	EXPECT(marked[0] == want[0] && marked[1] == want[1] && want[0] && want[1],
	       "marked %llu and %llu on CPUs 0 and 1, the file held %llu and %llu",
	       (unsigned long long)marked[0], (unsigned long long)marked[1],
	       (unsigned long long)want[0], (unsigned long long)want[1]);
	store_reader_free(r);
	rm_dir(dir);
}

/* The writer's first 2 files, deleted before the reader first looks. */
static void write_and_delete_first(void *userdata)
{
	const char *dir = userdata;
	static bool written;

	if (written)
		return;
	written = true;
	write_store_files(dir, STORE_CODEC_ZSTD, 1);	/* 6 files of one block each */
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *f = nth_file(dir, 0);

		EXPECT(f && unlink(f) == 0, "unlink %s", strna(f));
	}
}

/* A follower that was there before the writer began, stalled until
 * MaxUse= deleted the writer's first files, counts their records (it never
 * saw their names); a reader that finds the files at its start does not
 * count what was deleted before it started. */
static void test_deleted_before_seen(void)
{
	char *paths[1], dir[64];
	struct store_reader_opts o = { .follow = true, .idle = write_and_delete_first, .userdata = dir };
	struct store_reader *r;
	struct store_rec rec;
	uint64_t unknown = 0;
	size_t got = 0;

	make_recs();
	make_dir(dir);
	paths[0] = dir;
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "follower");
	while (got < 4 * N_PER_BLOCK && store_reader_next(r, &rec) == 1)
		got++;
	EXPECT(got == 4 * N_PER_BLOCK, "read %zu records", got);
	EXPECT(store_reader_unread(r, &unknown) == 2 * N_PER_BLOCK && unknown == 0,
	       "follower: unread %llu, not known %llu",
	       (unsigned long long)store_reader_unread(r, &unknown), (unsigned long long)unknown);
	store_reader_free(r);
	o = (struct store_reader_opts){ 0 };
	EXPECT(store_reader_new(&r, paths, 1, &o) == 0, "reader");
	for (got = 0; store_reader_next(r, &rec) == 1;)
		got++;
	EXPECT(got == 4 * N_PER_BLOCK && store_reader_unread(r, &unknown) == 0 && unknown == 0,
	       "reader: read %zu, unread %llu", got,
	       (unsigned long long)store_reader_unread(r, &unknown));
	store_reader_free(r);
	rm_dir(dir);
}

/* An entry of a store directory: 'd' a directory with a file in it, as a
 * snapshot is; 'f' a file; 'l' a symlink to dir/target. */
static void make_entry(const char *dir, const char *name, char kind)
{
	char path[512], file[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (kind == 'd') {
		EXPECT(mkdir(path, 0750) == 0, "mkdir %s: %m", path);
		snprintf(file, sizeof(file), "%s/tracerd-0000000000000001-0000" STORE_SUFFIX, path);
	} else if (kind == 'l') {
		snprintf(file, sizeof(file), "%s/target", dir);
		EXPECT(mkdir(file, 0750) == 0 && symlink(file, path) == 0, "symlink %s: %m", path);
		return;
	} else {
		snprintf(file, sizeof(file), "%s", path);
	}
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	EXPECT(fd >= 0 && write(fd, "x", 1) == 1, "%s: %m", file);
	if (fd >= 0)
		close(fd);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

/* store_snapshots_over(dir, keep, current) is want (names, oldest first). */
static void expect_over(const char *dir, unsigned keep, const char *current,
			const char *const *want, size_t n_want)
{
	char **names = NULL;
	size_t n = 0;
	int r = store_snapshots_over(dir, keep, current, &names, &n);

	EXPECT(r == 0, "keep %u: %s", keep, strerror(-r));
	EXPECT(n == n_want, "keep %u, current %s: %zu to delete, want %zu", keep, current, n, n_want);
	for (size_t i = 0; i < n && i < n_want; i++)
		EXPECT_STREQ(names[i], want[i]);
	strv_free(names, n);
}

#define SNAP(t, reason) STORE_SNAPSHOT_PREFIX "2026120" t ".123-" reason

/* MaxSnapshots=: the snapshot directories past the newest keep, oldest by
 * name first, the torn ones among them; the one just written counts and is
 * never selected, even when its name sorts first (a clock set back); no
 * other entry is (the store's files, the lock, a snapshot being written,
 * names not a snapshot's, a file or a symlink with a snapshot's name). The
 * deletion takes a snapshot's files with it, and leaves a directory that
 * holds a directory of someone else's, saying why. */
static void test_snapshots_keep(void)
{
	static const char *const others[][2] = {
		{ "tracerd-0000000000000001-0000" STORE_SUFFIX, "f" }, { ".lock", "f" },
		{ STORE_SNAPSHOT_TMP SNAP("1-000000", "being-written"), "d" },
		{ SNAP("1-000000", "a-file"), "f" }, { SNAP("1-000000", "a-symlink"), "l" },
		{ STORE_SNAPSHOT_PREFIX "1-000000.123-short-date", "d" },
		{ SNAP("1-000000", ""), "d" }, { SNAP("1-000000", "a space"), "d" },
		{ "snapshots", "d" }, { "Snapshot-20261201-000000.123-case", "d" },
	};
	const char *a = SNAP("1-000000", "signal"), *b = SNAP("2-000000", "request.torn");
	const char *c = SNAP("3-000000", "trig"), *d = SNAP("4-000000", "signal");
	char dir[64], sub[512], **names = NULL;
	size_t n = 0;
	int r;

	make_dir(dir);
	expect_over(dir, 1, NULL, NULL, 0);	/* an empty directory */
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		make_entry(dir, others[i][0], others[i][1][0]);
	expect_over(dir, 1, NULL, NULL, 0);	/* none of them a snapshot */
	make_entry(dir, c, 'd');
	make_entry(dir, a, 'd');
	make_entry(dir, d, 'd');
	make_entry(dir, b, 'd');
	EXPECT(store_snapshot_name(a) && store_snapshot_name(b) && !store_snapshot_name(others[3][0] + 1),
	       "names");
	expect_over(dir, 2, d, (const char *const[]){ a, b }, 2);
	expect_over(dir, 2, NULL, (const char *const[]){ a, b }, 2);
	expect_over(dir, 1, d, (const char *const[]){ a, b, c }, 3);
	expect_over(dir, 4, d, NULL, 0);
	expect_over(dir, 0, d, NULL, 0);	/* no limit */
	expect_over(dir, 2, a, (const char *const[]){ b, c }, 2);	/* the clock set back */
	expect_over(dir, 2, "gone", (const char *const[]){ a, b }, 2);	/* not there: not counted */
	EXPECT(store_snapshot_remove(dir, a) == 0 && store_snapshot_remove(dir, b) == 0, "remove");
	EXPECT(!exists(dir, a) && !exists(dir, b) && exists(dir, c) && exists(dir, d), "a and b gone");
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		EXPECT(exists(dir, others[i][0]), "%s deleted", others[i][0]);
	EXPECT(exists(dir, "target"), "the symlink's target deleted");
	EXPECT(store_snapshot_remove(dir, a) == -ENOENT, "gone already");
	EXPECT(store_snapshot_remove(dir, "snapshots") == -EINVAL, "not a snapshot's name");
	r = store_snapshot_remove(dir, others[4][0]);
	EXPECT(r == -ENOTDIR || r == -ELOOP, "a symlink followed: %d", r);
	EXPECT(store_snapshot_remove(dir, others[3][0]) == -ENOTDIR, "a file");
	snprintf(sub, sizeof(sub), "%s/%s/not-ours", dir, c);
	EXPECT(mkdir(sub, 0750) == 0, "%s: %m", sub);
	EXPECT(store_snapshot_remove(dir, c) == -ENOTEMPTY, "a directory inside followed");
	EXPECT(exists(dir, c), "a snapshot holding a directory deleted");
	EXPECT(store_snapshots_over("/nonexistent/dir", 1, NULL, &names, &n) == 0 && !n && !names,
	       "no directory: no snapshot");
	rm_dir(dir);
}

int main(void)
{
	if (getenv("TRACERD_STORE_SEEDS")) {
		write_seeds(getenv("TRACERD_STORE_SEEDS"));
		return 0;
	}
	RUN(test_round_trip_zstd);
	RUN(test_round_trip_zlib);
	RUN(test_round_trip_none);
	RUN(test_flipped_payload);
	RUN(test_flipped_header);
	RUN(test_torn_tail);
	RUN(test_enums_stored);
	RUN(test_synthetic_stored);
	RUN(test_deleted_unread);
	RUN(test_deleted_before_seen);
	RUN(test_deleted_across_restart);
	RUN(test_window_snapshot);
	RUN(test_window_snapshot_fails);
	RUN(test_snapshots_keep);
	return TEST_EXIT();
}
