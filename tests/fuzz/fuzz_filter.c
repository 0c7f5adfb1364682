// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the filter parser and compiler, against real event formats.
 * Input: 2 bytes choose the event, the rest is the Filter= expression. The
 * compiler either fills a descriptor the BPF side can run (bounded insns,
 * offsets inside the record) or fails with a diagnostic. What it accepts
 * the emitter (filter/filter_emit.c) either emits as code the kernel loads
 * as a tracepoint program (as root: the verifier checks it) or leaves to
 * the interpreter with a reason. */
#include <bpf/bpf.h>
#include <stdint.h>
#include <unistd.h>
#include "filter/filter.h"
#include "filter/filter_emit.h"
#include "fixtures.h"

/* The maps the emitted code refers to; -1 without privileges: emit only. */
static struct filter_emit_maps maps = { .stats_fd = -2, .rec_fd = -1 };

static void emit_and_load(const struct event_desc *desc)
{
	static struct bpf_insn code[FILTER_EMIT_MAX];
	char why[400] = "";
	int n, fd;

	if (maps.stats_fd == -2) {
		maps.stats_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4,
					       sizeof(struct event_stats), TRACERD_MAX_EVENTS, NULL);
		maps.accept_fd = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, NULL, 4, 4, 1, NULL);
		maps.bss_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);
		maps.self_tgid = 1;
		maps.rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, 1 << 16, NULL);
		maps.lost_total_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4, 8, 1, NULL);
		maps.wakeup_bytes = 1 << 20;
	}
	n = filter_emit(desc, &maps, code, why, sizeof(why));
	if (n == -EOPNOTSUPP && why[0])
		return;		/* the interpreter runs it, and the log says why */
	if (n <= 0 || n > FILTER_EMIT_MAX)
		__builtin_trap();
	if (maps.stats_fd < 0 || maps.accept_fd < 0 || maps.bss_fd < 0)
		return;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "fuzz", "GPL", code, n, NULL);
	if (fd < 0 && errno != EPERM && errno != ENOMEM && errno != EAGAIN)
		__builtin_trap();	/* the verifier refused emitted code */
	if (fd >= 0)
		close(fd);
}

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
	desc.id = e->id;
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
	if (desc.n_insns)
		emit_and_load(&desc);
	return 0;
}
