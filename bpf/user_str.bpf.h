/* SPDX-License-Identifier: GPL-2.0 */
/* A syscall's user string arguments (filename, pathname, ...), read from the
 * calling task's memory and appended to the record after its fixed part, in
 * the layout tracerd_ustr_words() describes. Called only for a slot whose
 * descriptor lists such arguments (ustr_off[0] != 0). */
#ifndef TRACERD_USER_STR_BPF_H
#define TRACERD_USER_STR_BPF_H

#define USTR_REC_MASK (TRACERD_MAX_RECORD - 1)

/* Reads the strings of the record in rec, whose fixed part ends at end;
 * returns the record's new end. Faults are not retried: a tracepoint
 * program may not sleep, so a string in a page not present is counted in
 * ustr_unreadable and marked in its word (EFAULT), never left empty. */
static __attribute__((noinline)) __u64 read_user_strs(const struct event_desc *d,
						      struct event_stats *st, __u8 *rec,
						      __u64 end)
{
	__u64 words = tracerd_ustr_words(end), pos;
	__u32 i, n = 0;

	for (i = 0; i < TRACERD_MAX_USTR; i++)
		if (d->ustr_off[i])
			n = i + 1;
	pos = words + 4 * n;
	for (i = 0; i < TRACERD_MAX_USTR; i++) {
		__u64 ptr, word = 0;
		long r;

		if (!d->ustr_off[i])
			break;
		ptr = *(__u64 *)(rec + (d->ustr_off[i] & USTR_REC_MASK));
		if (ptr && pos + TRACERD_USTR_LEN > TRACERD_MAX_RECORD) {
			word = 7;	/* E2BIG: no room in the record */
		} else if (ptr) {
			r = bpf_probe_read_user_str(rec + (pos & USTR_REC_MASK), TRACERD_USTR_LEN,
						    (const void *)ptr);
			if (r > 0) {
				word = (__u64)r << 16 | pos;
				pos += r;
			} else {
				word = (__u64)-r & 0xffff;
			}
		}
		if (ptr && !(word >> 16))
			st->ustr_unreadable++;
		*(__u32 *)(rec + ((words + 4 * i) & USTR_REC_MASK)) = word;
	}
	return pos;
}

#endif
