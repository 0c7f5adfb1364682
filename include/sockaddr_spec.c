// SPDX-License-Identifier: GPL-2.0
/* "HOST:PORT", "[V6]:PORT" or "/PATH" to a sockaddr, numeric only: a
 * config that names a host would make the start wait on DNS. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include "sockaddr_spec.h"

static int parse_port(const char *s, unsigned *port)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

static int parse_unix(const char *spec, struct sockaddr_storage *sa, socklen_t *len, int *bad)
{
	struct sockaddr_un *un = (struct sockaddr_un *)sa;
	size_t n = strlen(spec);

	if (n >= sizeof(un->sun_path)) {
		*bad = sizeof(un->sun_path) - 1;
		return -EINVAL;
	}
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, spec, n + 1);
	*len = offsetof(struct sockaddr_un, sun_path) + n + 1;
	return 0;
}

int sockaddr_spec_parse(const char *spec, struct sockaddr_storage *sa, socklen_t *len, int *bad)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *hs = spec;
	size_t hn;
	unsigned port;

	memset(sa, 0, sizeof(*sa));
	*bad = 0;
	if (spec[0] == '/')
		return parse_unix(spec, sa, len, bad);
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':') {
			*bad = close ? close - spec + 1 : (int)strlen(spec);
			return -EINVAL;
		}
		hs = spec + 1;
		hn = close - hs;
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon) {
			*bad = strlen(spec);
			return -EINVAL;
		}
		hn = colon - spec;
	}
	if (hn >= sizeof(host) || parse_port(colon + 1, &port) < 0) {
		*bad = hn >= sizeof(host) ? 0 : colon + 1 - spec;
		return -EINVAL;
	}
	memcpy(host, hs, hn);
	host[hn] = 0;
	if (spec[0] == '[') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1)
			return 0;
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		if (inet_pton(AF_INET, host, &in->sin_addr) == 1)
			return 0;
	}
	*bad = hs - spec;
	return -EINVAL;
}

static int format_unix(const struct sockaddr_un *un, socklen_t len, char *buf, size_t size)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n = len > off ? len - off : 0;

	if (n && un->sun_path[0] == 0)	/* abstract: the name is n - 1 bytes after the NUL */
		snprintf(buf, size, "@%.*s", (int)(n - 1), un->sun_path + 1);
	else
		snprintf(buf, size, "%.*s", (int)strnlen(un->sun_path, n), un->sun_path);
	return 0;
}

int sockaddr_spec_format(const struct sockaddr_storage *sa, socklen_t len, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];

	switch (sa->ss_family) {
	case AF_UNIX:
		return format_unix((const struct sockaddr_un *)sa, len, buf, size);
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(in->sin_port));
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}
