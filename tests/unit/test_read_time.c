// SPDX-License-Identifier: GPL-2.0
/* --since and --until: the timestamps tracerd prints (monotonic seconds)
 * are taken exactly, to the nanosecond, with the unit of their last digit;
 * wall-clock times take a fraction of a second; a range whose end is before
 * its start is refused. Wall-clock forms are checked against mktime() in
 * UTC and in a zone with daylight saving. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include "read/read.h"
#include "test.h"

#define NSEC 1000000000LL

static struct read_time parse(const char *s, int *r)
{
	struct read_time t;

	*r = read_parse_time(s, &t);
	return t;
}

static int64_t local_ns(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			 .tm_min = mi, .tm_sec = s, .tm_isdst = -1 };

	return (int64_t)mktime(&tm) * NSEC;
}

static void test_monotonic(void)
{
	static const struct { const char *s; int64_t ns, span; } cases[] = {
		{ "934.253262", 934253262000LL, 1000 },
		{ "934.5", 934500000000LL, 100000000 },
		{ "934", 934000000000LL, NSEC },
		{ "0.000000001", 1, 1 },
		{ "12.123456789", 12123456789LL, 1 },
		{ "9223372035.999999999", 9223372035999999999LL, 1 },
	};
	int r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct read_time t = parse(cases[i].s, &r);

		EXPECT(r == 0 && t.monotonic && t.ns == cases[i].ns && t.span_ns == cases[i].span,
		       "%s: r=%d monotonic=%d ns=%lld span=%lld", cases[i].s, r, t.monotonic,
		       (long long)t.ns, (long long)t.span_ns);
	}
	/* What does not fit in int64 ns, or is not a number, is refused. */
	for (const char *const *s = (const char *const[]){ "12345678901.5", "9223372036.5", "934.", ".5", "934.1234567890",
							    "934.25x", "9 34", "", NULL }; *s; s++) {
		parse(*s, &r);
		EXPECT(r == -EINVAL, "'%s' taken (%d)", *s, r);
	}
}

static void test_wall_clock(void)
{
	static const char *const zones[] = { "UTC", "Europe/Berlin" };

	for (size_t z = 0; z < 2; z++) {
		struct read_time t;
		int r;

		setenv("TZ", zones[z], 1);
		tzset();
		t = parse("2026-12-04 10:00:00.250", &r);
		EXPECT(r == 0 && !t.monotonic && t.ns == local_ns(2026, 12, 4, 10, 0, 0) + 250000000 &&
		       t.span_ns == 1000000, "%s: fraction: r=%d ns=%lld span=%lld", zones[z], r,
		       (long long)t.ns, (long long)t.span_ns);
		t = parse("2026-07-04T10:00:00.000000001", &r);
		EXPECT(r == 0 && t.ns == local_ns(2026, 7, 4, 10, 0, 0) + 1 && t.span_ns == 1,
		       "%s: T, summer, 1 ns: r=%d ns=%lld", zones[z], r, (long long)t.ns);
		t = parse("2026-12-04 10:00:05", &r);
		EXPECT(r == 0 && t.ns == local_ns(2026, 12, 4, 10, 0, 5) && t.span_ns == NSEC,
		       "%s: seconds: r=%d", zones[z], r);
		t = parse("2026-12-04 10:00", &r);
		EXPECT(r == 0 && t.ns == local_ns(2026, 12, 4, 10, 0, 0), "%s: minutes: r=%d", zones[z], r);
		t = parse("2026-12-04", &r);
		EXPECT(r == 0 && t.ns == local_ns(2026, 12, 4, 0, 0, 0), "%s: a day: r=%d", zones[z], r);
		/* A fraction belongs to seconds only. */
		parse("2026-12-04 10:00.5", &r);
		EXPECT(r == -EINVAL, "%s: a fraction of a minute taken", zones[z]);
		parse("2026-12-04 10:00:00.", &r);
		EXPECT(r == -EINVAL, "%s: an empty fraction taken", zones[z]);
	}
	unsetenv("TZ");
	tzset();
}

static void test_today_epoch_relative(void)
{
	struct timespec now;
	struct read_time t;
	time_t today = time(NULL);
	struct tm tm;
	int r;

	localtime_r(&today, &tm);
	t = parse("10:00:00.5", &r);
	EXPECT(r == 0 && !t.monotonic &&
	       t.ns == local_ns(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, 10, 0, 0) + NSEC / 2,
	       "today with a fraction: r=%d", r);
	t = parse("@1733306400.25", &r);
	EXPECT(r == 0 && !t.monotonic && t.ns == 1733306400250000000LL && t.span_ns == NSEC / 100,
	       "@EPOCH.frac: r=%d ns=%lld", r, (long long)t.ns);
	clock_gettime(CLOCK_REALTIME, &now);
	t = parse("-10min", &r);
	EXPECT(r == 0 && !t.monotonic &&
	       llabs(now.tv_sec * NSEC + now.tv_nsec - 600 * NSEC - t.ns) < 5 * NSEC, "-10min: r=%d", r);
	t = parse("now", &r);
	EXPECT(r == 0 && !t.monotonic && llabs(now.tv_sec * NSEC + now.tv_nsec - t.ns) < 5 * NSEC,
	       "now: r=%d", r);
	for (const char *const *s = (const char *const[]){ "-10", "-10years", "--5s", "yesterday",
							    "10:00:00.5.5", "@", "@x", NULL }; *s; s++) {
		parse(*s, &r);
		EXPECT(r == -EINVAL, "'%s' taken (%d)", *s, r);
	}
}

static void test_range(void)
{
	struct read_time open_since = { INT64_MIN, 0, false }, open_until = { INT64_MAX, 0, false };
	struct read_time a, b;
	int r;

	a = parse("934.5", &r);
	b = parse("934.4", &r);
	EXPECT(read_time_range(&a, &b) == -ERANGE, "--since 934.5 --until 934.4 taken");
	EXPECT(read_time_range(&b, &a) == 0, "--since 934.4 --until 934.5 refused");
	/* --until takes its last digit whole: 934.5 runs to 934.599999999. */
	b = parse("934.5", &r);
	a = parse("934.599999999", &r);
	EXPECT(read_time_range(&a, &b) == 0, "--since 934.599999999 --until 934.5 refused");
	a = parse("934.6", &r);
	EXPECT(read_time_range(&a, &b) == -ERANGE, "--since 934.6 --until 934.5 taken");
	a = parse("2026-12-04 10:00:01", &r);
	b = parse("2026-12-04 10:00", &r);
	EXPECT(read_time_range(&a, &b) == -ERANGE, "wall clock: until before since taken");
	a = parse("-10min", &r);
	b = parse("-20min", &r);
	EXPECT(read_time_range(&a, &b) == -ERANGE, "--since -10min --until -20min taken");
	EXPECT(read_time_range(&open_since, &b) == 0 && read_time_range(&a, &open_until) == 0,
	       "an open end refused");
	/* Of two clocks, nothing can be said: both apply. */
	a = parse("934.5", &r);
	EXPECT(read_time_range(&a, &b) == 0, "monotonic against wall clock refused");
}

int main(void)
{
	RUN(test_monotonic);
	RUN(test_wall_clock);
	RUN(test_today_epoch_relative);
	RUN(test_range);
	return TEST_EXIT();
}
