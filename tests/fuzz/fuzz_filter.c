// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the filter parser and compiler, against real event formats.
 * Input: 2 bytes choose the event, the rest is the Filter= expression. The
 * compiler either fills a descriptor the BPF side can run (bounded insns,
 * offsets inside the record) or fails with a diagnostic. */
#include <stdint.h>
#include "filter/filter.h"
#include "fx_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf_pos pos = { .file = (char *)"fuzz.conf", .line = 1, .col = 8 };
	_cleanup_free_ char *expr = NULL;
	struct event_desc desc;
	struct diag d = { 0 };
	struct tp_event *e;
	int r;

	fx_load();
	if (size < 2 || !fx_n)
		return 0;
	e = fx_events[(data[0] | data[1] << 8) % fx_n];
	expr = malloc(size - 1);
	if (!expr)
		return 0;
	memcpy(expr, data + 2, size - 2);
	expr[size - 2] = 0;
	memset(&desc, 0, sizeof(desc));
	desc.fixed_size = e->fixed_size;
	r = filter_compile(expr, e, &pos, &desc, &d);
	if (r < 0) {
		if (r == -EINVAL && !d.msg[0])
			__builtin_trap();
		return 0;
	}
	if (desc.n_insns > TRACERD_FILTER_INSNS)
		__builtin_trap();
	for (unsigned i = 0; i < desc.n_insns; i++) {
		const struct filter_insn *in = &desc.insns[i];

		if (in->src == SRC_RECORD && in->op == FOP_CMP && in->off + in->size > TRACERD_MAX_RECORD)
			__builtin_trap();
		if (in->op == FOP_STRCMP && in->str >= TRACERD_FILTER_STRS)
			__builtin_trap();
	}
	return 0;
}
