/* SPDX-License-Identifier: GPL-2.0 */
/* A record's user frames resolved to text, kept with the record. User
 * frames name files and symbols of a process that may be gone a moment
 * later, so the consumer resolves them once, as it reads the record
 * (render/ustack.c), and every output takes that text: stdout, the
 * journal, and the store, which keeps it in the record so that --read, on
 * this machine or another, prints what was resolved live. The record's
 * bytes then end in
 *	the record proper, its frames and their trace_stack_tail (as BPF
 *	wrote them, tracerd_record.h), the text (a line per frame, '\n'
 *	between), and the text's length (__u32, unaligned)
 * and its header carries TRACERD_REC_USTACK_TEXT. */
#ifndef TRACERD_USTACK_TEXT_H
#define TRACERD_USTACK_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "render/ustack.h"
#include "strbuf.h"

/* Appends rec (len bytes, its stacks included), then the text of its
 * n_user user frames (at frames: __u64 each, unaligned) and the text's
 * length, to out, so that the whole stays within max bytes: frames past
 * that get no line (ustack_text_line() says so, the renderer marks them).
 * Returns how many frames have a line; -E2BIG when not even the record
 * and the length fit. */
int ustack_text_attach(struct ustack_syms *s, pid_t tgid, const uint8_t *rec, size_t len,
		       const uint8_t *frames, unsigned n_user, size_t max, struct strbuf *out);

/* A record flagged TRACERD_REC_USTACK_TEXT: its length without the text,
 * and the text. False when the trailer does not fit (a damaged record). */
bool ustack_text_split(const uint8_t *rec, size_t len, size_t *rest, const char **text,
		       size_t *text_len);

/* Line i of the text (NULL when the text has fewer: the frame was not
 * resolved, the record was full). */
const char *ustack_text_line(const char *text, size_t text_len, unsigned i, size_t *n);

#endif
