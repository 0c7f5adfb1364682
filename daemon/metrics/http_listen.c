// SPDX-License-Identifier: GPL-2.0
/* The metrics endpoint's listening socket from its Listen= text: an IPv4
 * or bracketed IPv6 address with a port, or an absolute unix socket path.
 * Numbers only: a host name would need a resolver at start. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "metrics/http.h"
#include "util.h"

#define HTTP_BACKLOG 128	/* above HTTP_CONN_MAX: the 65th is refused by us, counted */

static const char expected[] = "expected HOST:PORT, [IPV6]:PORT or /PATH";

union sockaddr_any {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr_un un;
};

static int parse_port(const char *s, uint16_t *ret)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 5)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*ret = htons((uint16_t)v);
	return 0;
}

/* "1.2.3.4:PORT" or "[::1]:PORT" to an address; port 0 is any free one. */
static int parse_inet(const char *spec, union sockaddr_any *a, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	size_t n;

	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');

		if (!end || end[1] != ':' || (n = (size_t)(end - spec - 1)) >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec + 1, n);
		host[n] = 0;
		*a = (union sockaddr_any) { .in6.sin6_family = AF_INET6 };
		*len = sizeof(a->in6);
		if (inet_pton(AF_INET6, host, &a->in6.sin6_addr) != 1)
			return -EINVAL;
		return parse_port(end + 2, &a->in6.sin6_port);
	}
	colon = strrchr(spec, ':');
	if (!colon || (n = (size_t)(colon - spec)) >= sizeof(host))
		return -EINVAL;
	memcpy(host, spec, n);
	host[n] = 0;
	*a = (union sockaddr_any) { .in.sin_family = AF_INET };
	*len = sizeof(a->in);
	if (inet_pton(AF_INET, host, &a->in.sin_addr) != 1)
		return -EINVAL;
	return parse_port(colon + 1, &a->in.sin_port);
}

/* A socket left at path by a daemon that is gone is removed; one that
 * answers is another's, and anything else at path is not ours to remove. */
static int remove_stale(const char *path, const union sockaddr_any *a, socklen_t len,
			char *why, size_t why_size)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, why_size, "%s exists and is not a socket", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, &a->sa, len) == 0) {
		snprintf(why, why_size, "%s is in use by another process", path);
		return -EADDRINUSE;
	}
	if (errno != ECONNREFUSED)
		return -errno;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int http_listen(const char *spec, int *ret_fd, char *why, size_t why_size)
{
	_cleanup_close_ int fd = -1;
	union sockaddr_any a;
	socklen_t len;
	int r, one = 1;

	if (why_size)
		why[0] = 0;
	if (spec[0] == '/') {
		size_t n = strlen(spec);

		if (n >= sizeof(a.un.sun_path)) {
			snprintf(why, why_size, "a socket path of at most %zu bytes", sizeof(a.un.sun_path) - 1);
			return -ENAMETOOLONG;
		}
		a = (union sockaddr_any) { .un.sun_family = AF_UNIX };
		memcpy(a.un.sun_path, spec, n + 1);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
		r = remove_stale(spec, &a, len, why, why_size);
		if (r < 0) {
			if (why_size && !why[0])
				snprintf(why, why_size, "%s: %s", spec, strerror(-r));
			return r;
		}
	} else if (parse_inet(spec, &a, &len) < 0) {
		snprintf(why, why_size, "%s", expected);
		return -EINVAL;
	}
	fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* A restart finds the port free while old connections sit in TIME_WAIT;
	 * an IPv6 address means IPv6 only, as written. */
	if ((a.sa.sa_family != AF_UNIX &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) ||
	    (a.sa.sa_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, &a.sa, len) < 0 || listen(fd, HTTP_BACKLOG) < 0)
		goto fail;
	*ret_fd = TAKE_FD(fd);
	return 0;
fail:
	r = -errno;
	snprintf(why, why_size, "%s: %s", spec, strerror(-r));
	return r;
}
