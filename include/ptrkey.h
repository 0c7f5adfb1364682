/* SPDX-License-Identifier: GPL-2.0 */
/* The key %p hashes pointers with: secret and random, one per boot, kept
 * in a file only the daemon and root may read, so that hashes compare
 * within a boot and nobody else can reverse them (see ptrkey.c). */
#ifndef TRACERD_PTRKEY_H
#define TRACERD_PTRKEY_H

#include <stdbool.h>
#include <stdint.h>

#define PTRKEY_PATH "/run/tracerd/pointer-key"	/* the unit's RuntimeDirectory= */
#define PTRKEY_ID_LEN 32

struct ptrkey {
	uint64_t k[2];			/* SipHash's key: secret */
	char id[PTRKEY_ID_LEN + 1];	/* random, not derived from k: public; names the key in store files */
	unsigned gen;			/* distinct for each key this process made or loaded */
};

/* $TRACERD_POINTER_KEY (for tests), else PTRKEY_PATH. */
const char *ptrkey_path(void);
/* A key of this process only. 0, or -errno. */
int ptrkey_random(struct ptrkey *k);
/* This boot's key from path. A missing one, one of another boot or one
 * others may read is replaced, if create, by a new one written there
 * atomically with mode 0600 (owned by the directory's owner). 0, or -errno:
 * -ENOENT none, -ESTALE another boot's, -EPERM readable by others, -ENOKEY
 * this boot's id is unknown. */
int ptrkey_load(const char *path, bool create, struct ptrkey *k);
/* What ptrkey_load()'s error means, in words. */
const char *ptrkey_strerror(int r);
/* The key hashes are made with from now on. Set it before threads render. */
void ptrkey_use(const struct ptrkey *k);
/* The key in use: a random one of this process until ptrkey_use(). */
const struct ptrkey *ptrkey_in_use(void);

#endif
