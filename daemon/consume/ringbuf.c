// SPDX-License-Identifier: GPL-2.0
/* Reading the BPF ring buffer: libbpf's consumer loop, less one store.
 *
 * libbpf's ring_buffer__consume() publishes the consumer position after
 * every record. The class program reads that position on every event (the
 * reserve checks for room, and the wakeup decision asks how much is
 * waiting), so while the daemon drains, the cache line holding it moves
 * between the two CPUs once per record. Here it is published once per
 * RINGBUF_RELEASE_BYTES and at the end of each drain: the space is handed
 * back a little later, which an 8 MiB ring does not notice. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "ringbuf.h"

/* A 64 KiB step: a few hundred records, under 1% of the default ring. */
#define RINGBUF_RELEASE_BYTES (64u << 10)

struct rb_reader {
	unsigned long *consumer_pos;	/* our page, read-write */
	const unsigned long *producer_pos;
	const uint8_t *data;		/* mapped twice in a row: no wrap-around */
	unsigned long mask;
	size_t page_size, data_size;
};

int rb_reader_new(struct rb_reader **ret, int map_fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	struct rb_reader *r;
	void *p;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) < 0)
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->page_size = sysconf(_SC_PAGESIZE);
	r->data_size = info.max_entries;
	r->mask = info.max_entries - 1;
	p = mmap(NULL, r->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r->consumer_pos = p;
	/* The producer page, then the data pages twice over. */
	p = mmap(NULL, r->page_size + 2 * r->data_size, PROT_READ, MAP_SHARED, map_fd,
		 r->page_size);
	if (p == MAP_FAILED)
		goto fail;
	r->producer_pos = p;
	r->data = (const uint8_t *)p + r->page_size;
	*ret = r;
	return 0;
fail:
	len = errno;
	rb_reader_free(r);
	return -(int)len;
}

void rb_reader_free(struct rb_reader *r)
{
	if (!r)
		return;
	if (r->consumer_pos)
		munmap(r->consumer_pos, r->page_size);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->page_size + 2 * r->data_size);
	free(r);
}

/* The clock is read once per this many records: a vDSO call is ~20-50 ns,
 * a record ~1 us to render, so the check costs under 1%. */
#define RINGBUF_CLOCK_EVERY 32

unsigned long rb_reader_written(const struct rb_reader *r)
{
	return __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
}

void rb_reader_fill(const struct rb_reader *r, size_t *used, size_t *size)
{
	*used = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE) -
		__atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED);
	*size = r->data_size;
}

bool rb_reader_passed(const struct rb_reader *r, unsigned long mark)
{
	/* Positions only grow (64-bit: they never wrap). */
	return __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED) >= mark;
}

int rb_reader_consume(struct rb_reader *r, rb_record_fn fn, void *ctx, size_t budget,
		      uint64_t max_usec)
{
	uint64_t deadline = max_usec ? now_usec(CLOCK_MONOTONIC) + max_usec : 0;
	unsigned long cons = __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED);
	unsigned long released = cons, prod;
	size_t n = 0;
	int more = 0;

	while (!more && cons < (prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE))) {
		while (cons < prod) {
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & r->mask));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

			if (len & BPF_RINGBUF_BUSY_BIT)	/* reserved, not committed yet */
				goto out;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				fn(ctx, (void *)(hdr + 2), len & ~BPF_RINGBUF_DISCARD_BIT);
				n++;
			}
			len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
			if (cons - released >= RINGBUF_RELEASE_BYTES) {
				__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
				released = cons;
			}
			if (n >= budget || (deadline && n % RINGBUF_CLOCK_EVERY == 0 &&
					    now_usec(CLOCK_MONOTONIC) >= deadline)) {
				more = 1;
				break;
			}
		}
	}
out:
	if (cons != released)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return more;
}
