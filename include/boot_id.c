// SPDX-License-Identifier: GPL-2.0
/* This boot's id. The unit's ProcSubset=pid hides /proc/sys: there systemd
 * hands the same file in as the credential "boot_id" (LoadCredential=). */
#include <ctype.h>
#include "boot_id.h"
#include "util.h"

static int read_id(const char *path, char id[BOOT_ID_MAX])
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[64];
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		return -EIO;
	n = strcspn(line, "\n");
	if (n != BOOT_ID_MAX - 1)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)line[i]) && line[i] != '-')
			return -EBADMSG;
	memcpy(id, line, n);
	id[n] = 0;
	return 0;
}

int boot_id_get(char id[BOOT_ID_MAX])
{
	const char *creds = getenv("CREDENTIALS_DIRECTORY");
	_cleanup_free_ char *path = NULL;
	int r = read_id("/proc/sys/kernel/random/boot_id", id);

	if (r < 0 && creds && asprintf(&path, "%s/boot_id", creds) >= 0)
		r = read_id(path, id) < 0 ? r : 0;
	if (r < 0)
		snprintf(id, BOOT_ID_MAX, "unknown");
	return r;
}
