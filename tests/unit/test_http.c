// SPDX-License-Identifier: GPL-2.0
/* The metrics HTTP layer (daemon/metrics/): the request parser on good,
 * bad, oversized and piecemeal input; then the server end to end on a
 * loopback socket, with this test running its sd-event loop. */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "metrics/http.h"
#include "test.h"
#include "util.h"

static int parse(const char *text, struct http_request *req)
{
	/* An exact-size copy: ASan sees a read past len. */
	size_t n = strlen(text);
	_cleanup_free_ char *b = malloc(n ? n : 1);

	memcpy(b, text, n);
	return http_parse_request(b, n, req);
}

static void parse_good(void)
{
	struct http_request req;

	EXPECT(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &req) == 0, "CRLF");
	EXPECT_STREQ(req.method, "GET");
	EXPECT_STREQ(req.path, "/metrics");
	EXPECT(req.minor == 1 && !req.accept[0], "minor %d", req.minor);
	EXPECT(parse("GET /metrics HTTP/1.0\nHost: x\n\n", &req) == 0, "bare LF");
	EXPECT(req.minor == 0, "minor %d", req.minor);
	EXPECT(parse("GET / HTTP/1.1\r\n\r\n", &req) == 0, "no headers");
	EXPECT(parse("HEAD /metrics HTTP/1.1\r\n\r\nbody after", &req) == 0, "HEAD");
	EXPECT_STREQ(req.method, "HEAD");
	EXPECT(parse("GET /metrics?name[]=x&y HTTP/1.1\r\n\r\n", &req) == 0, "query");
	EXPECT_STREQ(req.path, "/metrics");
	EXPECT(parse("GET /m HTTP/1.1\r\nHost: h\r\naCCePT:  application/openmetrics-text; version=1.0.0 \t\r\n"
		     "X: \x80\xff\r\n\r\n", &req) == 0, "Accept");
	EXPECT_STREQ(req.accept, "application/openmetrics-text; version=1.0.0");
	EXPECT(parse("GET /m HTTP/1.1\r\nAccept: a\r\nAccept: b\r\n\r\n", &req) == 0, "two Accept");
	EXPECT_STREQ(req.accept, "a, b");
}

static void parse_accept_cut(void)
{
	char text[1024], want[256];
	struct http_request req;

	memset(want, 'a', 255);
	want[255] = 0;
	snprintf(text, sizeof(text), "GET / HTTP/1.1\r\nAccept: %s%s\r\n\r\n", want, "bbbbbbbb");
	EXPECT(parse(text, &req) == 0, "long Accept");
	EXPECT_STREQ(req.accept, want);
}

static void parse_errors(void)
{
	static const struct { const char *text; int status; } cases[] = {
		{ "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", 400 },	/* no ':' */
		{ "GET /metrics HTTP/1.1\r\n: x\r\n\r\n", 400 },	/* no name */
		{ "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nA: b\x01\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nA: b\rc\r\n\r\n", 400 },
		{ "GET /metrics\r\n\r\n", 400 },			/* HTTP/0.9 */
		{ "GET  /metrics HTTP/1.1\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1 \r\n\r\n", 400 },
		{ "GET metrics HTTP/1.1\r\n\r\n", 400 },
		{ "GET /a#b HTTP/1.1\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.x\r\n\r\n", 400 },
		{ "GET /metrics http/1.1\r\n\r\n", 400 },
		{ "\r\nGET / HTTP/1.1\r\n\r\n", 400 },
		{ "G\x01T", 400 },				/* at once, not at 8 KiB */
		{ "\x16\x03\x01\x02\x00\x01", 400 },		/* a TLS hello */
		{ "POST /metrics HTTP/1.1\r\n\r\n", 405 },
		{ "get /metrics HTTP/1.1\r\n\r\n", 405 },
		{ "OPTIONS * HTTP/1.1\r\n\r\n", 405 },
		{ "GET /metrics HTTP/2.0\r\n\r\n", 505 },
		{ "GET /metrics HTTP/1.2\r\n\r\n", 505 },
		{ "GET /metrics HTTP/0.9\r\n\r\n", 505 },
		{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505 },
	};
	struct http_request req;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r = parse(cases[i].text, &req);

		EXPECT(r == cases[i].status, "case %zu: %d, want %d", i, r, cases[i].status);
	}
}

/* Every prefix of a request is -EAGAIN; the whole is 0. */
static void parse_pieces(void)
{
	static const char text[] = "GET /metrics HTTP/1.1\r\nHost: localhost:9464\r\nAccept: text/plain\r\n\r\n";
	struct http_request req;
	size_t n = strlen(text);

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *b = malloc(i ? i : 1);
		int r;

		memcpy(b, text, i);
		r = http_parse_request(b, i, &req);
		EXPECT(r == -EAGAIN, "prefix of %zu: %d", i, r);
	}
	EXPECT(parse(text, &req) == 0 && !strcmp(req.accept, "text/plain"), "whole");
}

/* A request line of len bytes (line end not counted), path of plen. */
static char *request_line(size_t len, size_t plen, const char *rest)
{
	char *s = malloc(len + strlen(rest) + 1);

	memcpy(s, "GET /", 5);
	memset(s + 5, 'p', plen - 1);
	memset(s + 4 + plen, 'q', len - 4 - plen - 9);
	if (len - 4 - plen - 9)
		s[4 + plen] = '?';
	memcpy(s + len - 9, " HTTP/1.1", 9);
	strcpy(s + len, rest);
	return s;
}

static void parse_limits(void)
{
	struct http_request req;
	char *s;

	s = request_line(HTTP_LINE_MAX, 255, "\r\n\r\n");
	EXPECT(parse(s, &req) == 0 && strlen(req.path) == 255, "line at 8 KiB, path at 255");
	free(s);
	s = request_line(HTTP_LINE_MAX + 1, 255, "\r\n\r\n");
	EXPECT(parse(s, &req) == 414, "line one over");
	free(s);
	s = request_line(HTTP_LINE_MAX + 1, 255, "");
	EXPECT(parse(s, &req) == 414, "line one over, before its end arrived");
	free(s);
	s = request_line(HTTP_LINE_MAX, 255, "\r");
	EXPECT(parse(s, &req) == -EAGAIN, "at the limit, half a CRLF");
	free(s);
	s = request_line(300, 256, "\r\n\r\n");
	EXPECT(parse(s, &req) == 414, "path one over");
	free(s);

	/* Headers: 8192 bytes of lines with their CRLFs, then the empty line. */
	for (int over = 0; over <= 1; over++) {
		size_t n = HTTP_HEADERS_MAX + over, at = 0;
		_cleanup_free_ char *t = malloc(32 + n + 3);

		at = (size_t)sprintf(t, "GET / HTTP/1.1\r\n");
		for (size_t left = n; left; ) {
			size_t line = left > 1000 ? 1000 : left;	/* "X: vvv\r\n" */

			if (left - line < 6 && left != line)
				line = left - 6;
			memcpy(t + at, "X: ", 3);
			memset(t + at + 3, 'v', line - 5);
			memcpy(t + at + line - 2, "\r\n", 2);
			at += line, left -= line;
		}
		t[at] = 0;
		EXPECT(parse(t, &req) == (over ? 431 : -EAGAIN), "headers %zu, no end yet", n);
		strcpy(t + at, "\r\n");
		EXPECT(parse(t, &req) == (over ? 431 : 0), "headers %zu", n);
	}
}

int main(void)
{
	RUN(parse_good);
	RUN(parse_accept_cut);
	RUN(parse_errors);
	RUN(parse_pieces);
	RUN(parse_limits);
	return TEST_EXIT();
}
