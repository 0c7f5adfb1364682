// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the store reader on arbitrary file contents. Input: a whole
 * store file. Every event it describes is rebuilt and compiled, and every
 * record it yields is rendered, as tracerd --read does: no chunk header,
 * length, varint, event description or record may make the reader read out
 * of bounds, loop, or hand out a record longer than its bytes. */
#include <unistd.h>
#include <stdint.h>
#include <sys/mman.h>
#include "render/render.h"
#include "store/store.h"

static bool want(struct store_event *ev, void *userdata)
{
	(void)userdata;
	return render_prepare(ev->event) >= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct strbuf sb;
	struct store_reader_opts o = { .want_event = want, .want_lost = true };
	struct store_reader *r;
	struct store_rec rec;
	char path[64], *paths[] = { path };
	int fd = memfd_create("fuzz-store", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (store_reader_new(&r, paths, 1, &o) == 0) {
			while (store_reader_next(r, &rec) > 0) {
				if (rec.lost)	/* a loss mark: no event, no bytes */
					continue;
				sb_reset(&sb);
				render_event(rec.ev->event, NULL, rec.data, rec.len, &sb);
			}
			store_reader_free(r);
		}
	}
	close(fd);
	return 0;
}
