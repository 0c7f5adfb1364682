// SPDX-License-Identifier: GPL-2.0
/* --since and --until: the times tracerd prints (CLOCK_MONOTONIC seconds of
 * the writing boot, "934.253262"), wall-clock dates and times with a
 * fraction of a second, epoch seconds, and times relative to now. Parsed
 * exactly (no floating point), so that a timestamp copied from a line
 * selects that line. */
#include <ctype.h>
#include <time.h>
#include "read.h"
#include "util.h"

#define NSEC 1000000000LL

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * NSEC + t.tv_nsec;
}

/* "S[.F]": S seconds (up to 10 digits) and up to 9 digits of fraction; the
 * span is the unit of the last digit given. */
static int parse_seconds(const char *s, struct read_time *ret)
{
	int64_t sec = 0, frac = 0, span = NSEC;
	const char *p = s;

	for (; isdigit((unsigned char)*p) && p - s < 10; p++)
		sec = sec * 10 + (*p - '0');
	if (p == s || sec > INT64_MAX / NSEC - 1)
		return -EINVAL;
	if (*p == '.') {
		const char *f = ++p;

		for (; isdigit((unsigned char)*p) && p - f < 9; p++) {
			frac = frac * 10 + (*p - '0');
			span /= 10;
		}
		if (p == f)
			return -EINVAL;
		frac *= span;
	}
	if (*p)
		return -EINVAL;
	ret->ns = sec * NSEC + frac;
	ret->span_ns = span;
	return 0;
}

/* "-N{s,sec,min,m,h,d}": now minus that. */
static int parse_ago(const char *s, struct read_time *ret)
{
	static const struct { const char *unit; int64_t ns; } units[] = {
		{ "s", NSEC }, { "sec", NSEC }, { "min", 60 * NSEC }, { "m", 60 * NSEC },
		{ "h", 3600 * NSEC }, { "d", 86400 * NSEC },
	};
	char *end;
	double v = strtod(s + 1, &end);

	for (size_t i = 0; end != s + 1 && v >= 0 && i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].unit)) {
			ret->ns = now_ns() - (int64_t)(v * units[i].ns);
			return 0;
		}
	return -EINVAL;
}

/* A local date and time; "HH:MM[:SS]" is today. Seconds may have a fraction. */
static int parse_date(const char *s, struct read_time *ret)
{
	static const char *const forms[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d",
		"%H:%M:%S", "%H:%M",
	};

	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		struct read_time frac = { 0, NSEC, false };
		time_t now = time(NULL);
		struct tm tm;
		char *end, buf[16];

		localtime_r(&now, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		end = strptime(s, forms[i], &tm);
		if (!end || (*end && (*end != '.' || !strstr(forms[i], "%S"))))
			continue;
		/* The fraction of the second: "0.250" parsed as seconds, exactly. */
		if (*end && (snprintf(buf, sizeof(buf), "0%s", end) >= (int)sizeof(buf) ||
			     parse_seconds(buf, &frac) < 0))
			continue;
		tm.tm_isdst = -1;
		ret->ns = (int64_t)mktime(&tm) * NSEC + frac.ns;
		ret->span_ns = frac.span_ns;
		return 0;
	}
	return -EINVAL;
}

int read_parse_time(const char *s, struct read_time *ret)
{
	*ret = (struct read_time){ .span_ns = 1 };
	if (!strcmp(s, "now")) {
		ret->ns = now_ns();
		return 0;
	}
	if (s[0] == '-')
		return parse_ago(s, ret);
	if (s[0] == '@')
		return parse_seconds(s + 1, ret);
	/* A bare number is what tracerd prints: monotonic seconds. */
	if (parse_seconds(s, ret) == 0) {
		ret->monotonic = true;
		return 0;
	}
	return parse_date(s, ret);
}

int read_time_range(const struct read_time *since, const struct read_time *until)
{
	if (since->monotonic != until->monotonic || since->ns == INT64_MIN || until->ns == INT64_MAX)
		return 0;
	return until->ns + until->span_ns - 1 < since->ns ? -ERANGE : 0;
}
