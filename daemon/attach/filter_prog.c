// SPDX-License-Identifier: GPL-2.0
/* Emitted filters (filter/filter_emit.c) loaded as programs, which
 * attach.c attaches in the class program's place, and the accept program
 * they hand kept records to (the `accept_prog` array). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/loader_priv.h"
#include <unistd.h>
#include "util.h"

void loader_filter_maps(struct loader *l, struct filter_emit_maps *m)
{
	*m = (struct filter_emit_maps){
		.stats_fd = bpf_map__fd(l->skel->maps.stats),
		.accept_fd = bpf_map__fd(l->skel->maps.accept_prog),
		.bss_fd = bpf_map__fd(l->skel->maps.bss),
		.stopped_off = (char *)&l->skel->bss->stopped - (char *)l->skel->bss,
		.self_tgid = l->skel->rodata->self_tgid,
		.rb_fd = bpf_map__fd(l->skel->maps.rb),
		.lost_total_fd = bpf_map__fd(l->skel->maps.lost_total),
		.rec_fd = bpf_map__fd(l->skel->maps.emit_rec),
		.wakeup_bytes = l->skel->rodata->wakeup_bytes,
		.agg_descs_fd = bpf_map__fd(l->skel->maps.agg_descs),
		.agg_keys_fd = {
			[AGG_MAP_SMALL] = bpf_map__fd(l->skel->maps.agg_small),
			[AGG_MAP_MEDIUM] = bpf_map__fd(l->skel->maps.agg_medium),
			[AGG_MAP_LARGE] = bpf_map__fd(l->skel->maps.agg_large),
		},
		.agg_stacks_fd = bpf_map__fd(l->skel->maps.agg_stacks),
	};
}

/* The verifier's last line that says something: its verdict, not the
 * instruction listing before it. */
static void verifier_message(const char *log, char *why, size_t size)
{
	const char *end = log + strlen(log), *p;

	while (end > log && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	for (p = end; p > log && p[-1] != '\n'; p--)
		;
	/* "processed N insns ..." comes after the verdict: skip it */
	if (!strncmp(p, "processed ", 10) && p > log) {
		end = p - 1;
		for (p = end; p > log && p[-1] != '\n'; p--)
			;
	}
	snprintf(why, size, "%.*s", (int)(end - p), p);
}

int loader_filter_load(struct loader *l, const struct bpf_insn *code, size_t n, char *why,
		       size_t why_size)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	_cleanup_free_ char *log = NULL;
	int fd, r;

	if (GROW(l->filter_fds, l->cap_filter_fds, l->n_filter_progs) < 0)
		return -ENOMEM;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "tracerd_filter", "GPL", code, n, &opts);
	if (fd >= 0)
		return l->filter_fds[l->n_filter_progs++] = fd;
	r = -errno;
	/* Again with the verifier's log, for its message. */
	log = malloc(1 << 20);
	if (!log) {
		snprintf(why, why_size, "%s", strerror(-r));
		return r;
	}
	log[0] = 0;
	opts.log_buf = log;
	opts.log_size = 1 << 20;
	opts.log_level = 1;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "tracerd_filter", "GPL", code, n, &opts);
	if (fd >= 0)	/* loaded this time: keep it */
		return l->filter_fds[l->n_filter_progs++] = fd;
	verifier_message(log, why, why_size);
	if (!why[0])
		snprintf(why, why_size, "%s", strerror(-r));
	return r;
}

int loader_task_comm(int off)
{
	const struct bpf_insn probe[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_task_btf },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_0,
		  .off = off },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_0,
		  .off = off + 8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	if (off <= 0 || off > INT16_MAX - 8)
		return 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "tracerd_comm", "GPL", probe, ARRAY_SIZE(probe),
			   NULL);
	if (fd < 0)	/* the helper then, as the class program */
		return 0;
	close(fd);
	return off;
}

/* Its skips outlive it: they are part of the accounting. */
void loader_filter_close(struct loader *l, int fd)
{
	for (unsigned i = 0; fd >= 0 && i < l->n_filter_progs; i++)
		if (l->filter_fds[i] == fd) {
			l->skipped_retired += prog_fd_skipped(fd);
			l->filter_fds[i] = l->filter_fds[--l->n_filter_progs];
			close(fd);
			return;
		}
}

/* The accept program, where a compiled filter sends what it keeps. */
int loader_accept_init(struct loader *l)
{
	__u32 k = TRACERD_ACCEPT_PROG;
	int fd = bpf_program__fd(l->skel->progs.trace_event_accept);

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.accept_prog), &k, &fd, BPF_ANY) < 0)
		return -errno;
	return 0;
}
