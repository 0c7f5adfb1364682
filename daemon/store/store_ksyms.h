/* SPDX-License-Identifier: GPL-2.0 */
/* The symbols of the kernel stack frames a store file holds (KSYMS chunks,
 * docs/STORE.md): written as the writing kernel names them, so that
 * `--read` on another boot or machine prints the writer's symbols. */
#ifndef TRACERD_STORE_KSYMS_H
#define TRACERD_STORE_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include "store/store_codec.h"

/* Addresses with the file generation that described them (writer). */
struct ksym_set {
	uint64_t *addr, *gen;
	size_t cap, n;
};

/* Adds addr; true if it was not there with gen (then it is now). */
bool ksym_set_add(struct ksym_set *s, uint64_t addr, uint64_t gen);
void ksym_set_free(struct ksym_set *s);

/* The kernel frames of a record (flags TRACERD_REC_STACKS), appended to
 * out as raw __u64 addresses. */
void store_ksyms_frames(uint32_t flags, const uint8_t *rec, size_t len, struct bbuf *out);

/* A file's symbols (reader): address to "func+0xoff/0xsize", "" for none. */
struct store_ksym {
	uint64_t addr;
	char *text;
};
struct store_ksyms {
	struct store_ksym *v;
	size_t n, cap;
	bool sorted;
};
/* n entries of a KSYMS payload; 0, -EBADMSG or -ENOMEM. */
int store_ksyms_parse(struct store_ksyms *t, const uint8_t *p, size_t len, uint32_t n);
const char *store_ksyms_find(struct store_ksyms *t, uint64_t addr);
void store_ksyms_free(struct store_ksyms *t);

#endif
