// SPDX-License-Identifier: GPL-2.0
/* What the kernel counted for a loaded program (the class program's
 * copies, emitted filters): runs it skipped because another BPF program was
 * running on that CPU. Read through bpf(BPF_OBJ_GET_INFO_BY_FD), which,
 * unlike a map syscall, does not hold the CPU's BPF-active count. */
#include <bpf/bpf.h>
#include "attach/loader_priv.h"

uint64_t prog_fd_skipped(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return 0;
	return info.recursion_misses;
}
