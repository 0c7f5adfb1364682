/* SPDX-License-Identifier: GPL-2.0 */
/* What the BPF side and the daemon agree on: the per-event descriptor the
 * class program reads by its BPF cookie, and the header it puts in front of
 * every record it copies into the ring buffer. */
#ifndef TRACERD_RECORD_H
#define TRACERD_RECORD_H

#include <linux/types.h>
#include <stdbool.h>

#define TRACERD_COMM_LEN	16
/* perf's tracepoint buffer is 8 KiB (PERF_MAX_TRACE_SIZE): no record is larger. */
#define TRACERD_MAX_RECORD	8192
#define TRACERD_MAX_EVENTS	4096
/* In the class program's `filters` program array: the program an emitted
 * filter hands a kept record to. */
#define TRACERD_ACCEPT_PROG	0
/* ...and where the accept program sends an inter-event trigger's event
 * (bpf/hist_trigger.bpf.h): loaded only for a config that has one. */
#define TRACERD_TRIGGER_PROG	1
#define TRACERD_MAX_DYN		8	/* __data_loc fields per event */
#define TRACERD_FILTER_INSNS	64	/* filter bytecode per event */
#define TRACERD_FILTER_STR	64	/* bytes of a string constant, NUL included */
#define TRACERD_FILTER_STRS	8	/* string constants per event (a power of two) */
#define TRACERD_MAX_USTR	4	/* user string arguments per syscall event */
#define TRACERD_USTR_LEN	256	/* bytes read of each, NUL included */

/* Record layout, once for both sides: inline, so that the BPF hot path
 * costs what it did when each place spelled it out. */
#define TRACERD_INLINE static inline __attribute__((always_inline))

/* A __data_loc word: payload length in the high 16 bits, offset in the low
 * 16, from the record's start; a __rel_loc's offset is from the word's end.
 * field_off is where the word lies in the record. */
TRACERD_INLINE __u32 tracerd_loc_off(__u32 loc, __u32 field_off, bool rel)
{
	return (loc & 0xffff) + (rel ? field_off + 4 : 0);
}

TRACERD_INLINE __u32 tracerd_loc_len(__u32 loc)
{
	return loc >> 16;
}

/* Do n bytes at off lie within a record of len bytes? */
TRACERD_INLINE bool tracerd_span_fits(__u64 off, __u64 n, __u64 len)
{
	return off <= len && n <= len - off;
}

/* The low size bytes of v as a C value of that size and signedness,
 * widened to 64 bits; size 0 is 0, 8 or more is v. */
TRACERD_INLINE __u64 tracerd_widen(__u64 v, unsigned size, bool is_signed)
{
	unsigned bits = size * 8;

	if (size >= 8)
		return v;
	if (!size)
		return 0;
	v &= (1ULL << bits) - 1;
	if (is_signed && (v >> (bits - 1)) & 1)
		v |= ~0ULL << bits;
	return v;
}

/* A field of size bytes at p, widened to 64 bits. Little endian. */
TRACERD_INLINE __u64 tracerd_load(const void *p, unsigned size, bool is_signed)
{
#ifdef __bpf__
	/* Typed loads: one instruction each, where a memcpy from a byte
	 * pointer would be a load per byte. The filter compiler emits only
	 * these sizes. */
	switch (size) {
	case 1: return is_signed ? (__u64)(__s64)*(const __s8 *)p : *(const __u8 *)p;
	case 2: return is_signed ? (__u64)(__s64)*(const __s16 *)p : *(const __u16 *)p;
	case 4: return is_signed ? (__u64)(__s64)*(const __s32 *)p : *(const __u32 *)p;
	default: return *(const __u64 *)p;
	}
#else
	__u64 v = 0;
	__u32 v32;
	__u16 v16;

	/* Fixed-size copies for the usual sizes: a plain load each, where a
	 * copy of a variable size is a call to memcpy. A format may say
	 * size:3, or size:16: read what is there, at most 8 bytes. */
	switch (size) {
	case 1: v = *(const __u8 *)p; break;
	case 2: __builtin_memcpy(&v16, p, 2); v = v16; break;
	case 4: __builtin_memcpy(&v32, p, 4); v = v32; break;
	case 8: __builtin_memcpy(&v, p, 8); break;
	default: __builtin_memcpy(&v, p, size > 8 ? 8 : size); break;
	}
	return tracerd_widen(v, size, is_signed);
#endif
}

/* A syscall's user string arguments (SyscallStrings=, event_desc.ustr_off):
 * the record's fixed part is followed, at tracerd_ustr_words(fixed_size),
 * by one word per argument, in the order of ustr_off, then by the strings.
 * A word is (len << 16 | offset from the record's start), as a __data_loc,
 * len counting the NUL; len 0: no string, and the low 16 bits are the
 * errno of the read (EFAULT: the page was not present), or 0 for a NULL
 * pointer, which is not read. A string of TRACERD_USTR_LEN bytes may have
 * been cut there. A record no longer than its fixed part carries none. */
TRACERD_INLINE __u32 tracerd_ustr_words(__u32 fixed_size)
{
	return (fixed_size + 3) & ~3u;
}

/* Record flags set by the BPF side. */
#define TRACERD_REC_TRUNCATED	(1u << 0)	/* dynamic payload ran past MAX_RECORD */
#define TRACERD_REC_STACKS	(1u << 1)	/* the record ends in stack frames (below) */
/* Set by the consumer, never by BPF: after its stacks the record holds its
 * user frames' text, resolved live (daemon/render/ustack_text.h). */
#define TRACERD_REC_USTACK_TEXT	(1u << 2)
/* Set by BPF when tracerd runs in a PID namespace of its own and the record
 * has user frames: its last 4 bytes, after the stacks, are the task's tgid
 * as tracerd's namespace numbers it (below). The consumer takes them off
 * first: no output and no store ever sees this flag. */
#define TRACERD_REC_NS_TGID	(1u << 3)
/* Set by BPF on a record of a Unit= slot whose cgroup has no verdict yet
 * (made since the daemon's last look, bpf/unit.bpf.h): the consumer judges
 * it before anything else reads it, and takes the flag off. */
#define TRACERD_REC_UNIT_ASK	(1u << 4)

/* Stack traces (StackTrace=, event_desc.stack): a record flagged
 * TRACERD_REC_STACKS ends, after its own bytes (the fixed part, the
 * __data_loc payload and any syscall user strings), in
 *	n_kern kernel return addresses (__u64, innermost first),
 *	n_user user return addresses (__u64, innermost first),
 *	struct trace_stack_tail (8 bytes, the record's last),
 * unaligned. So the record proper is the first
 * len - sizeof(tail) - 8 * (n_kern + n_user) bytes, which
 * tracerd_stacks_split() gives. The kernel frames start at the
 * tracepoint's caller: the class program's bpf_get_stack() skips the
 * tracing machinery below it (TRACERD_KSTACK_SKIP; the rest of the rule is
 * stack_skip(), kernel-events/stack_skip.c). A walk keeps at most
 * TRACERD_STACK_DEPTH frames: the program asks for one more, and a stack
 * that had it is cut (TRACERD_STACK_CUT), never passed off as whole. */
#define TRACERD_STACK_DEPTH	64
#define TRACERD_STACK_KERNEL	(1u << 0)	/* event_desc.stack: what to take */
#define TRACERD_STACK_USER	(1u << 1)
/* The most a record's stacks add to it: both walks whole, and the tail. */
#define TRACERD_MAX_STACKS	(2 * 8 * TRACERD_STACK_DEPTH + 8)
/* event_desc.stack's bits 8-15: a lower depth (tests: TRACERD_TEST_STACK_DEPTH); 0: the limit. */
#define TRACERD_STACK_DEPTH_SHIFT 8
/* Frames bpf_get_stack() skips: none, the walk starts at the registers
 * perf_trace_<class> took of its caller (perf_fetch_caller_regs); measured
 * on 6.18, with stack_skip()'s rule. */
#define TRACERD_KSTACK_SKIP	0

enum trace_stack_state {
	TRACERD_STACK_NONE = 0,		/* not taken */
	TRACERD_STACK_WHOLE,		/* every frame */
	TRACERD_STACK_CUT,		/* the innermost TRACERD_STACK_DEPTH frames */
	TRACERD_STACK_LOST,		/* the walk failed: err says why, no frames */
};

struct trace_stack_tail {
	__u16 n_kern, n_user;
	__u8 kern, user;		/* enum trace_stack_state */
	__u8 kern_err, user_err;	/* TRACERD_STACK_LOST: the errno */
};

/* User frames are resolved from /proc/TGID, which numbers processes as
 * tracerd's own PID namespace does, while BPF gives the initial
 * namespace's tgid. So when tracerd runs in another PID namespace (a
 * container's), the class program takes the task's tgid in it with
 * bpf_get_ns_current_pid_tgid() and appends it (__u32, unaligned) to a
 * record with user frames, flagged TRACERD_REC_NS_TGID; 0: the task is not
 * in that namespace (the host's, or a namespace nested inside it: the
 * helper sees only the task's own), so /proc has no entry known to be it.
 * In the initial namespace nothing is appended: the record's tgid is it. */
#define TRACERD_NS_TGID_NONE	0

/* A record of len bytes flagged TRACERD_REC_NS_TGID: the tgid it ends in,
 * and its length without it; false if it is too short. */
TRACERD_INLINE bool tracerd_ns_tgid_split(const void *rec, __u32 *len, __u32 *tgid)
{
	if (*len < sizeof(*tgid))
		return false;
	*len -= sizeof(*tgid);
	__builtin_memcpy(tgid, (const char *)rec + *len, sizeof(*tgid));
	return true;
}

/* A record of len bytes flagged TRACERD_REC_STACKS: its tail and where its
 * frames begin (the record proper's length); false if they do not fit. */
TRACERD_INLINE bool tracerd_stacks_split(const void *rec, __u32 len,
					 struct trace_stack_tail *tail, __u32 *frames_off)
{
	__u64 n;

	if (len < sizeof(*tail))
		return false;
	__builtin_memcpy(tail, (const char *)rec + len - sizeof(*tail), sizeof(*tail));
	n = 8ull * (tail->n_kern + tail->n_user) + sizeof(*tail);
	if (n > len)
		return false;
	*frames_off = len - n;
	return true;
}

struct trace_rec_hdr {
	__u64 ts_ns;			/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 slot;			/* event slot, the attachment's BPF cookie */
	__u32 cpu;
	__u32 pid;			/* tgid */
	__u32 tid;
	__u32 len;			/* bytes of record that follow */
	__u32 flags;
	char comm[TRACERD_COMM_LEN];
	/* bpf_get_current_cgroup_id(): the current task's cgroup v2 id, the
	 * same "current" as common_pid (in interrupt context, whatever task
	 * ran); kernel-events/cgroup.c names it. */
	__u64 cgroup_id;
};

/* Filter bytecode, run by bpf/filter.bpf.h. A stack machine over booleans:
 * each compare pushes its result; AND/OR/NOT combine the top entries.
 * ANDSC/ORSC short-circuit: when the top decides (false for &&, true for ||)
 * they skip imm instructions, the right operand; otherwise they pop it. */
enum filter_op {
	FOP_END = 0,
	FOP_CMP,	/* push (field <cmp> imm) */
	FOP_STRCMP,	/* push (string <cmp> strs[str]): EQ/NE literal, GLOB/NGLOB */
	FOP_AND,
	FOP_OR,
	FOP_NOT,
	FOP_TRUE,
	FOP_ANDSC,
	FOP_ORSC,
};

/* A new operator touches: filter_ast.h (enum fpred_op) and filter_parse.c
 * (its spelling), filter_compile.c (fpred_op to filter_cmp, the types it
 * takes), bpf/filter.bpf.h (the interpreter, also --read's), filter_emit.c
 * or filter_emit_str.c (the emitted jump), tracerd.conf(5), and the
 * differential tests: test_filter_emit.c's generator, filter_diff.sh. */
enum filter_cmp {
	FCMP_EQ, FCMP_NE, FCMP_LT, FCMP_LE, FCMP_GT, FCMP_GE,
	FCMP_BAND,	/* (field & imm) != 0 */
	FCMP_BALL,	/* (field & imm) == imm */
	FCMP_GLOB,	/* strings only */
	FCMP_NGLOB,
};

/* Where a value comes from, for the filter (filter_insn.src) and for a
 * histogram key (agg_key_src.src) alike: kernel-events/field_source.c
 * resolves a field name to one. */
enum trace_src {
	SRC_RECORD = 0,		/* number at off/size in the record */
	SRC_STR,		/* char array at off in the record, of its size */
	SRC_DATA_LOC,		/* __data_loc string: off is the loc word */
	SRC_REL_LOC,		/* __rel_loc string: offset from the loc word's end */
	SRC_PID,		/* common_pid: the current tid */
	SRC_TGID,
	SRC_CPU,
	SRC_COMM,		/* current task's comm, TRACERD_COMM_LEN bytes */
	SRC_PID_COMM,		/* Aggregate='s common_pid.execname: the tid, then comm */
	SRC_USER_STR,		/* a syscall's user string: off is its word after the
				 * fixed part; unreadable or absent: no string at all */
	SRC_STACKTRACE,		/* Aggregate='s common_stacktrace: the kernel call
				 * path, TRACERD_HIST_STACK_FRAMES return addresses */
	SRC_CGROUP,		/* Aggregate='s cgroup: the current cgroup v2 id */
	SRC_UNIT,		/* Aggregate='s unit: the same id, merged by unit name
				 * in the dump (the names live in userspace) */
	SRC_TIMESTAMP,		/* Aggregate='s common_timestamp: bpf_ktime_get_ns() */
};

struct filter_insn {
	__u8 op;
	__u8 cmp;
	__u8 src;		/* enum trace_src */
	__u8 size;		/* 1, 2, 4, 8; 0 for strings */
	__u8 is_signed;
	__u8 str;		/* index into strs for FOP_STRCMP */
	__u16 off;
	__u64 imm;		/* the constant; strings in the record: the array's size */
};

struct event_desc {
	__u32 fixed_size;	/* end of the last fixed field */
	__u32 n_dyn;
	__u16 dyn_off[TRACERD_MAX_DYN];	/* offsets of __data_loc/__rel_loc words */
	__u16 dyn_rel;		/* bit i: dyn_off[i] is a __rel_loc */
	__u16 id;		/* tracefs event id, written as common_type */
	__u32 n_insns;		/* 0: no filter */
	/* Bytes at the start of the record that the filter reads (at least 8:
	 * the common fields), so that the class program copies only those
	 * before it decides. 0: the filter reads a __data_loc string, and runs
	 * on the whole record. */
	__u32 filter_span;
	/* FOP_ANDSC or FOP_ORSC when the filter is numeric compares (insns 0,
	 * 2, 4...) joined by that one operator alone: it is then their AND or
	 * OR, whatever the skips, and runs without the stack machine. 0: not. */
	__u32 filter_chain;
	/* Nonzero: the slot aggregates (Aggregate=): its records go to the
	 * histogram map described by its agg_desc, never to the ring buffer.
	 * One branch on it keeps the other slots' path as it was.
	 * TRACERD_AGG_TRIGGER: an inter-event trigger's, which only the accept
	 * program runs (bpf/hist_trigger.bpf.h). */
	__u32 agg;
	/* Offsets of the syscall arguments whose user strings the class
	 * program reads and appends (SyscallStrings=); 0 ends the list, so
	 * ustr_off[0] == 0 for every other event costs one branch. */
	__u16 ustr_off[TRACERD_MAX_USTR];
	__u32 stack;		/* StackTrace=: TRACERD_STACK_KERNEL | _USER, and a depth */
	/* Unit=: nonzero, the selection's set of units in `unit_verdicts`;
	 * the current task's cgroup must be in one of them (or below). */
	__u32 unit_set;
	struct filter_insn insns[TRACERD_FILTER_INSNS];
	char strs[TRACERD_FILTER_STRS][TRACERD_FILTER_STR];
};

/* Unit= (bpf/unit.bpf.h): the daemon's verdict on each cgroup for each
 * selection with Unit= (a set), keyed by cgroup id and set. A cgroup the
 * daemon has not written yet is in the set when one of its ancestors is,
 * up to TRACERD_UNIT_LEVELS levels deep; else its records go to the
 * daemon marked TRACERD_REC_UNIT_ASK, and the daemon judges them. */
#define TRACERD_UNIT_SETS	64
#define TRACERD_UNIT_LEVELS	16
#define TRACERD_UNIT_CGROUPS	(1u << 16)	/* verdicts, over every set (tests: TRACERD_TEST_UNIT_CGROUPS) */
/* Levels of tracerd's own cgroup that the loader looks through for the
 * root of its cgroup2 mount (bpf/self_tgid.bpf.c). */
#define TRACERD_SELF_LEVELS	64
enum { UNIT_REJECT = 1, UNIT_ACCEPT = 2 };

/* What bpf/cgroup_watch.bpf.c sends of each new cgroup2 cgroup: the
 * kernel's cgroup_mkdir fields, the path from the root of the whole tree
 * (not of tracerd's cgroup namespace), len bytes with its NUL; 0: none. */
#define TRACERD_CGROUP_PATH	4096
struct cgroup_birth {
	__u64 id;
	__u32 level;
	__u32 len;
	char path[TRACERD_CGROUP_PATH];
};

struct unit_key {
	__u64 cgroup_id;
	__u32 set;
	__u32 pad;
};

/* Per event slot and per CPU, read by the daemon for loss accounting:
 * hits = filtered + emitted + lost (filtered: by Unit= or Filter=), or for an aggregating slot
 * hits = filtered + aggregated + agg_dropped. */
struct event_stats {
	__u64 hits;
	__u64 filtered;
	__u64 lost;		/* ring buffer reserve failed */
	__u64 truncated;
	__u64 aggregated;	/* counted in a histogram entry */
	__u64 agg_dropped;	/* no histogram entry could be placed */
	__u64 ustr_unreadable;	/* a user string that could not be read */
	__u64 agg_nostack;	/* of agg_dropped: the kernel gave no stack (its error) */
	__u64 stack_cut;	/* a stack cut at TRACERD_STACK_DEPTH (kernel or user) */
	__u64 stack_lost;	/* a stack walk that failed */
	__u64 agg_compiled;	/* of aggregated: counted in the emitted program */
	/* Of filtered: an aggregating Unit= slot's events in a cgroup with no
	 * verdict yet (a histogram cannot wait for the daemon's). */
	__u64 unit_unjudged;
	/* Inter-event triggers (bpf/hist_trigger.bpf.h): an event whose
	 * $references found no start for its key, neither counted nor acted
	 * on, as in the kernel; of aggregated: a start whose variables found
	 * no room; events of a synthetic event fired by an action. */
	__u64 unmatched;
	__u64 vars_dropped;
};

/* Aggregation (Aggregate=, the kernel's hist trigger language): per slot an
 * agg_desc in the `agg_descs` map says how to build the key from the record
 * and which fields to sum; bpf/aggregate.bpf.h updates a hash map
 * keyed by (slot, generation, key bytes). */
#define TRACERD_AGG_KEYS	3	/* as the kernel's TRACING_MAP_KEYS_MAX */
#define TRACERD_AGG_VALS	3	/* sums besides hitcount */
#define TRACERD_AGG_SMALL	24	/* key bytes of the small map */
#define TRACERD_AGG_MEDIUM	64	/* of the medium map */
#define TRACERD_AGG_LARGE	256	/* of the large map */
#define TRACERD_AGG_STR		128	/* bytes of a __data_loc string key, NUL included */
/* A short string: a key whose __data_loc strings are all at most this long
 * (the loc word's length, NUL included) is counted in the small map, in the
 * key's compact layout (agg_desc.short_size), when that layout fits; a
 * longer one in the large map. The length is known before the string is
 * read, so the choice is the key's own: the generic aggregate() and the
 * emitted program make it alike, and the dump turns a compact key back
 * into the full one (the string's bytes, zeros after). */
#define TRACERD_AGG_STR_SHORT	16
/* A common_stacktrace key: the kernel hist's HIST_STACKTRACE_DEPTH frames
 * from the tracepoint's caller on, and room for the tracing machinery's
 * own frames in front (kernel-events/stack_skip.c: __traceiter_<event>
 * when a tracepoint has several probes, perf_syscall_enter) and for one
 * more frame, which tells a deeper stack, cut, from a whole one. */
#define TRACERD_HIST_STACK_DEPTH	16
#define TRACERD_HIST_STACK_FRAMES	(TRACERD_HIST_STACK_DEPTH + 2)
/* Entries of each (preallocated) map, both generations of every
 * aggregating slot: about 7, 2 and 3 MiB. */
#define TRACERD_AGG_SMALL_ENTRIES	(1u << 16)
#define TRACERD_AGG_MEDIUM_ENTRIES	(1u << 14)
#define TRACERD_AGG_LARGE_ENTRIES	(1u << 13)
/* Stacks of keys=common_stacktrace alone, by id (bpf/aggregate.bpf.h):
 * TRACERD_HIST_STACK_FRAMES each, about 3 MiB, kept while tracerd runs. */
#define TRACERD_AGG_STACK_IDS		(1u << 14)

enum agg_xform { AGG_X_NONE = 0, AGG_X_LOG2, AGG_X_BUCKETS, AGG_X_USECS };

/* The hash maps of keys, by key size: a key is hashed as its map's whole
 * key, so a usual one (a comm, a number or two) is not hashed as 256
 * bytes, nor a comm with a pid as 256. */
enum agg_map { AGG_MAP_SMALL, AGG_MAP_MEDIUM, AGG_MAP_LARGE, AGG_MAPS };

/* The key bytes of a map's keys (after agg_key_hdr). */
TRACERD_INLINE __u32 tracerd_agg_map_bytes(__u32 map)
{
	return map == AGG_MAP_SMALL ? TRACERD_AGG_SMALL :
	       map == AGG_MAP_MEDIUM ? TRACERD_AGG_MEDIUM : TRACERD_AGG_LARGE;
}

/* The map of a key of key_size bytes. */
TRACERD_INLINE __u32 tracerd_agg_map_of(__u32 key_size)
{
	return key_size <= TRACERD_AGG_SMALL ? AGG_MAP_SMALL :
	       key_size <= TRACERD_AGG_MEDIUM ? AGG_MAP_MEDIUM : AGG_MAP_LARGE;
}

struct agg_key_src {
	__u8 src;		/* enum trace_src */
	__u8 size;		/* numbers: 1, 2, 4, 8 */
	__u8 is_signed;
	__u8 xform;
	__u16 off;		/* in the record */
	__u16 key_off;		/* in the key: numbers take 8 bytes */
	__u16 width;		/* bytes in the key */
	__u16 short_off;	/* in the compact key (agg_desc.short_size) */
	__u16 pad[2];
	__u64 buckets;		/* AGG_X_BUCKETS: the bucket size */
};

struct agg_val_src {
	__u16 off;
	__u8 size;
	__u8 is_signed;
	__u32 ts;		/* common_timestamp: 1, .usecs: AGG_X_USECS; 0: the field */
};

struct agg_desc {
	__u32 key_size;		/* bytes of key after agg_key's header */
	__u32 map;		/* enum agg_map, by key_size: tracerd_agg_map_of() */
	__u32 max_entries;	/* size=: entries per generation */
	__u32 gen;		/* the generation events go to; the daemon flips it */
	__u32 n_keys, n_vals;
	/* keys=common_stacktrace alone: counted under the stack's id in
	 * the small map, or, when the id map cannot give one, under the
	 * frames in the large map (the key layout desc describes). */
	__u32 stack_ids;
	/* A large key with __data_loc strings: the bytes of its compact
	 * layout, which fits the small map (TRACERD_AGG_STR_SHORT); 0: none. */
	__u32 short_size;
	/* Nonzero: variables, references or an action: hist_triggers[trigger
	 * - 1] (bpf/hist_trigger.bpf.h), which the triggers' program runs. */
	__u32 trigger;
	__u32 pad;
	struct agg_key_src keys[TRACERD_AGG_KEYS];
	struct agg_val_src vals[TRACERD_AGG_VALS];
};

TRACERD_INLINE bool tracerd_agg_dyn_str(__u8 src)
{
	return src == SRC_DATA_LOC || src == SRC_REL_LOC;
}

/* A key part's bytes in the compact layout: a __data_loc string its short
 * length, the rest as in the full key. */
TRACERD_INLINE __u32 tracerd_agg_short_width(const struct agg_key_src *k)
{
	return tracerd_agg_dyn_str(k->src) ? TRACERD_AGG_STR_SHORT : k->width;
}

/* Is a __data_loc string of this loc word short, so that a key of short
 * strings alone goes to the small map? */
TRACERD_INLINE bool tracerd_agg_str_is_short(__u32 loc)
{
	return tracerd_loc_len(loc) <= TRACERD_AGG_STR_SHORT;
}

/* The hash maps' key: which slot and generation, then the key bytes. */
struct agg_key_hdr {
	__u32 slot;
	__u32 gen;
};

/* Per entry. */
struct agg_value {
	__u64 hitcount;
	__u64 sums[TRACERD_AGG_VALS];
};

/* Per slot and generation (index slot * 2 + gen): entries placed, so that a
 * slot keeps to its size=, and events that found no place (Dropped). */
struct agg_budget {
	__u64 entries;
	__u64 dropped;
};

/* Inter-event hist triggers (Documentation/trace/histogram.rst): a
 * trigger's variables (name=EXPR), read by another event's trigger as
 * $name for the same key, and its onmatch() action, which fires a
 * synthetic event. daemon/aggregate/hist_vars.c compiles them; one
 * hist_trigger per slot in the `hist_triggers` map. */
#define TRACERD_AGG_TRIGGER	2	/* event_desc.agg */
#define TRACERD_HIST_VARS	8	/* variables a trigger sets, and references it reads */
#define TRACERD_HIST_TERMS	4	/* +/- terms of an expression */
#define TRACERD_SYNTH_PARAMS	8	/* fields of a synthetic event an action fills */
#define TRACERD_SYNTH_STR	256	/* a char[N] field's bytes (STR_VAR_LEN_MAX) */
#define TRACERD_SYNTH_REC	1024	/* a synthetic record an action builds */
#define TRACERD_SYNTH_SUBS	8	/* selections of one synthetic event */
#define TRACERD_SYNTH_EVENTS	256	/* TP_SYNTH_ID_FIRST + index */
#define TRACERD_HIST_TRIGGERS	256
#define TRACERD_VAR_KEY		24	/* key bytes of a variables entry */
#define TRACERD_VAR_ENTRIES	(1u << 16)

enum hist_operand_kind {
	HOP_CONST = 0,		/* the term's mul alone */
	HOP_FIELD,		/* a number at off/size in the record */
	HOP_TS,			/* common_timestamp: bpf_ktime_get_ns() */
	HOP_TS_USECS,		/* common_timestamp.usecs, rounded as ns2usecs() */
	HOP_VAR,		/* this trigger's variable idx, computed before */
	HOP_REF,		/* reference idx: another trigger's variable */
	HOP_PID,		/* common_pid */
	HOP_CPU,
	HOP_STR,		/* a param only: a char array at off, size bytes */
	HOP_COMM,		/* a param only: the current comm */
};

struct hist_operand {
	__u8 kind;		/* enum hist_operand_kind */
	__u8 size;
	__u8 is_signed;
	__u8 idx;
	__u16 off;
	__u16 pad;
};

/* sign * operand * mul / div; div 0: none. */
struct hist_term {
	struct hist_operand op;
	__u32 neg;
	__u64 mul;
	__u64 div;
};

struct hist_expr {
	__u32 n_terms;
	__u32 pad;
	struct hist_term terms[TRACERD_HIST_TERMS];
};

/* A reference: variable var of the trigger at slot. */
struct hist_ref {
	__u32 slot;
	__u32 var;
};

struct synth_param {
	struct hist_operand src;	/* HOP_VAR, HOP_REF, HOP_FIELD, HOP_STR... */
	__u16 off;			/* in the synthetic record */
	__u16 size;			/* its field's bytes */
	__u32 pad;
};

/* onmax($var).save(...) and onchange($var).save(...): per histogram entry,
 * the tracked value and the saved fields of the event that set it, each in
 * a cell of TRACERD_TRACK_CELL bytes (a number in 8, a string NUL-ended). */
enum { TRACK_NONE = 0, TRACK_MAX, TRACK_CHANGE };
#define TRACERD_TRACK_SAVES	8
#define TRACERD_TRACK_CELL	32
#define TRACERD_TRACK_BYTES	(TRACERD_TRACK_SAVES * TRACERD_TRACK_CELL)
#define TRACERD_TRACK_ENTRIES	(1u << 13)

struct hist_track_val {
	__u64 val;
	__u8 saved[TRACERD_TRACK_BYTES];
};

struct hist_trigger {
	__u32 n_vars, n_refs;
	__u32 store;		/* another trigger reads these variables: keep them */
	__u32 synth;		/* an action: index into synth_subs, + 1; 0: none */
	__u16 synth_id;		/* its common_type */
	__u16 synth_size;	/* its record's bytes */
	__u32 n_params;
	struct hist_ref refs[TRACERD_HIST_VARS];
	struct hist_expr vars[TRACERD_HIST_VARS];
	struct synth_param params[TRACERD_SYNTH_PARAMS];
	__u32 track;		/* TRACK_MAX, TRACK_CHANGE: of variable track_var */
	__u32 track_var;
	__u32 n_saves;
	__u32 snapshot;		/* .snapshot(): a new maximum of all keys (a change) asks */
	struct synth_param saves[TRACERD_TRACK_SAVES];
};

/* onmax()/onchange().snapshot(), by hist_triggers' index: the maximum of
 * all keys so far, and how many times a new one (a change) asked the
 * daemon for a recorder snapshot, which it polls. */
struct hist_snap {
	__u64 max;
	__u64 requests;
};

/* The slots of the selections of a synthetic event, which its action fires. */
struct synth_subs {
	__u32 n;
	__u32 slots[TRACERD_SYNTH_SUBS];
};

struct hist_var_key {
	__u32 slot;
	__u32 pad;
	__u8 key[TRACERD_VAR_KEY];
};

/* A trigger's variables for one key: set says which hold a value not read
 * yet (a reference reads it once, as the kernel's read_once); stamp, when
 * they were last set (CLOCK_MONOTONIC ns), for the daemon to age out starts
 * whose end never came. */
struct hist_var_val {
	__u64 set;
	__u64 stamp;
	__u64 vals[TRACERD_HIST_VARS];
};

#endif
