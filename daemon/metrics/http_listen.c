// SPDX-License-Identifier: GPL-2.0
/* The metrics endpoint's listening socket from its Listen= text: an IPv4
 * or bracketed IPv6 address with a port, or an absolute unix socket path.
 * Numbers only: a host name would need a resolver at start. Or the one
 * systemd passed (tracerd-metrics.socket), which takes its place. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include "metrics/http.h"
#include "sockaddr_spec.h"
#include "util.h"

#define HTTP_BACKLOG 128	/* above HTTP_CONN_MAX: the 65th is refused by us, counted */

static int remove_stale(const char *path, const struct sockaddr_storage *a, socklen_t len,
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
	if (connect(fd, (const struct sockaddr *)a, len) == 0) {
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
	struct sockaddr_storage a;
	socklen_t len;
	int r, bad, one = 1;

	if (why_size)
		why[0] = 0;
	if (sockaddr_spec_parse(spec, &a, &len, &bad) < 0) {
		snprintf(why, why_size, "expected %s", SOCKADDR_SPEC_EXPECTED);
		return -EINVAL;
	}
	if (a.ss_family == AF_UNIX) {
		r = remove_stale(spec, &a, len, why, why_size);
		if (r < 0) {
			if (why_size && !why[0])
				snprintf(why, why_size, "%s: %s", spec, strerror(-r));
			return r;
		}
	}
	fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* A restart finds the port free while old connections sit in TIME_WAIT;
	 * an IPv6 address means IPv6 only, as written. */
	if ((a.ss_family != AF_UNIX &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) ||
	    (a.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, (const struct sockaddr *)&a, len) < 0 || listen(fd, HTTP_BACKLOG) < 0)
		goto fail;
	*ret_fd = TAKE_FD(fd);
	return 0;
fail:
	r = -errno;
	snprintf(why, why_size, "%s: %s", spec, strerror(-r));
	return r;
}

/* Each fd from LISTEN_FDS on is ours now: the ones not served are closed. */
static void close_passed(int n, int keep)
{
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++)
		if (fd != keep)
			close(fd);
}

int http_listen_passed(int *ret_fd, char *why, size_t why_size)
{
	int n, fd = SD_LISTEN_FDS_START, r, flags;

	if (why_size)
		why[0] = 0;
	n = sd_listen_fds(1);	/* 1: unsets LISTEN_FDS and LISTEN_PID */
	if (n <= 0) {
		if (n < 0)
			snprintf(why, why_size, "LISTEN_FDS: %s", strerror(-n));
		return n;
	}
	if (n > 1) {
		close_passed(n, -1);
		snprintf(why, why_size, "systemd passed %d sockets, tracerd serves one "
			 "(one ListenStream= in tracerd-metrics.socket)", n);
		return -EINVAL;
	}
	r = sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1);
	if (r <= 0) {
		close(fd);
		snprintf(why, why_size, "the descriptor systemd passed is not a listening stream "
			 "socket (ListenStream=, Accept=no)");
		return r < 0 ? r : -ENOTSOCK;
	}
	/* Shared with systemd's copy; systemd's own sockets are non-blocking too. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		r = -errno;
		close(fd);
		snprintf(why, why_size, "the socket systemd passed: %s", strerror(-r));
		return r;
	}
	*ret_fd = fd;
	return 1;
}

int http_listen_describe(int fd, char *buf, size_t size)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -errno;
	return sockaddr_spec_format(&a, len, buf, size);
}

bool http_listen_is(int fd, const char *spec)
{
	struct sockaddr_storage a;
	socklen_t len;
	char want[128], have[128];
	int bad;

	return sockaddr_spec_parse(spec, &a, &len, &bad) == 0 &&
	       sockaddr_spec_format(&a, len, want, sizeof(want)) == 0 &&
	       http_listen_describe(fd, have, sizeof(have)) == 0 && !strcmp(want, have);
}
