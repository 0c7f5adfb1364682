// SPDX-License-Identifier: GPL-2.0
/* Shell-style globs (* ? [...]) as the kernel's glob_match() reads them,
 * for event selection; the filter's ~ operator has its own copy in BPF. */
#include <string.h>
#include "events.h"

static bool class_match(const char **pp, char c)
{
	const char *p = *pp + 1;
	bool neg = false, hit = false;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	do {
		char lo = *p, hi = lo;

		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = p[2];
			p += 2;
		}
		if (c >= lo && c <= hi)
			hit = true;
		p++;
	} while (*p && *p != ']');
	*pp = *p ? p + 1 : p;
	return hit != neg;
}

bool tp_glob_match(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;

	while (*s) {
		if (*p == '*') {
			star_p = ++p;
			star_s = s;
			continue;
		}
		if (*p == '[' && strchr(p, ']')) {
			const char *q = p;

			if (class_match(&q, *s)) {
				p = q;
				s++;
				continue;
			}
		} else if (*p && (*p == '?' || *p == *s)) {
			p++;
			s++;
			continue;
		}
		if (!star_p)
			return false;
		p = star_p;
		s = ++star_s;
	}
	while (*p == '*')
		p++;
	return !*p;
}

int tp_glob_check(const char *p)
{
	for (const char *q = p; *q; q++) {
		const char *end;

		if (*q != '[')
			continue;
		end = q + 1 + (q[1] == '!' || q[1] == '^');
		end = *end ? strchr(end + 1, ']') : NULL;	/* "[]...]": the first ']' is a member */
		if (!end)
			return (int)(q - p);
		q = end;
	}
	return -1;
}
