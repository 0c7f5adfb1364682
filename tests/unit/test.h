/* SPDX-License-Identifier: GPL-2.0 */
/* A very small unit-test harness: each TEST prints "ok - name" or
 * "not ok - name: why"; tests/run.sh counts those lines. */
#ifndef TRACERD_TEST_H
#define TRACERD_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failed_now, tests_failed, tests_passed;

#define EXPECT(cond, ...)                                                        \
	do {                                                                     \
		if (!(cond)) {                                                   \
			if (!test_failed_now)                                    \
				printf("#   %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			printf("#   ");                                          \
			printf(__VA_ARGS__);                                     \
			printf("\n");                                            \
			test_failed_now = 1;                                     \
		}                                                                \
	} while (0)

#define EXPECT_STREQ(a, b)                                                       \
	do {                                                                     \
		const char *_a = (a), *_b = (b);                                 \
		EXPECT(_a && _b && !strcmp(_a, _b), "got '%s', want '%s'",       \
		       _a ? _a : "(null)", _b ? _b : "(null)");                  \
	} while (0)

#define RUN(fn)                                                                  \
	do {                                                                     \
		test_failed_now = 0;                                             \
		fn();                                                            \
		printf("%s - %s\n", test_failed_now ? "not ok" : "ok", #fn);     \
		if (test_failed_now)                                             \
			tests_failed++;                                          \
		else                                                             \
			tests_passed++;                                          \
	} while (0)

#define TEST_EXIT() (tests_failed ? 1 : tests_passed ? 0 : 1)

#endif
