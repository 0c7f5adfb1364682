// SPDX-License-Identifier: GPL-2.0
/* A strict HTTP/1.x request parser: the request line and the headers, no
 * body, no I/O. Strict because all it serves is GET /metrics: anything a
 * scraper would not send is refused with its status, early (a bad byte or an
 * oversized line as soon as it arrives, not when the request is whole). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "metrics/http.h"

/* RFC 9110's tchar: a method or a header name. */
static bool is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

static bool all_tchar(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar(s[i]))
			return false;
	return true;
}

/* Bytes a line may hold: the request line visible ASCII and spaces; a
 * header line also tabs and obs-text. A CR only right before the LF (the
 * caller has cut it off, or it is the last byte received so far). */
static bool line_bytes_ok(const char *s, size_t n, bool header)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f)
			continue;
		if (header && (c == '\t' || c >= 0x80))
			continue;
		return false;
	}
	return true;
}

/* The next line at buf[*pos..len): its length without the line end (CRLF or
 * a bare LF), and *pos moved past it. -EAGAIN: no LF yet; *ret_len is then
 * what there is so far, less a CR that may be half of a CRLF. */
static int next_line(const char *buf, size_t len, size_t *pos, size_t *ret_len)
{
	const char *s = buf + *pos, *lf = memchr(s, '\n', len - *pos);
	size_t n = lf ? (size_t)(lf - s) : len - *pos;

	if (n > 0 && s[n - 1] == '\r')
		n--;
	*ret_len = n;
	if (!lf)
		return -EAGAIN;
	*pos += (size_t)(lf - s) + 1;
	return 0;
}

static int parse_version(const char *v, size_t n, int *minor)
{
	if (n != 8 || memcmp(v, "HTTP/", 5) || v[6] != '.' ||
	    v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
		return 400;
	if (v[5] != '1' || v[7] > '1')
		return 505;	/* HTTP/2's preface "PRI * HTTP/2.0" too */
	*minor = v[7] - '0';
	return 0;
}

/* METHOD SP TARGET SP VERSION, single spaces. The version is judged before
 * the method, so that an HTTP/2 preface is 505, not 405. */
static int parse_request_line(const char *s, size_t n, struct http_request *req)
{
	const char *sp1 = memchr(s, ' ', n), *sp2, *target, *q;
	size_t mlen, tlen, plen;
	int r;

	if (!sp1)
		return 400;
	mlen = (size_t)(sp1 - s);
	target = sp1 + 1;
	sp2 = memchr(target, ' ', n - mlen - 1);
	if (!sp2 || !all_tchar(s, mlen))
		return 400;
	tlen = (size_t)(sp2 - target);
	if (!tlen || memchr(sp2 + 1, ' ', n - mlen - tlen - 2))
		return 400;
	r = parse_version(sp2 + 1, n - mlen - tlen - 2, &req->minor);
	if (r)
		return r;
	if (!((mlen == 3 && !memcmp(s, "GET", 3)) || (mlen == 4 && !memcmp(s, "HEAD", 4))))
		return 405;
	if (target[0] != '/' || memchr(target, '#', tlen))
		return 400;	/* origin-form only; a fragment is never sent */
	q = memchr(target, '?', tlen);
	plen = q ? (size_t)(q - target) : tlen;
	if (plen >= sizeof(req->path))
		return 414;
	memcpy(req->method, s, mlen);
	req->method[mlen] = 0;
	memcpy(req->path, target, plen);
	req->path[plen] = 0;
	return 0;
}

/* Accept's value, trimmed; several Accept lines are one list. */
static void keep_accept(struct http_request *req, const char *v, size_t n)
{
	size_t have = strlen(req->accept), room;

	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (have && have + 2 < sizeof(req->accept)) {
		memcpy(req->accept + have, ", ", 2);
		have += 2;
	}
	room = sizeof(req->accept) - 1 - have;
	if (n > room)
		n = room;
	memcpy(req->accept + have, v, n);
	req->accept[have + n] = 0;
}

static int parse_header(const char *s, size_t n, struct http_request *req)
{
	const char *colon = memchr(s, ':', n);
	size_t nlen;

	if (!colon)
		return 400;
	nlen = (size_t)(colon - s);
	if (!all_tchar(s, nlen))
		return 400;	/* also obs-fold (a leading space) and a space before ':' */
	if (nlen == 6 && !strncasecmp(s, "accept", 6))
		keep_accept(req, colon + 1, n - nlen - 1);
	return 0;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	size_t pos = 0, n, hdr_bytes = 0;
	int r;

	*req = (struct http_request) { 0 };
	r = next_line(buf, len, &pos, &n);
	if (!line_bytes_ok(buf, n, false))
		return 400;
	if (n > HTTP_LINE_MAX)
		return 414;
	if (r < 0)
		return r;
	r = parse_request_line(buf, n, req);
	if (r)
		return r;
	for (;;) {
		size_t start = pos;

		r = next_line(buf, len, &pos, &n);
		if (!line_bytes_ok(buf + start, n, true))
			return 400;
		if (r < 0)
			return hdr_bytes + n > HTTP_HEADERS_MAX ? 431 : r;
		if (!n)
			return 0;
		hdr_bytes += pos - start;
		if (hdr_bytes > HTTP_HEADERS_MAX)
			return 431;
		r = parse_header(buf + start, n, req);
		if (r)
			return r;
	}
}

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}
