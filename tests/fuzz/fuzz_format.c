// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the tracefs format parser, on any text. Whatever it accepts,
 * the renderer must then handle: the input bytes themselves are rendered
 * as a record of the parsed event, so odd sizes, offsets and array shapes
 * meet real bytes. */
#include <stdint.h>
#include "kernel-events/events.h"
#include "render_input.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = malloc(size + 1);
	struct tp_event *e = NULL;
	int line = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (tp_format_parse(text, &e, &line) < 0)
		return 0;
	for (size_t i = 0; i < e->n_fields; i++)
		if (!e->fields[i].name || !e->fields[i].type)
			__builtin_trap();
	render_input_and_free(e, data, size);
	return 0;
}
