// SPDX-License-Identifier: GPL-2.0
/* The pointer key's file, one per boot: "boot_id=", "key_id=" and "key="
 * lines, mode 0600. The boot id keeps another boot's key (a file that
 * outlived a reboot) from being used; /proc/sys/kernel/random/boot_id and
 * /etc/machine-id are readable by everyone, so neither may be the key.
 * Writers take a lock on the directory: two processes starting at once
 * agree on one key. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "boot_id.h"
#include "ptrkey.h"
#include "util.h"

static unsigned next_gen(void)
{
	static unsigned gen;

	return __atomic_add_fetch(&gen, 1, __ATOMIC_RELAXED);
}

const char *ptrkey_path(void)
{
	const char *p = getenv("TRACERD_POINTER_KEY");

	return p && *p ? p : PTRKEY_PATH;
}

int ptrkey_random(struct ptrkey *k)
{
	uint8_t b[16 + PTRKEY_ID_LEN / 2];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		got += n > 0 ? (size_t)n : 0;
	}
	memcpy(k->k, b, 16);
	for (size_t i = 0; i < PTRKEY_ID_LEN / 2; i++)
		snprintf(k->id + 2 * i, 3, "%02x", b[16 + i]);
	k->gen = next_gen();
	return 0;
}

/* name's key in dirfd, if it is this boot's and no one else may read it. */
static int read_key(int dirfd, const char *name, const char *boot, struct ptrkey *k)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_fclose_ FILE *f = NULL;
	char b[BOOT_ID_MAX] = "", id[PTRKEY_ID_LEN + 1] = "";
	unsigned long long k0, k1;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077))
		return -EPERM;
	f = fdopen(TAKE_FD(fd), "r");
	if (!f)
		return -errno;
	if (fscanf(f, "boot_id=%36s\nkey_id=%32[0-9a-f]\nkey=%16llx%16llx\n", b, id, &k0, &k1) != 4 ||
	    strlen(id) != PTRKEY_ID_LEN)
		return -EBADMSG;
	if (strcmp(b, boot))
		return -ESTALE;
	k->k[0] = k0;
	k->k[1] = k1;
	memcpy(k->id, id, sizeof(id));
	k->gen = next_gen();
	return 0;
}

/* A new key under name: written to a file of its own, mode 0600 from the
 * start, then renamed over name. */
static int write_key(int dirfd, const char *name, const char *boot, struct ptrkey *k)
{
	char tmp[64];
	_cleanup_close_ int fd = -1;
	_cleanup_fclose_ FILE *f = NULL;
	struct stat dir;
	int r = ptrkey_random(k);

	if (r < 0)
		return r;
	snprintf(tmp, sizeof(tmp), ".pointer-key.%d", (int)getpid());
	(void)unlinkat(dirfd, tmp, 0);	/* a dead writer's, under the lock */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* root writing into the service's directory: the service's file. */
	if (geteuid() == 0 && fstat(dirfd, &dir) == 0)
		(void)!fchown(fd, dir.st_uid, dir.st_gid);
	f = fdopen(TAKE_FD(fd), "w");
	if (!f)
		r = -errno;
	else if (fprintf(f, "boot_id=%s\nkey_id=%s\nkey=%016llx%016llx\n", boot, k->id,
			 (unsigned long long)k->k[0], (unsigned long long)k->k[1]) < 0 || fflush(f) != 0)
		r = -errno;
	else if (renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dirfd, tmp, 0);
	return r;
}

static int open_dir(const char *dir, bool create)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && create && mkdir(dir, 0700) == 0)
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int ptrkey_load(const char *path, bool create, struct ptrkey *k)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int dirfd = -1;
	char boot[BOOT_ID_MAX], *slash;
	const char *name;
	int r;

	if (!dir)
		return -ENOMEM;
	if (boot_id_get(boot) < 0)
		return -ENOKEY;
	slash = strrchr(dir, '/');
	name = slash ? path + (slash - dir) + 1 : path;
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	dirfd = open_dir(slash ? dir : ".", create);
	if (dirfd < 0)
		return dirfd;
	if (create && flock(dirfd, LOCK_EX) < 0)
		return -errno;
	r = read_key(dirfd, name, boot, k);
	if (r < 0 && r != -EACCES && create)
		r = write_key(dirfd, name, boot, k);
	return r;
}

const char *ptrkey_strerror(int r)
{
	switch (r) {
	case -ENOENT: return "there is none";
	case -ESTALE: return "it is another boot's";
	case -EPERM: return "others may read it";
	case -ENOKEY: return "this boot's id cannot be read";
	case -EBADMSG: return "it is damaged";
	default: return strerror(-r);
	}
}

static struct ptrkey in_use;
static pthread_once_t in_use_once = PTHREAD_ONCE_INIT;

static void in_use_init(void)
{
	/* Never hash with a key anyone could guess: no key, no hashes. */
	if (ptrkey_random(&in_use) < 0)
		abort();
}

void ptrkey_use(const struct ptrkey *k)
{
	pthread_once(&in_use_once, in_use_init);
	in_use = *k;
}

const struct ptrkey *ptrkey_in_use(void)
{
	pthread_once(&in_use_once, in_use_init);
	return &in_use;
}
