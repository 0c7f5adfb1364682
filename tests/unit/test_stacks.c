// SPDX-License-Identifier: GPL-2.0
/* Stack traces as records carry them (tracerd_record.h): the split into
 * the record proper and its frames, the skip rule (__traceiter_<event>
 * dropped), the kernel trace's blocks with their marks for a cut or lost
 * walk, the journal's fields, and a user stack ending at its first zero.
 * Symbols come from a table here (as a store file's KSYMS give them), so
 * no kernel is needed; nor for where the class program walks a stack from,
 * read from its object file. */
#include <gelf.h>
#include <stdlib.h>
#include "kernel-events/stack_skip.h"
#include "render/render_stack.h"
#include "tracerd.skel.h"
#include "test.h"

static const struct { uint64_t addr; const char *text; } syms[] = {
	{ 0xffffffff81000010, "__traceiter_fcntl_setlk+0x3a/0x60" },
	{ 0xffffffff81000100, "fcntl_setlk+0x2b4/0x3f0" },
	{ 0xffffffff81000200, "do_fcntl+0x466/0x7c0" },
	{ 0xffffffff81000300, "" },	/* no symbol: a hashed pointer */
};

static const char *lookup(const void *ctx, uint64_t addr)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (syms[i].addr == addr)
			return syms[i].text;
	return "";
}

/* A record of 12 bytes, then frames and the tail. */
static size_t build(uint8_t *buf, const uint64_t *k, unsigned nk, const uint64_t *u, unsigned nu,
		    struct trace_stack_tail t)
{
	size_t n = 12;

	memset(buf, 0xab, n);
	memcpy(buf + n, k, 8 * nk);
	n += 8 * nk;
	if (nu)
		memcpy(buf + n, u, 8 * nu);
	n += 8 * nu;
	t.n_kern = nk;
	t.n_user = nu;
	memcpy(buf + n, &t, sizeof(t));
	return n + sizeof(t);
}

static const uint64_t kframes[] = { 0xffffffff81000010, 0xffffffff81000100, 0xffffffff81000200,
				    0xffffffff81000300 };

static void split_and_text(void)
{
	uint8_t buf[256];
	uint64_t user[] = { 0x7f0000001000, 0x401000, 0, 0x1234 };
	size_t len = build(buf, kframes, 4, user, 4,
			   (struct trace_stack_tail){ .kern = TRACERD_STACK_WHOLE,
						      .user = TRACERD_STACK_CUT });
	struct render_opts o = { .raw_pointers = true };
	struct rec_stacks s;
	struct strbuf out = { 0 };

	EXPECT(rec_stacks_split(0, buf, len, &s) == len && s.tail.kern == TRACERD_STACK_NONE,
	       "no flag: the whole record, no stacks");
	EXPECT(rec_stacks_split(TRACERD_REC_STACKS, buf, len, &s) == 12, "the record proper is 12 bytes");
	EXPECT(rec_stacks_split(TRACERD_REC_STACKS, buf, 4, &s) == 4 && !s.frames,
	       "a tail that does not fit: taken whole");
	rec_stacks_split(TRACERD_REC_STACKS, buf, len, &s);
	s.ksym = lookup;
	render_stacks_text(&s, &o, "P: ", 3, &out);
	EXPECT_STREQ(sb_str(&out),
		     "P: <stack trace>\n"
		     " => fcntl_setlk\n"
		     " => do_fcntl\n"
		     " => ffffffff81000300\n"	/* RawPointers=yes: as %p prints it */
		     "P: <user stack trace>\n"
		     /* not resolved by a consumer (render/ustack_text.h) */
		     " => <00007f0000001000> (not resolved)\n"
		     " => <0000000000401000> (not resolved)\n"
		     " => ... (cut at 4 frames)\n");
	sb_free(&out);
}

struct kv {
	char text[1024];
};

static void put_kv(void *ctx, const char *key, const char *value, size_t n)
{
	struct kv *k = ctx;
	size_t l = strlen(k->text);

	snprintf(k->text + l, sizeof(k->text) - l, "%s=%.*s|", key, (int)n, value);
}

static void fields_and_marks(void)
{
	uint8_t buf[256];
	size_t len = build(buf, kframes + 1, 2, NULL, 0,
			   (struct trace_stack_tail){ .kern = TRACERD_STACK_CUT,
						      .user = TRACERD_STACK_LOST, .user_err = 14 });
	struct render_opts o = { 0 };
	struct rec_stacks s;
	struct kv kv = { "" };
	struct strbuf out = { 0 };

	rec_stacks_split(TRACERD_REC_STACKS, buf, len, &s);
	s.ksym = lookup;
	render_stacks_fields(&s, &o, put_kv, &kv);
	EXPECT_STREQ(kv.text, "TRACE_STACK=fcntl_setlk+0x2b4/0x3f0\ndo_fcntl+0x466/0x7c0|"
			      "TRACE_STACK_CUT=1|TRACE_USER_STACK_LOST=EFAULT|");
	render_stacks_text(&s, &o, "", 0, &out);
	EXPECT_STREQ(sb_str(&out), "<stack trace>\n => fcntl_setlk\n => do_fcntl\n"
				   " => ... (cut at 2 frames)\n"
				   "<user stack trace>\n => ... (lost: EFAULT)\n");
	sb_free(&out);
}

/* A frame in no symbol is hashed (%p's 16 digits) unless RawPointers=yes:
 * never the address. */
static void unresolved_frames_are_hashed(void)
{
	uint8_t buf[256];
	size_t len = build(buf, kframes + 3, 1, NULL, 0,
			   (struct trace_stack_tail){ .kern = TRACERD_STACK_WHOLE });
	struct render_opts o = { 0 };
	struct rec_stacks s;
	struct kv kv = { "" };

	rec_stacks_split(TRACERD_REC_STACKS, buf, len, &s);
	s.ksym = lookup;
	render_stacks_fields(&s, &o, put_kv, &kv);
	EXPECT(!strstr(kv.text, "ffffffff81000300") && strlen(kv.text) == strlen("TRACE_STACK=|") + 16,
	       "%s", kv.text);
}

static bool name_of(uint64_t addr, struct strbuf *out, void *ctx)
{
	const char *t = lookup(ctx, addr);

	if (!t || !*t)
		return false;
	sb_put(out, t, strcspn(t, "+"));
	return true;
}

static void the_skip_rule(void)
{
	EXPECT(stack_skip(kframes, 4, name_of, NULL) == 1, "__traceiter_ dropped");
	EXPECT(stack_skip(kframes + 1, 3, name_of, NULL) == 0, "the caller kept");
}

/* The stack helpers' calls in the object's executable sections: in
 * subprograms (.text), in the programs (every other). */
static void stack_calls(Elf *e, unsigned *in_prog, unsigned *in_sub)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	*in_prog = *in_sub = 0;
	if (elf_getshdrstrndx(e, &shstrndx))
		return;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)) || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sizeof(struct bpf_insn); i++) {
			const struct bpf_insn *in = (const struct bpf_insn *)d->d_buf + i;

			if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 &&
			    (in->imm == BPF_FUNC_get_stack || in->imm == BPF_FUNC_get_stackid))
				(*(strcmp(name, ".text") ? in_prog : in_sub))++;
		}
	}
}

/* Stacks are walked from the program's own frame, never from a BPF
 * subprogram: the kernel's unwinder steps through every BPF frame between
 * the helper and the tracepoint by its slow lookup (no ORC entry: the
 * ftrace trampolines' list, then the BPF symbols), ~150 ns a frame on
 * 6.18 (bench/stack-floor.py). A subprogram returns before the walk, so
 * only a call of the helper in one is such a frame. */
static void walks_from_the_program_frame(void)
{
	size_t sz;
	const void *obj = tracerd_bpf__elf_bytes(&sz);
	unsigned in_prog, in_sub;
	Elf *e;

	EXPECT(elf_version(EV_CURRENT) != EV_NONE, "libelf");
	e = elf_memory((char *)obj, sz);
	EXPECT(e, "the object: %s", elf_errmsg(-1));
	if (!e)
		return;
	stack_calls(e, &in_prog, &in_sub);
	elf_end(e);
	EXPECT(in_prog >= 2, "StackTrace= and Aggregate='s walks in the programs: %u", in_prog);
	EXPECT(in_sub == 0, "%u walks from a subprogram", in_sub);
}

int main(void)
{
	RUN(split_and_text);
	RUN(fields_and_marks);
	RUN(unresolved_frames_are_hashed);
	RUN(the_skip_rule);
	RUN(walks_from_the_program_frame);
	return TEST_EXIT();
}
