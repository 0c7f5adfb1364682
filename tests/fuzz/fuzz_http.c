// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the metrics HTTP request parser on any bytes. It must never
 * read past len (the input is an exact-size copy under ASan), and answer
 * only 0, -EAGAIN or a status it documents; a whole request's fields are
 * NUL-terminated strings of their arrays; the Accept header's value is
 * negotiated without a fault. */
#include <stdint.h>
#include "metrics/http.h"
#include "metrics/metrics.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *buf = malloc(size ? size : 1);
	struct http_request req;
	int r;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	r = http_parse_request(buf, size, &req);
	switch (r) {
	case 0:
		if (strnlen(req.path, sizeof(req.path)) == sizeof(req.path) ||
		    strnlen(req.accept, sizeof(req.accept)) == sizeof(req.accept) ||
		    req.path[0] != '/' || (strcmp(req.method, "GET") && strcmp(req.method, "HEAD")) ||
		    (req.minor != 0 && req.minor != 1))
			__builtin_trap();
		metrics_wants_openmetrics(req.accept);	/* the scraper's Accept: */
		break;
	case -EAGAIN: case 400: case 405: case 414: case 431: case 505:
		break;
	default:
		__builtin_trap();
	}
	/* Refused stays refused whatever follows: the server answers at once. */
	if (r > 0 && size < HTTP_REQUEST_MAX) {
		_cleanup_free_ char *more = malloc(size + 1);

		if (!more)
			return 0;
		memcpy(more, data, size);
		more[size] = 'x';
		if (http_parse_request(more, size + 1, &req) <= 0)
			__builtin_trap();
	}
	return 0;
}
