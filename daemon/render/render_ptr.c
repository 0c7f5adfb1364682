// SPDX-License-Identifier: GPL-2.0
/* %p and its extensions as the kernel's vsprintf prints them: hashed
 * pointers (unless RawPointers=yes), symbols, IP and MAC addresses, UUIDs,
 * bitmaps. */
#include <arpa/inet.h>
#include "ptrkey.h"
#include "render_priv.h"
#include "util.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do { \
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); } while (0)

/* SipHash-2-4 of one 64-bit word, as the kernel hashes pointers. */
static uint64_t siphash_u64(uint64_t m, const uint64_t k[2])
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k[0], v1 = 0x646f72616e646f6dULL ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ k[0], v3 = 0x7465646279746573ULL ^ k[1];
	uint64_t b = 8ULL << 56;

	v3 ^= m; SIPROUND; SIPROUND; v0 ^= m;
	v3 ^= b; SIPROUND; SIPROUND; v0 ^= b;
	v2 ^= 0xff;
	SIPROUND; SIPROUND; SIPROUND; SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* A pointer's hash, remembered: an event prints the same few pointers
 * (its lock, its owner, its inode) record after record, and SipHash costs
 * more than the rest of the conversion. Direct-mapped, one per thread; an
 * entry holds for the key it was made with (--read changes keys between
 * files of other boots). The key is the boot's secret one (ptrkey.h), never
 * anything others can read, such as the boot id. */
static uint64_t hashed_pointer(uint64_t v)
{
	static __thread struct { uint64_t ptr, hash; unsigned gen; } cache[64];
	unsigned i = (v >> 4 ^ v >> 10) & 63;
	const struct ptrkey *k = ptrkey_in_use();

	if (cache[i].ptr != v || cache[i].gen != k->gen) {	/* gen 0: a free entry */
		cache[i].ptr = v;
		cache[i].gen = k->gen;
		cache[i].hash = siphash_u64(v, k->k) & 0xffffffffULL;
	}
	return cache[i].hash;
}

/* x's 8 hex digits, most significant first, without a loop: each nibble
 * is spread into a byte of its own, then turned into '0'-'9' or 'a'-'f'
 * in all 8 bytes at once. */
static uint64_t hex8(uint32_t x)
{
	uint64_t v = x, letters;

	v = (v & 0xffff0000ULL) << 16 | (v & 0xffffULL);
	v = (v & 0x0000ff000000ff00ULL) << 8 | (v & 0x000000ff000000ffULL);
	v = (v & 0x00f000f000f000f0ULL) << 4 | (v & 0x000f000f000f000fULL);
	/* byte i is nibble i; 0x01 in the bytes that hold 10 or more */
	letters = (v + 0x0606060606060606ULL) >> 4 & 0x0101010101010101ULL;
	v += 0x3030303030303030ULL + letters * ('a' - '0' - 10);
	return __builtin_bswap64(v);	/* nibble 7 first, in memory order */
}

/* "%016llx", by hand: printf's setup cost more than these 16 digits. */
static void put_hex16(uint64_t v, struct strbuf *out)
{
	uint64_t d[2] = { hex8(v >> 32), hex8(v) };

	sb_put(out, (const char *)d, sizeof(d));
}

uint64_t render_hash_pointer(uint64_t v)
{
	/* NULL and error pointers stay as they are: they are not addresses. */
	return v && v < (uint64_t)-4095 ? hashed_pointer(v) : v;
}

static void plain_pointer(uint64_t v, bool raw, struct strbuf *out)
{
	put_hex16(raw ? v : render_hash_pointer(v), out);
}

void render_plain_pointer(uint64_t v, bool raw, struct strbuf *out)
{
	plain_pointer(v, raw, out);
}

static void ip4(const uint8_t *a, struct strbuf *out)
{
	sb_printf(out, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

static void ip6(const uint8_t *a, bool compress, struct strbuf *out)
{
	char buf[INET6_ADDRSTRLEN];

	if (!compress) {
		for (int i = 0; i < 16; i += 2)
			sb_printf(out, "%s%02x%02x", i ? ":" : "", a[i], a[i + 1]);
		return;
	}
	if (inet_ntop(AF_INET6, a, buf, sizeof(buf)))
		sb_puts(out, buf);
}

/* %pIS[p][c]: a struct sockaddr. */
static void sockaddr(const uint8_t *a, size_t len, const char *ext, struct strbuf *out)
{
	uint16_t family, port;

	if (len < 4) {
		sb_puts(out, "(einval)");
		return;
	}
	memcpy(&family, a, 2);
	memcpy(&port, a + 2, 2);
	if (family == AF_INET && len >= 8)
		ip4(a + 4, out);
	else if (family == AF_INET6 && len >= 24) {
		if (strchr(ext, 'p'))
			sb_putc(out, '[');
		ip6(a + 8, strchr(ext, 'c'), out);
		if (strchr(ext, 'p'))
			sb_putc(out, ']');
	} else {
		sb_puts(out, "(einval)");
		return;
	}
	if (strchr(ext, 'p'))
		sb_printf(out, ":%u", ntohs(port));
}

static void uuid(const uint8_t *a, bool upper, struct strbuf *out)
{
	for (int i = 0; i < 16; i++)
		sb_printf(out, upper ? "%s%02X" : "%s%02x",
			  i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", a[i]);
}

static bool buffer_ext(const struct rseg *s, const struct rval *v, struct strbuf *out)
{
	const char *x = s->ext;

	if (x[0] == 'I' && x[1] == '4' && v->len >= 4)
		ip4(v->p, out);
	else if (x[0] == 'I' && x[1] == '6' && v->len >= 16)
		ip6(v->p, x[2] == 'c', out);
	else if (x[0] == 'I' && x[1] == 'S')
		sockaddr(v->p, v->len, x + 2, out);
	else if ((x[0] == 'M' || x[0] == 'm') && v->len >= 6)
		sb_printf(out, x[0] == 'M' ? "%02x:%02x:%02x:%02x:%02x:%02x" : "%02x%02x%02x%02x%02x%02x",
			  v->p[0], v->p[1], v->p[2], v->p[3], v->p[4], v->p[5]);
	else if (x[0] == 'U' && v->len >= 16)
		uuid(v->p, x[1] == 'B' || x[1] == 'L', out);
	else if (x[0] == 'b')
		render_bitmap(v->p, v->len, s->width >= 0 ? (unsigned)s->width : v->len * 8,
			      x[1] == 'l', out);
	else
		return false;
	return true;
}

void render_pointer(const struct rseg *s, const struct rval *v, bool raw, struct strbuf *out)
{
	const char *x = s->ext;

	if (v->kind == RV_BUF) {
		if (!buffer_ext(s, v, out))
			sb_puts(out, "[unsupported %p extension]");
		return;
	}
	if (x[0] == 'S' || x[0] == 's' || x[0] == 'B' || x[0] == 'F' || x[0] == 'f') {
		if (kallsyms_lookup_print(v->n, x[0] == 'S' || x[0] == 'B' || x[0] == 'F', out))
			return;
		/* The kernel prints the address itself ("0x%lx"): that is what
		 * RawPointers=no must never let out. */
		if (raw)
			sb_printf(out, "0x%llx", (unsigned long long)v->n);
		else
			plain_pointer(v->n, false, out);
	} else if (!x[0] || x[0] == 'K' || x[0] == 'p' || x[0] == 'x')
		plain_pointer(v->n, raw, out);	/* %px too: the kernel's "raw" is ours to refuse */
	else
		sb_puts(out, "[unsupported %p extension]");
}

void render_symbols(const struct tp_symtab *t, uint64_t v, bool hash, struct strbuf *out)
{
	if (!hash || tp_symtab_names_all(t, v)) {
		tp_symtab_print(t, v, out);
		return;
	}
	sb_put(out, "0x", 2);
	sb_put_hex(out, render_hash_pointer(v));
}

static void range(struct strbuf *out, bool *first, unsigned lo, unsigned hi)
{
	sb_printf(out, *first ? "%u" : ",%u", lo);
	if (hi > lo)
		sb_printf(out, "-%u", hi);
	*first = false;
}

static bool bit(const uint8_t *p, unsigned i)
{
	return p[i / 8] >> (i % 8) & 1;
}

/* %*pb: 32-bit hex chunks, most significant first; %*pbl: "0-3,8". */
void render_bitmap(const uint8_t *p, size_t bytes, unsigned nbits, bool list, struct strbuf *out)
{
	bool first = true;

	if (nbits > bytes * 8)
		nbits = bytes * 8;
	if (list) {
		for (unsigned i = 0; i < nbits; i++) {
			unsigned j = i;

			if (!bit(p, i))
				continue;
			while (j + 1 < nbits && bit(p, j + 1))
				j++;
			range(out, &first, i, j);
			i = j;
		}
		return;
	}
	for (int start = (int)((nbits + 31) / 32 - 1) * 32; start >= 0; start -= 32) {
		unsigned width = nbits - start < 32 ? nbits - start : 32;
		uint32_t val = 0;

		for (unsigned b = 0; b < width; b++)
			val |= (uint32_t)bit(p, start + b) << b;
		sb_printf(out, "%s%0*x", first ? "" : ",", (int)(width + 3) / 4, val);
		first = false;
	}
}
