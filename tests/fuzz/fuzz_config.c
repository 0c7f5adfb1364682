// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the config parser, on any text, then the checks that run after
 * every file is read. It must only ever return an error with a diagnostic. */
#include <stdint.h>
#include "config/config.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = malloc(size + 1);
	struct diag d = { 0 };
	struct config c;
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	config_init(&c);
	r = config_parse_text(&c, "fuzz.conf", text, &d);
	if (r >= 0)
		r = config_finish(&c, &d);
	if (r == -EINVAL && !d.msg[0])
		__builtin_trap();	/* every user error says what is wrong */
	config_free(&c);
	return 0;
}
