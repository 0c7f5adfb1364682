// SPDX-License-Identifier: GPL-2.0
/* Output=recorder, the flight recorder: records go into a window in memory
 * (a store sink whose writer keeps its compressed blocks instead of
 * writing them, store_window.c), and a trigger writes the window out as a
 * store directory of its own (store_snapshot.c). This file decides when:
 * a trigger inside [Recorder] MinIntervalSec= of the last snapshot, or
 * while one is taken, is counted instead; a snapshot records on for
 * KeepAfterSec= after its trigger; and says what each snapshot holds, in
 * one journal entry. Once one is written, the oldest snapshots past
 * MaxSnapshots= are deleted. It runs on the loop's thread; the writing
 * does not. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include "log.h"
#include "sink.h"
#include "store/store.h"
#include "util.h"

struct sink_recorder {
	struct sink base;
	struct sink *store;		/* the window's */
	struct store_writer *w;
	char *dir;
	uint64_t keep_after_usec, min_interval_usec;
	unsigned max_snapshots;		/* 0: no limit */
	uint64_t last_usec;		/* the last snapshot's trigger; 0: none yet */
	uint64_t end_usec;		/* the one being taken records until then; 0: ended */
	bool taking;
	uint64_t skipped;		/* triggers that took no snapshot, since the last */
	bool skip_said;			/* the first of them was logged */
	uint64_t written, failed, skipped_all;	/* since start, for GET /metrics */
	uint64_t deleted;		/* snapshots MaxSnapshots= deleted, since start */
};

static struct sink_recorder *as_recorder(struct sink *s);

/* "123.456789", as the lines show a timestamp. */
static void format_ts(char *buf, size_t size, uint64_t ns)
{
	snprintf(buf, size, "%llu.%06llu", (unsigned long long)(ns / 1000000000),
		 (unsigned long long)(ns % 1000000000 / 1000));
}

/* The snapshot's journal entry. */
static void report(struct sink_recorder *s, const struct store_snapshot_info *i)
{
	char f[8][PATH_MAX + 32], first[32], last[32];
	const char *fields[8] = { f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7] };

	format_ts(first, sizeof(first), i->ts_first);
	format_ts(last, sizeof(last), i->ts_last);
	snprintf(f[0], sizeof(f[0]), "TRACE_SNAPSHOT=%s", i->path);
	snprintf(f[1], sizeof(f[1]), "TRACE_SNAPSHOT_REASON=%s", i->reason);
	snprintf(f[2], sizeof(f[2]), "TRACE_SNAPSHOT_FIRST=%s", first);
	snprintf(f[3], sizeof(f[3]), "TRACE_SNAPSHOT_LAST=%s", last);
	snprintf(f[4], sizeof(f[4]), "TRACE_SNAPSHOT_RECORDS=%llu", (unsigned long long)i->records);
	snprintf(f[5], sizeof(f[5]), "TRACE_SNAPSHOT_LOST=%llu", (unsigned long long)i->lost);
	snprintf(f[6], sizeof(f[6]), "TRACE_SNAPSHOT_OVERWRITTEN=%llu", (unsigned long long)i->overwritten);
	snprintf(f[7], sizeof(f[7]), "TRACE_SNAPSHOT_SKIPPED=%llu", (unsigned long long)s->skipped);
	if (i->err < 0) {	/* the triggers it skipped go to the next one's entry */
		s->failed++;
		sink_message(s->store, LOG_ERR, fields, 2,
			     "snapshot (%s) could not be written to %s: %s; the window is kept",
			     i->reason, i->path, strerror(-i->err));
		return;
	}
	sink_message(s->store, LOG_INFO, fields, ARRAY_SIZE(fields),
		     "snapshot (%s) in %s: %llu records from %s to %s, %llu lost in it, "
		     "%llu overwritten before it, %llu triggers skipped since the last",
		     i->reason, i->path, (unsigned long long)i->records, first, last,
		     (unsigned long long)i->lost, (unsigned long long)i->overwritten,
		     (unsigned long long)s->skipped);
	s->written++;
	s->skipped = 0;
	s->skip_said = false;
}

/* MaxSnapshots=: the oldest snapshots past it go once path is written. On
 * the loop's thread: a snapshot directory holds one file, whose unlink is
 * quick, and at most one snapshot is written per MinIntervalSec=. One
 * that cannot be deleted is said, and is tried again after the next. */
static void keep_snapshots(struct sink_recorder *s, const char *path)
{
	const char *current = strrchr(path, '/');
	char **names;
	size_t n;
	int r;

	if (!s->max_snapshots)
		return;
	r = store_snapshots_over(s->dir, s->max_snapshots, current ? current + 1 : path, &names, &n);
	if (r < 0) {
		log_warning("recorder: cannot list the snapshots in %s to keep [Recorder] "
			    "MaxSnapshots=%u: %s", s->dir, s->max_snapshots, strerror(-r));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		r = store_snapshot_remove(s->dir, names[i]);
		if (r < 0) {
			log_warning("recorder: cannot delete the old snapshot %s/%s to keep "
				    "[Recorder] MaxSnapshots=%u: %s", s->dir, names[i],
				    s->max_snapshots, strerror(-r));
			continue;
		}
		s->deleted++;
		log_info("recorder: deleted the old snapshot %s/%s, %llu in all, to keep "
			 "[Recorder] MaxSnapshots=%u", s->dir, names[i],
			 (unsigned long long)s->deleted, s->max_snapshots);
	}
	strv_free(names, n);
}

/* A snapshot done is reported; wait: the one being taken ends now. */
static void reap(struct sink_recorder *s, bool wait)
{
	struct store_snapshot_info info;

	if (!s->taking)
		return;
	if (wait || (s->end_usec && store_now_usec() >= s->end_usec)) {
		store_snapshot_end(s->w);
		s->end_usec = 0;
	}
	if (store_snapshot_poll(s->w, wait, &info) <= 0)
		return;
	s->taking = false;
	/* A snapshot that failed (a full disk) holds the next one back no more. */
	if (info.err < 0)
		s->last_usec = 0;
	report(s, &info);
	if (info.err >= 0)
		keep_snapshots(s, info.path);
	store_snapshot_info_free(&info);
}

/* n triggers that take none: counted, the first of a run said. */
static int skip(struct sink_recorder *s, const char *reason, uint64_t n)
{
	s->skipped += n;
	s->skipped_all += n;
	if (!s->skip_said)
		sink_message(s->store, LOG_NOTICE, NULL, 0,
			     "snapshot trigger (%s) %s: counted, no snapshot (the next one's "
			     "journal entry says how many)", reason,
			     s->taking ? "while a snapshot is taken" : "inside [Recorder] MinIntervalSec=");
	s->skip_said = true;
	return -EBUSY;
}

int sink_recorder_snapshot(struct sink *sk, const char *reason, uint64_t n)
{
	struct sink_recorder *s = as_recorder(sk);
	uint64_t now = store_now_usec();
	int r;

	if (!s)
		return -ENOENT;
	if (!n)
		return 0;
	reap(s, false);
	if (s->taking || (s->last_usec && now - s->last_usec < s->min_interval_usec))
		return skip(s, reason, n);
	r = store_snapshot_start(s->w, reason);
	if (r < 0)
		sink_message(s->store, LOG_ERR, NULL, 0, "cannot take a snapshot (%s): %s", reason,
			     strerror(-r));
	else {
		s->taking = true;
		s->last_usec = now;
		s->end_usec = now + s->keep_after_usec;
	}
	if (n > 1)	/* those after the first, which took it (or tried) */
		(void)skip(s, reason, n - 1);
	return r;
}

static int recorder_emit(struct sink *sk, const struct out_record *r)
{
	struct sink_recorder *s = (struct sink_recorder *)sk;

	return sink_emit(s->store, r);
}

static int recorder_message(struct sink *sk, int priority, const char *msg,
			    const char *const *fields, size_t n_fields)
{
	struct sink_recorder *s = (struct sink_recorder *)sk;

	return s->store->ops->message(s->store, priority, msg, fields, n_fields);
}

static void recorder_flush(struct sink *sk)
{
	struct sink_recorder *s = (struct sink_recorder *)sk;

	sink_flush(s->store);
	reap(s, false);
}

static void recorder_lost(struct sink *sk, unsigned cpu, uint64_t ts_ns, uint64_t n)
{
	struct sink_recorder *s = (struct sink_recorder *)sk;

	sink_lost(s->store, cpu, ts_ns, n);
}

/* What the window was given, and what it dropped. */
static void report_window(struct sink_recorder *s)
{
	struct store_window_stats st;

	store_window_get_stats(s->w, &st);
	sink_message(s->store, LOG_INFO, NULL, 0,
		     "recorder: %llu records into the window, %llu overwritten (with %llu ring "
		     "buffer losses marked among them); it holds %llu KiB in %llu blocks; "
		     "%llu snapshots written, %llu failed, %llu old ones deleted "
		     "([Recorder] MaxSnapshots=%u)",
		     (unsigned long long)st.records, (unsigned long long)st.overwritten,
		     (unsigned long long)st.overwritten_lost, (unsigned long long)(st.bytes >> 10),
		     (unsigned long long)st.blocks, (unsigned long long)s->written,
		     (unsigned long long)s->failed, (unsigned long long)s->deleted,
		     s->max_snapshots);
}

int sink_recorder_stats(struct sink *sk, struct recorder_stats *out)
{
	struct sink_recorder *s = as_recorder(sk);
	struct store_window_stats w;

	if (!s)
		return -ENOENT;
	store_window_get_stats(s->w, &w);
	*out = (struct recorder_stats){
		.records = w.records, .overwritten = w.overwritten, .bytes = w.bytes,
		.snapshots = s->written, .failed = s->failed, .skipped = s->skipped_all,
		.deleted = s->deleted,
	};
	return 0;
}

/* A snapshot being taken ends here, written whole before the stop. */
static void recorder_close(struct sink *sk)
{
	struct sink_recorder *s = (struct sink_recorder *)sk;

	reap(s, true);
	sink_close(s->store);	/* the window has every record */
	report_window(s);
	if (s->skipped)
		sink_message(s->store, LOG_NOTICE, NULL, 0,
			     "%llu snapshot triggers since the last snapshot took none "
			     "([Recorder] MinIntervalSec=)", (unsigned long long)s->skipped);
	s->skipped = 0;
}

static void recorder_free(struct sink *sk)
{
	struct sink_recorder *s = (struct sink_recorder *)sk;

	reap(s, true);
	sink_free(s->store);
	free(s->dir);
	free(s);
}

static const struct sink_ops recorder_ops = {
	.emit = recorder_emit,
	.message = recorder_message,
	.flush = recorder_flush,
	.lost = recorder_lost,
	.close = recorder_close,
	.free = recorder_free,
};

static struct sink_recorder *as_recorder(struct sink *s)
{
	return s && s->ops == &recorder_ops ? (struct sink_recorder *)s : NULL;
}

/* A snapshot's temporary directory left by a crash during its write:
 * said, and renamed NAME.torn so that it is said once. */
static void report_torn(struct sink_recorder *s)
{
	DIR *d = opendir(s->dir);
	struct dirent *de;
	size_t n = strlen(STORE_SNAPSHOT_TMP);

	while (d && (de = readdir(d))) {
		char torn[NAME_MAX + 8];

		if (strncmp(de->d_name, STORE_SNAPSHOT_TMP STORE_SNAPSHOT_PREFIX,
			    n + strlen(STORE_SNAPSHOT_PREFIX)))
			continue;
		snprintf(torn, sizeof(torn), "%s.torn", de->d_name + n);
		if (renameat(dirfd(d), de->d_name, dirfd(d), torn) < 0)
			snprintf(torn, sizeof(torn), "%s", de->d_name);
		sink_message(s->store, LOG_WARNING, NULL, 0,
			     "%s/%s: a snapshot torn by a stop during its write (incomplete: "
			     "tracerd --read reports where it ends); now %s/%s", s->dir, de->d_name,
			     s->dir, torn);
	}
	if (d)
		closedir(d);
}

int sink_recorder_new(struct sink **ret, const struct config *cfg, struct diag *d)
{
	struct sink_recorder *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->base = (struct sink){ .ops = &recorder_ops };
	s->keep_after_usec = cfg->recorder.keep_after_sec * 1000000ULL;
	s->min_interval_usec = cfg->recorder.min_interval_sec * 1000000ULL;
	s->max_snapshots = cfg->recorder.max_snapshots;
	s->dir = strdup(cfg->store.directory ? cfg->store.directory : "");
	r = s->dir ? sink_store_new(&s->store, cfg, cfg->recorder.size, d) : -ENOMEM;
	if (r < 0) {
		free(s->dir);
		free(s);
		return r;
	}
	s->w = sink_store_writer(s->store);
	report_torn(s);
	*ret = &s->base;
	return 0;
}
