// SPDX-License-Identifier: GPL-2.0
/* An ELF file's function symbols by file offset: see ustack_elf.h.
 *
 * A frame's IP gives a file offset (ip - mapping start + the mapping's
 * pgoff). The PT_LOAD segment whose file bytes hold that offset turns it
 * into the address the symbol table speaks of: off - p_offset + p_vaddr.
 * One rule for all: PIE executables and shared objects (p_vaddr from 0,
 * loaded anywhere) and fixed-address executables (p_vaddr absolute) alike,
 * and with no assumption that the text is the first segment. */
#include <gelf.h>
#include <libelf.h>
#include "render/ustack_elf.h"
#include "util.h"

struct load_seg {
	uint64_t offset, filesz, vaddr;
};

struct elf_sym {
	uint64_t addr, size;
	uint32_t name;		/* into names */
	uint8_t rank;		/* among aliases: global 2, local 1, weak 0 */
};

struct ustack_elf {
	unsigned refs;
	struct load_seg *segs;
	size_t n_segs, cap_segs;
	struct elf_sym *syms;
	size_t n_syms, cap_syms;
	char *names;
	size_t names_len, names_cap;
};

static int add_name(struct ustack_elf *e, const char *s, uint32_t *at)
{
	size_t n = strlen(s) + 1;

	while (e->names_len + n > e->names_cap) {
		size_t cap = e->names_cap ? e->names_cap * 2 : 4096;
		char *p = realloc(e->names, cap);

		if (!p)
			return -ENOMEM;
		e->names = p;
		e->names_cap = cap;
	}
	if (e->names_len + n > UINT32_MAX)
		return -E2BIG;
	memcpy(e->names + e->names_len, s, n);
	*at = e->names_len;
	e->names_len += n;
	return 0;
}

static int read_segments(struct ustack_elf *e, Elf *elf)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (GROW(e->segs, e->cap_segs, e->n_segs) < 0)
			return -ENOMEM;
		e->segs[e->n_segs++] = (struct load_seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	return 0;
}

/* The symbol table of that type (SHT_SYMTAB or SHT_DYNSYM), or NULL. */
static Elf_Scn *find_table(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

static int read_symbols(struct ustack_elf *e, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_table(elf, SHT_SYMTAB, &sh);
	Elf_Data *d;
	GElf_Sym s;
	int r;

	if (!scn)
		scn = find_table(elf, SHT_DYNSYM, &sh);
	if (!scn || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *name;
		int type, bind;

		if (!gelf_getsym(d, i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (GROW(e->syms, e->cap_syms, e->n_syms) < 0)
			return -ENOMEM;
		r = add_name(e, name, &e->syms[e->n_syms].name);
		if (r < 0)
			return r;
		e->syms[e->n_syms].addr = s.st_value;
		e->syms[e->n_syms].size = s.st_size;
		e->syms[e->n_syms].rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 0 : 1;
		e->n_syms++;
	}
	return 0;
}

static size_t underscores(const char *s)
{
	return strspn(s, "_");
}

/* By address, then size; among aliases the last one is the widest and, of
 * those, the one perf's choose_best_symbol() picks: not weak, global,
 * fewer leading underscores, the longer name. Lookups take the last. */
static int cmp_sym(const void *a, const void *b, void *names)
{
	const struct elf_sym *x = a, *y = b;
	const char *nx = (const char *)names + x->name, *ny = (const char *)names + y->name;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->rank != y->rank)
		return (int)x->rank - (int)y->rank;
	if (underscores(nx) != underscores(ny))
		return underscores(nx) > underscores(ny) ? -1 : 1;
	if (strlen(nx) != strlen(ny))
		return strlen(nx) < strlen(ny) ? -1 : 1;
	return strcmp(ny, nx);
}

int ustack_elf_load(int fd, struct ustack_elf **ret)
{
	struct ustack_elf *e = calloc(1, sizeof(*e));
	Elf *elf;
	int r = 0;

	if (!e)
		return -ENOMEM;
	e->refs = 1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		r = read_segments(e, elf);
		if (r >= 0)
			r = read_symbols(e, elf);
	}
	elf_end(elf);
	if (r < 0) {
		ustack_elf_unref(e);
		return r;
	}
	if (e->n_syms > 1)
		qsort_r(e->syms, e->n_syms, sizeof(*e->syms), cmp_sym, e->names);
	*ret = e;
	return 0;
}

struct ustack_elf *ustack_elf_ref(struct ustack_elf *e)
{
	e->refs++;
	return e;
}

void ustack_elf_unref(struct ustack_elf *e)
{
	if (!e || --e->refs)
		return;
	free(e->segs);
	free(e->syms);
	free(e->names);
	free(e);
}

static bool to_vaddr(const struct ustack_elf *e, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->n_segs; i++)
		if (off >= e->segs[i].offset && off - e->segs[i].offset < e->segs[i].filesz) {
			*vaddr = off - e->segs[i].offset + e->segs[i].vaddr;
			return true;
		}
	return false;
}

/* The symbol that holds v: the last one starting at or below it, or an
 * alias or enclosing symbol just before it. A symbol of size 0 holds its
 * own address only. */
static const struct elf_sym *find_sym(const struct ustack_elf *e, uint64_t v)
{
	size_t lo = 0, hi = e->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, seen = 0; i-- > 0 && seen < 8; seen++) {
		const struct elf_sym *s = &e->syms[i];

		if (v - s->addr < s->size || v == s->addr)
			return s;
	}
	return NULL;
}

const char *ustack_elf_symbol(const struct ustack_elf *e, uint64_t off, uint64_t *sym_off)
{
	const struct elf_sym *s;
	uint64_t v;

	if (!to_vaddr(e, off, &v))
		return NULL;
	s = find_sym(e, v);
	/* A return address just past a call that ends its function (a
	 * noreturn callee) belongs to the caller. */
	if (!s && v)
		s = find_sym(e, v - 1);
	if (!s)
		return NULL;
	*sym_off = v - s->addr;
	return e->names + s->name;
}
