// SPDX-License-Identifier: GPL-2.0
/* A record's user frames as text, kept with the record: see ustack_text.h. */
#include "render/ustack_text.h"
#include "util.h"

int ustack_text_attach(struct ustack_syms *s, pid_t tgid, const uint8_t *rec, size_t len,
		       const uint8_t *frames, unsigned n_user, size_t max, struct strbuf *out)
{
	size_t text_start;
	uint32_t text_len;
	unsigned done = 0;

	if (len + sizeof(text_len) > max)
		return -E2BIG;
	sb_reset(out);
	sb_put(out, (const char *)rec, len);
	text_start = out->len;
	for (; done < n_user; done++) {
		uint64_t ip;
		size_t before = out->len;

		memcpy(&ip, frames + 8 * done, sizeof(ip));
		if (done)
			sb_putc(out, '\n');
		ustack_format_frame(s, tgid, ip, out);
		if (out->len + sizeof(text_len) > max || out->oom) {
			out->len = before;	/* this frame's line does not fit */
			out->oom = false;
			break;
		}
	}
	text_len = out->len - text_start;
	sb_put(out, (const char *)&text_len, sizeof(text_len));
	return out->oom ? -ENOMEM : (int)done;
}

bool ustack_text_split(const uint8_t *rec, size_t len, size_t *rest, const char **text,
		       size_t *text_len)
{
	uint32_t n;

	if (len < sizeof(n))
		return false;
	memcpy(&n, rec + len - sizeof(n), sizeof(n));
	if (n > len - sizeof(n))
		return false;
	*rest = len - sizeof(n) - n;
	*text = (const char *)rec + *rest;
	*text_len = n;
	return true;
}

const char *ustack_text_line(const char *text, size_t text_len, unsigned i, size_t *n)
{
	const char *p = text, *end = text + text_len, *nl;

	if (!text_len)
		return NULL;
	for (; i; i--) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	nl = memchr(p, '\n', end - p);
	*n = (nl ? nl : end) - p;
	return p;
}
