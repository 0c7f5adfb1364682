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
#include <systemd/sd-daemon.h>
#include <time.h>
#include "metrics/http.h"
#include "metrics/metrics.h"
#include "metrics/metrics_priv.h"
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

/* The server: a handler that serves /metrics (and /big, 16 MiB), 404 else. */
static int handler(void *userdata _unused_, const struct http_request *req, struct strbuf *body,
		   const char **content_type)
{
	if (!strcmp(req->path, "/big")) {
		for (int i = 0; i < 16 * 1024; i++)
			sb_printf(body, "%01023d\n", i);
	} else if (!strcmp(req->path, "/metrics")) {
		sb_printf(body, "tracerd_up 1\n# accept: %s\n", req->accept);
	} else {
		return 404;
	}
	*content_type = "text/plain; version=0.0.4; charset=utf-8";
	return 200;
}

struct fixture {
	sd_event *e;
	struct http_server *s;
	struct sockaddr_in addr;
};

static int setup(struct fixture *f)
{
	socklen_t len = sizeof(f->addr);
	char why[128];
	int fd, r;

	*f = (struct fixture) { 0 };
	r = sd_event_new(&f->e);
	if (r < 0)
		return r;
	r = http_listen("127.0.0.1:0", &fd, why, sizeof(why));
	EXPECT(r == 0, "listen: %d %s", r, why);
	if (r < 0)
		return r;
	if (getsockname(fd, (struct sockaddr *)&f->addr, &len) < 0)
		return -errno;
	EXPECT(f->addr.sin_port != 0, "a port was chosen");
	return http_server_new(f->e, fd, handler, NULL, &f->s);
}

static void teardown(struct fixture *f)
{
	http_server_free(f->s);
	sd_event_unref(f->e);
}

static int client(const struct fixture *f)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (const struct sockaddr *)&f->addr, sizeof(f->addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Runs the loop until the server's counter at off reaches want (3 s at most). */
static bool run_until(struct fixture *f, size_t off, uint64_t want)
{
	uint64_t end = now_usec() + 3000000;
	struct http_stats st;

	for (;;) {
		http_server_stats(f->s, &st);
		if (*(uint64_t *)((char *)&st + off) >= want)
			return true;
		if (now_usec() > end)
			return false;
		sd_event_run(f->e, 10000);
	}
}

/* What the client reads until the server closes, the loop running meanwhile;
 * NULL if it did not close within 3 s. */
static char *read_all(struct fixture *f, int fd, size_t *ret_len)
{
	uint64_t end = now_usec() + 3000000;
	struct strbuf sb = { 0 };
	char buf[65536];

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (now_usec() < end) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n > 0) {
			sb_put(&sb, buf, (size_t)n);
			continue;
		}
		if (n == 0 || errno != EAGAIN) {
			*ret_len = sb.len;
			return sb.buf ? sb.buf : strdup("");
		}
		sd_event_run(f->e, 10000);
	}
	sb_free(&sb);
	return NULL;
}

static char *request(struct fixture *f, const char *text)
{
	_cleanup_close_ int fd = client(f);
	size_t len;

	EXPECT(fd >= 0 && send(fd, text, strlen(text), MSG_NOSIGNAL) == (ssize_t)strlen(text), "send");
	return read_all(f, fd, &len);
}

#define STAT(field) offsetof(struct http_stats, field)

static void serve_200_404_head(void)
{
	_cleanup_free_ char *ok = NULL, *head = NULL, *missing = NULL;
	struct fixture f;
	struct http_stats st;
	const char *body;

	if (setup(&f) < 0)
		return;
	ok = request(&f, "GET /metrics?x=1 HTTP/1.1\r\nHost: t\r\nAccept: text/plain\r\n\r\n");
	body = ok ? strstr(ok, "\r\n\r\n") : NULL;
	EXPECT(ok && !strncmp(ok, "HTTP/1.1 200 OK\r\n", 17), "got %s", strna(ok));
	EXPECT(ok && strstr(ok, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "type");
	EXPECT(ok && strstr(ok, "\r\nConnection: close\r\n"), "close");
	EXPECT(ok && strstr(ok, "\r\nContent-Length: 34\r\n"), "length");
	EXPECT(body && !strcmp(body + 4, "tracerd_up 1\n# accept: text/plain\n"), "body %s", strna(body));
	head = request(&f, "HEAD /metrics HTTP/1.0\n\n");
	EXPECT(head && !strncmp(head, "HTTP/1.1 200 OK\r\n", 17) && strstr(head, "\r\nContent-Length: 24\r\n"),
	       "got %s", strna(head));
	body = head ? strstr(head, "\r\n\r\n") : NULL;
	EXPECT(body && !body[4], "HEAD has no body");
	missing = request(&f, "GET /nope HTTP/1.1\r\n\r\n");
	EXPECT(missing && !strncmp(missing, "HTTP/1.1 404 Not Found\r\n", 24) &&
	       strstr(missing, "\r\n\r\n404 Not Found\n"), "got %s", strna(missing));
	http_server_stats(f.s, &st);
	EXPECT(st.accepted == 3 && st.answered == 3 && !st.bad_requests && !st.timeouts,
	       "accepted %lu answered %lu", (unsigned long)st.accepted, (unsigned long)st.answered);
	teardown(&f);
}

static void serve_bad(void)
{
	_cleanup_free_ char *garbage = NULL, *h2 = NULL, *post = NULL;
	struct fixture f;
	struct http_stats st;

	if (setup(&f) < 0)
		return;
	garbage = request(&f, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");
	EXPECT(garbage && !strncmp(garbage, "HTTP/1.1 400 Bad Request\r\n", 26) &&
	       strstr(garbage, "\r\n\r\n400 Bad Request\n"), "got %s", strna(garbage));
	h2 = request(&f, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	EXPECT(h2 && !strncmp(h2, "HTTP/1.1 505 ", 13), "got %s", strna(h2));
	post = request(&f, "POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab");
	EXPECT(post && !strncmp(post, "HTTP/1.1 405 ", 13), "got %s", strna(post));
	http_server_stats(f.s, &st);
	EXPECT(st.bad_requests == 3 && st.answered == 3, "bad %lu", (unsigned long)st.bad_requests);
	teardown(&f);
}

/* A 1 MiB request line: 414 once 8 KiB arrived, the rest read and thrown
 * away, so that the client gets its answer, not a reset; then closed. */
static void serve_huge_line(void)
{
	size_t n = 1 << 20, sent = 0, len;
	_cleanup_free_ char *line = malloc(n), *resp = NULL;
	_cleanup_close_ int fd = -1;
	uint64_t end = now_usec() + 3000000;
	struct fixture f;

	if (setup(&f) < 0)
		return;
	memset(line, 'a', n);
	memcpy(line, "GET /", 5);
	fd = client(&f);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (sent < n && now_usec() < end) {
		ssize_t w = send(fd, line + sent, n - sent, MSG_NOSIGNAL);

		if (w > 0)
			sent += (size_t)w;
		else if (errno == EAGAIN)
			sd_event_run(f.e, 10000);
		else
			break;
	}
	EXPECT(sent == n, "sent %zu of %zu: %m", sent, n);
	shutdown(fd, SHUT_WR);
	resp = read_all(&f, fd, &len);
	EXPECT(resp && !strncmp(resp, "HTTP/1.1 414 URI Too Long\r\n", 27), "got %s", strna(resp));
	EXPECT(run_until(&f, STAT(bad_requests), 1), "counted");
	teardown(&f);
}

/* Slowloris: half a request line, then nothing: closed at the request
 * deadline, unanswered. A client that reads nothing of a large response: closed
 * at the response deadline. */
static void serve_timeouts(void)
{
	_cleanup_close_ int slow = -1, deaf = -1;
	_cleanup_free_ char *resp = NULL;
	int small = 4096;
	struct fixture f;
	uint64_t t0;
	size_t len;

	if (setup(&f) < 0)
		return;
	http_server_set_timeouts(f.s, 200000, 300000);
	slow = client(&f);
	t0 = now_usec();
	EXPECT(send(slow, "GET /met", 8, MSG_NOSIGNAL) == 8, "send");
	resp = read_all(&f, slow, &len);
	EXPECT(resp && len == 0, "closed, unanswered: %s", strna(resp));
	EXPECT(now_usec() - t0 >= 200000, "not before the deadline: %lu us", (unsigned long)(now_usec() - t0));
	EXPECT(run_until(&f, STAT(timeouts), 1), "counted");

	deaf = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(deaf, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	EXPECT(connect(deaf, (struct sockaddr *)&f.addr, sizeof(f.addr)) == 0, "connect");
	EXPECT(send(deaf, "GET /big HTTP/1.1\r\n\r\n", 21, MSG_NOSIGNAL) == 21, "send");
	EXPECT(run_until(&f, STAT(timeouts), 2), "the response's deadline");
	teardown(&f);
}

/* 64 connections at once; the 65th is closed at once, and counted. Once
 * the others are gone, the server answers again. */
static void serve_cap(void)
{
	int fds[HTTP_CONN_MAX + 1], closed = -1, n_closed = 0;
	_cleanup_free_ char *resp = NULL;
	struct fixture f;
	struct http_stats st;

	if (setup(&f) < 0)
		return;
	for (int i = 0; i <= HTTP_CONN_MAX; i++) {
		fds[i] = client(&f);
		EXPECT(fds[i] >= 0, "connect %d", i);
		run_until(&f, STAT(accepted), (uint64_t)(i < HTTP_CONN_MAX ? i + 1 : HTTP_CONN_MAX));
	}
	EXPECT(run_until(&f, STAT(refused_full), 1), "refused");
	http_server_stats(f.s, &st);
	EXPECT(st.accepted == HTTP_CONN_MAX && st.refused_full == 1, "accepted %lu refused %lu",
	       (unsigned long)st.accepted, (unsigned long)st.refused_full);
	for (int i = 0; i <= HTTP_CONN_MAX; i++) {
		char c;

		if (recv(fds[i], &c, 1, MSG_DONTWAIT) == 0)
			closed = i, n_closed++;
	}
	EXPECT(n_closed == 1 && closed == HTTP_CONN_MAX, "closed: %d, the last %d", n_closed, closed);
	for (int i = 0; i <= HTTP_CONN_MAX; i++)
		close(fds[i]);
	for (int i = 0; i < 20; i++)
		sd_event_run(f.e, 10000);
	resp = request(&f, "GET /metrics HTTP/1.1\r\n\r\n");
	EXPECT(resp && !strncmp(resp, "HTTP/1.1 200 ", 13), "got %s", strna(resp));
	teardown(&f);
}

static void listen_specs(void)
{
	static const char *bad[] = { "localhost:9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
				     "127.0.0.1:-1", "127.0.0.1:+80", "[::1]9464", "[::1:9464", "::1:9464",
				     "metrics.sock", "" };
	char dir[] = "/tmp/tracerd-test-http-XXXXXX", path[64], why[128];
	int fd, fd2, r;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		r = http_listen(bad[i], &fd, why, sizeof(why));
		EXPECT(r == -EINVAL && strstr(why, "HOST:PORT"), "'%s': %d %s", bad[i], r, why);
	}
	r = http_listen("[::1]:0", &fd, why, sizeof(why));
	EXPECT(r == 0 || r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT, "[::1]:0: %d %s", r, why);
	if (r == 0)
		close(fd);
	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/metrics.sock", dir);
	r = http_listen(path, &fd, why, sizeof(why));
	EXPECT(r == 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	       "unix: %d %s", r, why);
	r = http_listen(path, &fd2, why, sizeof(why));
	EXPECT(r == -EADDRINUSE, "in use: %d %s", r, why);
	close(fd);	/* the socket file stays: stale */
	r = http_listen(path, &fd, why, sizeof(why));
	EXPECT(r == 0, "stale replaced: %d %s", r, why);
	close(fd);
	unlink(path);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	r = http_listen(path, &fd, why, sizeof(why));
	EXPECT(r == -EEXIST && access(path, F_OK) == 0, "a file is not removed: %d %s", r, why);
	unlink(path);
	rmdir(dir);
}

/* Accept: OpenMetrics only when asked for at least as much as the text. */
static void accept_negotiation(void)
{
	static const struct {
		const char *accept;
		bool om;
	} cases[] = {
		/* Prometheus 2.42's header */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", true },
		{ "", false },
		{ "*/*", false },
		{ "text/plain", false },
		{ "text/plain;version=0.0.4", false },
		{ "application/openmetrics-text", true },
		{ "APPLICATION/OpenMetrics-Text; version=1.0.0", true },
		{ "text/plain, application/openmetrics-text;q=0.9", false },
		{ "text/plain;q=0.2, application/openmetrics-text;q=0.9", true },
		{ "application/openmetrics-text;q=0", false },
		{ "application/openmetrics-textx", false },
		{ "application/json", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		EXPECT(metrics_wants_openmetrics(cases[i].accept) == cases[i].om, "'%s'",
		       cases[i].accept);
}

/* A label's value: escaped, and valid UTF-8 whatever the bytes. */
static void label_values(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "bash", "k=\"bash\"" },
		{ "a\"b\\c\nd", "k=\"a\\\"b\\\\c\\nd\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "k=\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		{ "\xff", "k=\"\xef\xbf\xbd\"" },				/* not UTF-8 */
		{ "\xc0\xaf", "k=\"\xef\xbf\xbd\xef\xbf\xbd\"" },		/* overlong */
		{ "\xed\xa0\x80", "k=\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "k=\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "a\xe2\x82", "k=\"a\xef\xbf\xbd\xef\xbf\xbd\"" },		/* cut short */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = { 0 };

		metrics_label(&sb, "k", cases[i].in);
		EXPECT(!strcmp(sb_str(&sb), cases[i].out), "case %zu: %s", i, sb_str(&sb));
		sb_free(&sb);
	}
}

/* Socket activation as systemd does it: the socket at fd 3, LISTEN_FDS and
 * LISTEN_PID naming this process. Whatever fd 3 was is put back. */
static int pass_fd(int fd, const char *n)
{
	char pid[16];

	if (fd != SD_LISTEN_FDS_START) {
		if (dup2(fd, SD_LISTEN_FDS_START) < 0)
			return -errno;
		close(fd);
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	setenv("LISTEN_FDS", n, 1);
	setenv("LISTEN_PID", pid, 1);
	return 0;
}

static void listen_passed(void)
{
	int saved = fcntl(SD_LISTEN_FDS_START, F_DUPFD_CLOEXEC, 10);
	char why[160], where[64], spec[80];
	int fd = -1, r;

	r = http_listen_passed(&fd, why, sizeof(why));
	EXPECT(r == 0, "nothing passed: %d %s", r, why);
	EXPECT(http_listen("127.0.0.1:0", &fd, why, sizeof(why)) == 0, "listen: %s", why);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);	/* as a plain listen() would */
	EXPECT(pass_fd(fd, "1") == 0, "dup2");
	fd = -1;
	r = http_listen_passed(&fd, why, sizeof(why));
	EXPECT(r == 1 && fd == SD_LISTEN_FDS_START, "passed: %d fd %d %s", r, fd, why);
	EXPECT(!getenv("LISTEN_FDS") && !getenv("LISTEN_PID"), "LISTEN_FDS unset");
	EXPECT(r == 1 && (fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	       "non-blocking, close-on-exec");
	EXPECT(http_listen_describe(fd, where, sizeof(where)) == 0 && !strncmp(where, "127.0.0.1:", 10),
	       "describe: %s", where);
	EXPECT(http_listen_is(fd, where), "%s is %s", where, where);
	snprintf(spec, sizeof(spec), "127.0.0.1:0%s", where + 10);
	EXPECT(http_listen_is(fd, spec), "a leading 0 in the port: the same");
	EXPECT(!http_listen_is(fd, "127.0.0.1:1") && !http_listen_is(fd, "[::1]:0") &&
	       !http_listen_is(fd, "/run/x.sock") && !http_listen_is(fd, "nonsense"), "others differ");
	close(fd);

	/* A connected socket, not a listening one; then two sockets. */
	int sv[2];

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	close(sv[1]);
	EXPECT(pass_fd(sv[0], "1") == 0, "dup2");
	r = http_listen_passed(&fd, why, sizeof(why));
	EXPECT(r == -ENOTSOCK && strstr(why, "listening") && fcntl(SD_LISTEN_FDS_START, F_GETFD) < 0,
	       "not listening: %d %s, closed", r, why);
	EXPECT(http_listen("127.0.0.1:0", &fd, why, sizeof(why)) == 0 && pass_fd(fd, "2") == 0, "two");
	EXPECT(dup2(SD_LISTEN_FDS_START, SD_LISTEN_FDS_START + 1) == SD_LISTEN_FDS_START + 1, "dup2");
	r = http_listen_passed(&fd, why, sizeof(why));
	EXPECT(r == -EINVAL && strstr(why, "2 sockets") && fcntl(SD_LISTEN_FDS_START, F_GETFD) < 0 &&
	       fcntl(SD_LISTEN_FDS_START + 1, F_GETFD) < 0, "two: %d %s, both closed", r, why);
	if (saved >= 0) {
		dup2(saved, SD_LISTEN_FDS_START);
		close(saved);
	}
}

int main(void)
{
	RUN(parse_good);
	RUN(parse_accept_cut);
	RUN(parse_errors);
	RUN(parse_pieces);
	RUN(parse_limits);
	RUN(serve_200_404_head);
	RUN(serve_bad);
	RUN(serve_huge_line);
	RUN(serve_timeouts);
	RUN(serve_cap);
	RUN(listen_specs);
	RUN(accept_negotiation);
	RUN(label_values);
	RUN(listen_passed);
	return TEST_EXIT();
}
