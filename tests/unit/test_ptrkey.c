// SPDX-License-Identifier: GPL-2.0
/* The pointer key's file (include/ptrkey.c): made once per boot with mode
 * 0600 and loaded as it is by later runs; another boot's key, or one others
 * may read, is replaced; a reader (create false) never makes one; and %p
 * hashes with the key in use, not with the boot id. */
#include <fcntl.h>
#include <sys/stat.h>
#include "boot_id.h"
#include "ptrkey.h"
#include "render/render_priv.h"
#include "test.h"
#include "util.h"

static char dir[] = "/tmp/tracerd-test-ptrkey-XXXXXX";
static char path[64];

static void write_file(const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	EXPECT(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write %s", path);
	if (fd >= 0)
		close(fd);
	chmod(path, mode);
}

static mode_t mode_of(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? st.st_mode & 07777 : 0;
}

static void made_once_then_loaded(void)
{
	struct ptrkey a, b, c;

	unlink(path);
	EXPECT(ptrkey_load(path, false, &a) == -ENOENT, "a reader makes no key");
	EXPECT(access(path, F_OK) < 0, "no file after a reader");
	EXPECT(ptrkey_load(path, true, &a) == 0, "made");
	EXPECT(mode_of(path) == 0600, "mode %o", mode_of(path));
	EXPECT(ptrkey_load(path, true, &b) == 0 && ptrkey_load(path, false, &c) == 0, "loaded");
	EXPECT(!memcmp(a.k, b.k, 16) && !memcmp(a.k, c.k, 16) && !strcmp(a.id, c.id), "one key");
	EXPECT(strlen(a.id) == PTRKEY_ID_LEN && a.gen != b.gen, "id %s, gens %u %u", a.id, a.gen, b.gen);
	EXPECT(a.k[0] || a.k[1], "a random key");
}

static void stale_or_exposed_replaced(void)
{
	static const char other_boot[] = "boot_id=00000000-0000-0000-0000-000000000000\n"
					 "key_id=0123456789abcdef0123456789abcdef\n"
					 "key=00000000000000010000000000000002\n";
	char boot[BOOT_ID_MAX], text[256];
	struct ptrkey k;

	write_file(other_boot, 0600);
	EXPECT(ptrkey_load(path, false, &k) == -ESTALE, "another boot's is not used");
	EXPECT(ptrkey_load(path, true, &k) == 0 && !(k.k[0] == 1 && k.k[1] == 2), "replaced");
	EXPECT(boot_id_get(boot) == 0, "boot id");
	snprintf(text, sizeof(text), "boot_id=%s\nkey_id=0123456789abcdef0123456789abcdef\n"
		 "key=00000000000000010000000000000002\n", boot);
	write_file(text, 0644);
	EXPECT(ptrkey_load(path, false, &k) == -EPERM, "one others may read is not used");
	write_file(text, 0600);
	EXPECT(ptrkey_load(path, false, &k) == 0 && k.k[0] == 1 && k.k[1] == 2, "this boot's is");
}

/* The hash %p prints is the key's: SipHash-2-4, low 32 bits. The SipHash
 * paper's test vector for 8 bytes 00..07 under the key 00..0f is
 * 62 24 93 9a 79 f5 f5 93. */
static void hashes_with_the_key_in_use(void)
{
	struct ptrkey k = { .k = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL }, .gen = 1000 }, other;
	uint64_t v = 0x0706050403020100ULL, h;

	ptrkey_use(&k);
	h = render_hash_pointer(v);
	EXPECT(h == 0x9a932462, "hash %llx", (unsigned long long)h);
	EXPECT(ptrkey_random(&other) == 0, "random");
	ptrkey_use(&other);
	EXPECT(render_hash_pointer(v) != h, "another key, another hash (cache not stale)");
	ptrkey_use(&k);
	EXPECT(render_hash_pointer(v) == h, "back");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/pointer-key", dir);
	RUN(made_once_then_loaded);
	RUN(stale_or_exposed_replaced);
	RUN(hashes_with_the_key_in_use);
	unlink(path);
	rmdir(dir);
	return TEST_EXIT();
}
