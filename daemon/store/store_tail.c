// SPDX-License-Identifier: GPL-2.0
/* Where a directory's stream ends, for a writer that takes the directory
 * over (a restart) to number on from there: the last file read through
 * as a reader reads it, its blocks counted (no event wanted, nothing
 * rendered), so that a reader's count of the records between that file
 * and the writer's first one agrees with the writer's. */
#include "store/store_priv.h"
#include "store/store_read_priv.h"
#include "util.h"

static bool want_none(struct store_event *ev, void *userdata)
{
	(void)ev;
	(void)userdata;
	return false;
}

int store_stream_end(const char *path, char **stream, uint64_t *records, struct cpu_counts *cpus)
{
	struct store_reader_opts o = { .want_event = want_none };
	char *const paths[] = { (char *)path };
	struct store_reader *r = NULL;
	struct store_rec rec;
	const struct store_cursor *c;
	int k = store_reader_new(&r, paths, 1, &o);

	while (k >= 0 && (k = store_reader_next(r, &rec)) > 0)
		;
	if (k >= 0 && r->n != 1)
		k = -ENOENT;
	if (k < 0) {
		store_reader_free(r);
		return k;
	}
	c = r->c[0];
	*stream = c->stream ? strdup(c->stream) : NULL;
	*records = c->first_record + c->passed;
	k = cpu_counts_add_all(cpus, &c->first_cpus);
	if (k >= 0)
		k = cpu_counts_add_all(cpus, &c->passed_cpus);
	if (c->stream && !*stream)
		k = -ENOMEM;
	store_reader_free(r);
	return k;
}
