/* SPDX-License-Identifier: GPL-2.0 */
/* GET /metrics over HTTP/1.x on the daemon's sd-event loop (issue 32): a
 * strict request parser (http_parse.c, pure, fuzzed) and the server
 * (http_server.c). One request per connection; the text is the caller's. */
#ifndef TRACERD_METRICS_HTTP_H
#define TRACERD_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include "strbuf.h"

#define HTTP_LINE_MAX 8192	/* the request line, line end not counted */
#define HTTP_HEADERS_MAX 8192	/* the header lines with their line ends, not the empty line */
#define HTTP_REQUEST_MAX 16384	/* what the server reads of one request */

struct http_request {
	char method[8];
	char path[256];		/* up to '?': the query is not kept */
	char accept[256];	/* the Accept header's value, cut at 255 bytes */
	int minor;		/* HTTP/1.<minor> */
};

/* 0: a whole request (request line and headers up to the empty line) was parsed;
 * -EAGAIN: incomplete, read more; else an HTTP status to answer with and close:
 * 400 malformed (bad bytes, bare LF is accepted as line end, missing parts, a header
 * line without ':'), 405 a method other than GET/HEAD, 414 request line over 8 KiB
 * or a path over 255 bytes, 431 headers over 8 KiB in all, 505 a version other than
 * HTTP/1.0 or 1.1 (an HTTP/2 preface "PRI * HTTP/2.0" is 505). */
int http_parse_request(const char *buf, size_t len, struct http_request *req);

/* The reason phrase of a status the server sends ("Not Found"). */
const char *http_reason(int status);

struct http_server;

/* What the server answers a GET or HEAD of path with: an HTTP status; body
 * and content_type filled for 200. Called on the loop's thread. */
typedef int (*http_handler_fn)(void *userdata, const struct http_request *req,
			       struct strbuf *body, const char **content_type);

struct http_stats {
	uint64_t accepted;	/* connections taken on */
	uint64_t answered;	/* responses written whole, any status */
	uint64_t refused_full;	/* closed at once: HTTP_CONN_MAX were open */
	uint64_t bad_requests;	/* refused by the parser (4xx/5xx) */
	uint64_t timeouts;	/* closed: no whole request, or response not taken, in time */
};

#define HTTP_CONN_MAX 64
#define HTTP_REQUEST_TIMEOUT_USEC (5 * 1000000ULL)
#define HTTP_RESPONSE_TIMEOUT_USEC (10 * 1000000ULL)

int http_server_new(sd_event *e, int listen_fd, http_handler_fn fn, void *userdata,
		    struct http_server **ret);	/* takes listen_fd, even on error */
void http_server_free(struct http_server *s);	/* closes every connection */
void http_server_stats(const struct http_server *s, struct http_stats *out);
/* For tests: shorter limits than 5 s and 10 s. */
void http_server_set_timeouts(struct http_server *s, uint64_t request_usec, uint64_t response_usec);

/* "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464" (port 0: any) or an absolute unix
 * socket path: a listening socket, non-blocking, close-on-exec; errors as -errno,
 * with what was expected written to why. A stale socket at the path is replaced. */
int http_listen(const char *spec, int *ret_fd, char *why, size_t why_size);

/* Socket activation (tracerd-metrics.socket): 1 and the listening socket
 * systemd passed (made non-blocking), 0 if none was passed, else -errno with
 * why. LISTEN_FDS and LISTEN_PID are unset either way, so that no child
 * takes them for its own; one listening stream socket is served, more than
 * one, or another kind, is an error (and closed). */
int http_listen_passed(int *ret_fd, char *why, size_t why_size);
/* fd's local address as Listen= writes it ("127.0.0.1:9464", a path). */
int http_listen_describe(int fd, char *buf, size_t size);
/* Whether fd listens where spec says (the same address in any spelling). */
bool http_listen_is(int fd, const char *spec);

#endif
