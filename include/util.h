/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by the userspace stages: cleanup attributes in the
 * style of systemd, and a growable array. */
#ifndef TRACERD_UTIL_H
#define TRACERD_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p) { free(*(void **)p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)

/* Steals a pointer out of a _cleanup_ variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
/* Steals a file descriptor out of a _cleanup_close_ variable. */
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -1; _t; })

#define swap(a, b) do { __typeof__(a) _t = (a); (a) = (b); (b) = _t; } while (0)

/* Grows *arr (of *n elements, capacity *cap) to hold one more. */
static inline int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}
#define GROW(arr, cap, n) grow((void **)&(arr), &(cap), (n), sizeof(*(arr)))

/* Grows *arr (capacity *cap) to hold index i, the new elements zeroed: an
 * array indexed by an id, whose holes read as "none". */
static inline int grow_to(void **arr, size_t *cap, size_t i, size_t elem)
{
	char *p;
	size_t c;

	if (i < *cap)
		return 0;
	c = (i + 1) * 2;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	memset(p + *cap * elem, 0, (c - *cap) * elem);
	*arr = p;
	*cap = c;
	return 0;
}
#define GROW_TO(arr, cap, i) grow_to((void **)&(arr), &(cap), (i), sizeof(*(arr)))

/* qsort() of nothing with a NULL base is undefined behaviour (UBSan says
 * so); an empty or single-element array needs no sorting anyway. */
static inline void qsort_safe(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static inline const char *strna(const char *s) { return s ? s : "n/a"; }
/* Two strings, either of which may be NULL, are the same. */
static inline bool streq_ptr(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

#endif
