// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: a stored record's stacks, as --read takes them from a store
 * file: input byte 0 is the record's flags (TRACERD_REC_STACKS,
 * TRACERD_REC_USTACK_TEXT), the rest its bytes. Splitting off the user
 * frames' text and the stack tail, and rendering both blocks and the
 * journal's fields, must never read past the record, whatever the tail's
 * counts or the text's length say. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "render/render_stack.h"

static void kv(void *ctx, const char *key, const char *value, size_t n)
{
	(void)ctx;
	(void)key;
	(void)value;
	(void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct strbuf sb;
	struct render_opts o = { 0 };
	struct rec_stacks st;
	uint8_t *rec;

	if (size < 1)
		return 0;
	/* An exact-size copy, so that ASan sees any read past the record. */
	rec = malloc(size - 1 ? size - 1 : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + 1, size - 1);
	rec_stacks_split(data[0] & (TRACERD_REC_STACKS | TRACERD_REC_USTACK_TEXT), rec, size - 1, &st);
	sb_reset(&sb);
	render_stacks_text(&st, &o, "p: ", 3, &sb);
	render_stacks_fields(&st, &o, kv, NULL);
	free(rec);
	return 0;
}
