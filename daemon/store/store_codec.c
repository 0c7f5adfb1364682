// SPDX-License-Identifier: GPL-2.0
/* Byte buffers, varints, checksums and codecs for the store. */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>
#include "store/store_codec.h"

int bbuf_reserve(struct bbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	if (b->oom)
		return -ENOMEM;
	while (cap < b->len + more)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return -ENOMEM;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void bbuf_free(struct bbuf *b)
{
	free(b->p);
	*b = (struct bbuf){ 0 };
}

uint64_t rcur_varint(struct rcur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (c->p >= c->end) {
			c->bad = true;
			return 0;
		}
		byte = *c->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

const uint8_t *rcur_take(struct rcur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

char *rcur_string(struct rcur *c)
{
	uint64_t n = rcur_varint(c);
	const uint8_t *p = rcur_take(c, n);

	return p ? strndup((const char *)p, n) : NULL;
}

uint32_t store_crc(const void *p, size_t n)
{
	return crc32_z(0, p, n);
}

void store_chunk_seal(struct store_chunk_hdr *h, const void *payload)
{
	h->magic = STORE_MAGIC;
	h->version = STORE_VERSION;
	h->payload_crc = store_crc(payload, h->disk_len);
	h->hdr_crc = store_crc(h, offsetof(struct store_chunk_hdr, hdr_crc));
}

int store_chunk_check(const struct store_chunk_hdr *h)
{
	if (h->magic != STORE_MAGIC ||
	    h->hdr_crc != store_crc(h, offsetof(struct store_chunk_hdr, hdr_crc)))
		return -EBADMSG;
	if (h->version != STORE_VERSION || h->disk_len > STORE_CHUNK_MAX ||
	    h->raw_len > STORE_CHUNK_MAX || h->codec > STORE_CODEC_ZSTD)
		return -EBADMSG;
	return 0;
}

struct store_compressor {
	enum store_codec codec;
	int level;
	ZSTD_CCtx *zc;
	z_stream zs;
	bool zs_init;
};

int store_compressor_new(struct store_compressor **ret, enum store_codec codec, int level)
{
	struct store_compressor *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->codec = codec;
	if (codec == STORE_CODEC_ZSTD) {
		c->level = level ? level : 1;
		c->zc = ZSTD_createCCtx();
		if (!c->zc) {
			free(c);
			return -ENOMEM;
		}
	} else if (codec == STORE_CODEC_ZLIB) {
		c->level = level ? level : 1;
		if (deflateInit(&c->zs, c->level) != Z_OK) {
			free(c);
			return -ENOMEM;
		}
		c->zs_init = true;
	}
	*ret = c;
	return 0;
}

void store_compressor_free(struct store_compressor *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->zc);
	if (c->zs_init)
		deflateEnd(&c->zs);
	free(c);
}

static int deflate_all(struct store_compressor *c, const void *src, size_t n, struct bbuf *out)
{
	size_t bound = deflateBound(&c->zs, n);

	if (deflateReset(&c->zs) != Z_OK || bbuf_reserve(out, bound) < 0)
		return -ENOMEM;
	c->zs.next_in = (Bytef *)src;
	c->zs.avail_in = n;
	c->zs.next_out = out->p;
	c->zs.avail_out = bound;
	if (deflate(&c->zs, Z_FINISH) != Z_STREAM_END)
		return -EIO;
	out->len = bound - c->zs.avail_out;
	return 0;
}

int store_compress(struct store_compressor *c, const void *src, size_t n, struct bbuf *out)
{
	size_t r;

	out->len = 0;
	switch (c->codec) {
	case STORE_CODEC_ZSTD:
		if (bbuf_reserve(out, ZSTD_compressBound(n)) < 0)
			return -ENOMEM;
		r = ZSTD_compressCCtx(c->zc, out->p, out->cap, src, n, c->level);
		if (ZSTD_isError(r))
			return -EIO;
		out->len = r;
		return 0;
	case STORE_CODEC_ZLIB:
		return deflate_all(c, src, n, out);
	default:
		bbuf_put(out, src, n);
		return out->oom ? -ENOMEM : 0;
	}
}

static int inflate_all(const void *src, size_t n, size_t raw_len, struct bbuf *out)
{
	z_stream zs = { .next_in = (Bytef *)src, .avail_in = n, .next_out = out->p,
			.avail_out = raw_len };
	int r;

	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	r = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (r != Z_STREAM_END || zs.avail_out != 0)
		return -EBADMSG;
	return 0;
}

int store_decompress(enum store_codec codec, const void *src, size_t n, size_t raw_len,
		     struct bbuf *out)
{
	size_t r;

	out->len = 0;
	if (bbuf_reserve(out, raw_len ? raw_len : 1) < 0)
		return -ENOMEM;
	switch (codec) {
	case STORE_CODEC_ZSTD:
		r = ZSTD_decompress(out->p, raw_len, src, n);
		if (ZSTD_isError(r) || r != raw_len)
			return -EBADMSG;
		break;
	case STORE_CODEC_ZLIB:
		if (inflate_all(src, n, raw_len, out) < 0)
			return -EBADMSG;
		break;
	default:
		if (n != raw_len)
			return -EBADMSG;
		if (n)
			memcpy(out->p, src, n);
	}
	out->len = raw_len;
	return 0;
}

const char *store_codec_name(enum store_codec c)
{
	return c == STORE_CODEC_ZSTD ? "zstd" : c == STORE_CODEC_ZLIB ? "zlib" : "none";
}

int store_codec_from_name(const char *s)
{
	if (!strcmp(s, "zstd"))
		return STORE_CODEC_ZSTD;
	if (!strcmp(s, "zlib"))
		return STORE_CODEC_ZLIB;
	if (!strcmp(s, "none"))
		return STORE_CODEC_NONE;
	return -EINVAL;
}
