// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: synthetic event definitions (kernel-events/synthetic.c), on
 * any text. A refused one points inside it; an accepted one has every field
 * named, in u64 slots after the common fields, and the renderer then takes
 * the input bytes as one of its records. */
#include <errno.h>
#include <stdint.h>
#include "kernel-events/events.h"
#include "render_input.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *def = malloc(size + 1);
	struct tp_synth_error err;
	struct tp_event *e = NULL;
	int r;

	if (!def)
		return 0;
	memcpy(def, data, size);
	def[size] = 0;
	r = tp_synthetic_parse(def, 40000, &e, &err);
	if (r == -EINVAL && (err.off < 0 || (size_t)err.off > strlen(def) || !err.expected))
		__builtin_trap();
	if (r < 0)
		return 0;
	if (e->n_fields < 5 || strcmp(e->system, "synthetic"))
		__builtin_trap();
	for (size_t i = 4; i < e->n_fields; i++)
		if (!e->fields[i].name || e->fields[i].offset < 8 || e->fields[i].offset % 8 ||
		    (i > 4 && e->fields[i].offset <= e->fields[i - 1].offset))
			__builtin_trap();
	render_input_and_free(e, data, size);
	return 0;
}
