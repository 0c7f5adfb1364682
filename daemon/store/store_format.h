/* SPDX-License-Identifier: GPL-2.0 */
/* The event store's file format, version 1 (docs/STORE.md): a file is a
 * sequence of chunks, each a fixed header followed by its payload. All
 * integers are little-endian. A chunk header carries its own checksum and
 * its payload's, so that a reader can tell a torn or corrupt chunk from a
 * whole one, skip it, and find the next chunk by its magic. */
#ifndef TRACERD_STORE_FORMAT_H
#define TRACERD_STORE_FORMAT_H

#include <stdint.h>

#define STORE_VERSION		1
#define STORE_MAGIC		0x4b435354u	/* "TSCK" read as bytes */
#define STORE_SUFFIX		".tstore"

enum store_chunk_type {
	STORE_CHUNK_FILE = 1,	/* first in every file: "key=value\n" lines */
	STORE_CHUNK_EVENTS,	/* event descriptions, before the blocks using them */
	STORE_CHUNK_BLOCK,	/* compressed records */
	STORE_CHUNK_KSYMS,	/* kernel stack frames' symbols, before the blocks using them */
};

enum store_codec {
	STORE_CODEC_NONE = 0,
	STORE_CODEC_ZLIB,
	STORE_CODEC_ZSTD,
};

struct store_chunk_hdr {
	uint32_t magic;
	uint16_t version;
	uint8_t type;		/* enum store_chunk_type */
	uint8_t codec;		/* enum store_codec */
	uint32_t disk_len;	/* payload bytes that follow the header */
	uint32_t raw_len;	/* payload bytes after decompression */
	uint32_t n_records;	/* BLOCK: records; EVENTS: events */
	uint32_t payload_crc;	/* crc32 (zlib's) of the disk payload */
	uint64_t ts_first;	/* BLOCK: lowest and highest timestamp (ns, */
	uint64_t ts_last;	/*        CLOCK_MONOTONIC of the writing boot) */
	uint32_t reserved;
	uint32_t hdr_crc;	/* crc32 of the bytes above */
} __attribute__((packed));

_Static_assert(sizeof(struct store_chunk_hdr) == 48, "chunk header layout");

/* Chunks larger than this are corrupt: a block holds at most
 * STORE_BLOCK_MAX raw bytes, compression adds little. */
#define STORE_BLOCK_MAX		(4u << 20)
#define STORE_CHUNK_MAX		(STORE_BLOCK_MAX + (STORE_BLOCK_MAX >> 4) + 4096)

/* A block's raw payload is its columns in this order, each a varint byte
 * count and the bytes. */
enum store_column {
	STORE_COL_TS,		/* zigzag varint: ts - previous ts (first: - 0) */
	STORE_COL_EVENT,	/* varint: file-local event id */
	STORE_COL_CPU,		/* varint */
	STORE_COL_TASK,		/* varint: index into STORE_COL_TASKS */
	STORE_COL_FLAGS,	/* varint: trace_rec_hdr.flags */
	STORE_COL_LEN,		/* varint: record bytes */
	STORE_COL_DATA,		/* record bytes, XOR the previous record of its event */
	STORE_COL_TASKS,	/* the block's tasks: varint pid, tid, comm length, comm */
	/* Since Unit= (within version 1; a file from before has neither, and
	 * an older reader ignores them): */
	STORE_COL_TASK_CGROUPS,	/* per task of TASKS: varint index into CGROUPS */
	STORE_COL_CGROUPS,	/* the block's cgroups: varint id, varint path length, path
				 * (from the cgroup2 root; length 0: not known) */
	/* Added in version 1 (readers before it stop at TASKS): the ring
	 * buffer's losses noticed while the block was open, each varint cpu,
	 * varint timestamp (ns), varint count; in the order they were noticed. */
	STORE_COL_LOST,
	STORE_N_COLUMNS,
};

#endif
