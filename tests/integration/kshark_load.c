// SPDX-License-Identifier: GPL-2.0
/* What KernelShark loads from a trace.dat, through its own library
 * (libkshark: kshark_open, kshark_load_entries): the number of entries,
 * per CPU, and the tasks (pids). Built and run by trace_dat.sh, which
 * compares the output with the store's records. */
#include <stdio.h>
#include <stdlib.h>
#include <kernelshark/libkshark.h>

int main(int argc, char **argv)
{
	struct kshark_context *ctx = NULL;
	struct kshark_entry **rows = NULL;
	long per_cpu[1024] = { 0 };
	int *pids = NULL, sd, max_cpu = -1;
	ssize_t n, n_pids;

	if (argc != 2 || !kshark_instance(&ctx))
		return 2;
	sd = kshark_open(ctx, argv[1]);
	if (sd < 0) {
		fprintf(stderr, "kshark_open %s: %d\n", argv[1], sd);
		return 1;
	}
	n = kshark_load_entries(ctx, sd, &rows);
	if (n < 0) {
		fprintf(stderr, "kshark_load_entries: %zd\n", n);
		return 1;
	}
	printf("entries %zd\n", n);
	for (ssize_t i = 0; i < n; i++) {
		int cpu = rows[i]->cpu;

		if (cpu >= 0 && cpu < 1024) {
			per_cpu[cpu]++;
			max_cpu = cpu > max_cpu ? cpu : max_cpu;
		}
		free(rows[i]);
	}
	free(rows);
	for (int c = 0; c <= max_cpu; c++)
		printf("cpu %d %ld\n", c, per_cpu[c]);
	n_pids = kshark_get_task_pids(ctx, sd, &pids);
	for (ssize_t i = 0; i < n_pids; i++)
		printf("task %d\n", pids[i]);
	free(pids);
	kshark_close(ctx, sd);
	kshark_free(ctx);
	return 0;
}
