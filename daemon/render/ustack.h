/* SPDX-License-Identifier: GPL-2.0 */
/* User stack frames to text, in ftrace's sym-userobj form plus the symbol:
 *   "/usr/lib/x86_64-linux-gnu/libc.so.6[+0x8f1d7] __libc_start_call_main+0x7a"
 * (the text block puts " => " before it). The bracket is ftrace's exactly
 * (kernel/trace/trace_output.c, seq_print_user_ip): the IP's offset into
 * its mapping (ip - the mapping's start), not into the file. A frame with
 * no file (anonymous memory, JIT code, [vdso]) is "<00007f...>", as ftrace
 * prints it (after one space more); a frame of a process that has exited
 * "<00007f...> (process exited)", and of one outside tracerd's PID
 * namespace (tgid TRACERD_NS_TGID_NONE, tracerd_record.h)
 * "<00007f...> (process not in tracerd's PID namespace)".
 * Resolution reads /proc/TGID/maps while the process lives, so it must
 * happen soon after the event (the consumer), never at --read time. */
#ifndef TRACERD_USTACK_H
#define TRACERD_USTACK_H

#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>
#include "strbuf.h"
#include "tracerd_record.h"
#include "util.h"

struct ustack_syms;

/* The caches' bounds: processes (their maps) and files (symbol tables). */
#define USTACK_PROCS 256
#define USTACK_FILES 128

/* What became of the frames formatted so far; every frame is counted in
 * exactly one of named..other_pidns. */
struct ustack_stats {
	uint64_t frames;
	uint64_t named;		/* file and symbol */
	uint64_t file_only;	/* file, but no symbol covers the IP */
	uint64_t no_file;	/* anonymous memory, [vdso], [stack], ... */
	uint64_t unmapped;	/* in no mapping of a live process */
	uint64_t exited;	/* the process had exited: raw address */
	uint64_t unreadable;	/* its maps could not be read (EACCES, ...) */
	uint64_t other_pidns;	/* not in tracerd's PID namespace: no /proc/TGID */
	uint64_t maps_reads;	/* /proc/PID/maps read */
	uint64_t procs_evicted;	/* processes dropped from the cache */
	uint64_t files_loaded;	/* symbol tables read */
	uint64_t files_evicted;
};

int ustack_syms_new(struct ustack_syms **ret);
struct ustack_syms *ustack_syms_free(struct ustack_syms *s);
static inline void ustack_syms_freep(struct ustack_syms **s) { ustack_syms_free(*s); }
#define _cleanup_ustack_syms_ _cleanup_(ustack_syms_freep)

/* Appends what one frame is, without " => " or a newline. tgid: as /proc
 * numbers the process (tracerd's PID namespace). Returns 0: what cannot be
 * named is printed raw, with the reason, and counted in the stats. s NULL:
 * the raw address, counted nowhere. */
int ustack_format_frame(struct ustack_syms *s, pid_t tgid, __u64 ip, struct strbuf *out);
void ustack_syms_stats(const struct ustack_syms *s, struct ustack_stats *st);

#endif
