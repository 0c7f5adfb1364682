/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's reader of the BPF ring buffer (daemon/ringbuf.c). */
#ifndef TRACERD_RINGBUF_H
#define TRACERD_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rb_reader;
typedef int (*rb_record_fn)(void *ctx, void *data, size_t size);

/* Maps the ring buffer map map_fd; returns -errno. */
int rb_reader_new(struct rb_reader **ret, int map_fd);
void rb_reader_free(struct rb_reader *r);
/* Hands every committed record to fn, at most budget of them, and stops
 * once max_usec (0: no limit) went by; returns 1 if it stopped at either
 * (more may wait), else 0. */
int rb_reader_consume(struct rb_reader *r, rb_record_fn fn, void *ctx, size_t budget,
		      uint64_t max_usec);
/* Where the records written so far end: a mark for rb_reader_passed(). */
unsigned long rb_reader_written(const struct rb_reader *r);
/* Bytes written and not read yet, of size. */
void rb_reader_fill(const struct rb_reader *r, size_t *used, size_t *size);
/* Whether every record that ends at or before mark was handed over. */
bool rb_reader_passed(const struct rb_reader *r, unsigned long mark);

#endif
