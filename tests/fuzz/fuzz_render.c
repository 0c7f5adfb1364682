// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the renderer over every captured event format with random
 * record bytes. Input: 2 bytes choose the event, the rest is the record (as
 * the ring buffer hands it over, common fields included). Rendering must
 * never read past len, whatever __data_loc words or lengths say. */
#include <stdint.h>
#include "render/render.h"
#include "fixtures.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct strbuf sb;
	struct tp_event *e;
	uint8_t *rec;

	fx_load();
	if (size < 2 || !fx_n)
		return 0;
	e = fx_events[(data[0] | data[1] << 8) % fx_n];
	if (!e->render && render_prepare(e) < 0)
		return 0;
	/* An exact-size copy, so that ASan sees any read past the record. */
	rec = malloc(size - 2 ? size - 2 : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + 2, size - 2);
	sb_reset(&sb);
	render_event(e, NULL, rec, size - 2, &sb);
	free(rec);
	return 0;
}
