/* SPDX-License-Identifier: GPL-2.0 */
/* For the harnesses of parsers that make events (format, synthetic):
 * whatever a parser accepted, the renderer must handle, so the fuzzer's
 * input bytes themselves are rendered as a record of the event, which is
 * then freed. */
#ifndef TRACERD_FUZZ_RENDER_INPUT_H
#define TRACERD_FUZZ_RENDER_INPUT_H

#include <stdint.h>
#include "kernel-events/events.h"
#include "render/render.h"

static void render_input_and_free(struct tp_event *e, const uint8_t *data, size_t size)
{
	struct strbuf sb = { 0 };

	if (render_prepare(e) >= 0) {
		render_event(e, NULL, data, size, &sb);
		render_release(e);
	}
	sb_free(&sb);
	tp_event_free(e);
}

#endif
