/* SPDX-License-Identifier: GPL-2.0 */
/* An ELF file's function symbols, for naming user stack frames: read once
 * per file with libelf, looked up by file offset (what a mapping's IP
 * gives: ip - start + pgoff). */
#ifndef TRACERD_USTACK_ELF_H
#define TRACERD_USTACK_ELF_H

#include <stdint.h>
#include <sys/types.h>

struct ustack_elf;

/* Reads fd's PT_LOAD segments and its .symtab, else its .dynsym (only
 * functions). A file without either, or not ELF, still gives an object
 * that names nothing: it is remembered as such. -ENOMEM only. */
int ustack_elf_load(int fd, struct ustack_elf **ret);
struct ustack_elf *ustack_elf_ref(struct ustack_elf *e);
void ustack_elf_unref(struct ustack_elf *e);

/* The function that holds file offset off, and how far into it: NULL when
 * no function symbol covers it. */
const char *ustack_elf_symbol(const struct ustack_elf *e, uint64_t off, uint64_t *sym_off);

#endif
