/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the store's writer and reader: growable byte buffers, varints,
 * checksums and the three codecs. */
#ifndef TRACERD_STORE_CODEC_H
#define TRACERD_STORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "store/store_format.h"

struct bbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

int bbuf_reserve(struct bbuf *b, size_t more);
void bbuf_free(struct bbuf *b);

static inline void bbuf_put(struct bbuf *b, const void *d, size_t n)
{
	if (!n)		/* an empty column's buffer may be NULL: no memcpy from it */
		return;
	if (b->len + n > b->cap && bbuf_reserve(b, n) < 0)
		return;
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static inline void bbuf_varint(struct bbuf *b, uint64_t v)
{
	uint8_t *p;

	if (b->len + 10 > b->cap && bbuf_reserve(b, 10) < 0)
		return;
	p = b->p + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = p - b->p;
}

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline void bbuf_string(struct bbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	bbuf_varint(b, n);
	bbuf_put(b, s, n);
}

/* A cursor over bytes being decoded; any overrun sets bad and reads zeros. */
struct rcur {
	const uint8_t *p, *end;
	bool bad;
};

uint64_t rcur_varint(struct rcur *c);
/* n bytes at the cursor, or NULL (bad) if fewer remain. */
const uint8_t *rcur_take(struct rcur *c, size_t n);
/* A varint-prefixed string, malloc'd; NULL when bad or out of memory. */
char *rcur_string(struct rcur *c);

uint32_t store_crc(const void *p, size_t n);
void store_chunk_seal(struct store_chunk_hdr *h, const void *payload);
/* 0, or -EBADMSG when the header's own checksum or fields are wrong. */
int store_chunk_check(const struct store_chunk_hdr *h);

struct store_compressor;
int store_compressor_new(struct store_compressor **ret, enum store_codec codec, int level);
void store_compressor_free(struct store_compressor *c);
/* Compresses src into out (replacing its content). */
int store_compress(struct store_compressor *c, const void *src, size_t n, struct bbuf *out);
/* Decompresses exactly raw_len bytes into out; -EBADMSG if they do not come out. */
int store_decompress(enum store_codec codec, const void *src, size_t n, size_t raw_len,
		     struct bbuf *out);
const char *store_codec_name(enum store_codec c);
int store_codec_from_name(const char *s);

#endif
