/* SPDX-License-Identifier: GPL-2.0 */
/* The filter interpreter: runs an event's filter bytecode (include/
 * tracerd_record.h) over the record copied into the scratch buffer. The
 * boolean stack is a bit field, so the verifier sees no indexed stack. */
#ifndef TRACERD_FILTER_BPF_H
#define TRACERD_FILTER_BPF_H

static __always_inline __s64 load_field(const __u8 *rec, const struct filter_insn *in)
{
	__u32 off = in->off & (TRACERD_MAX_RECORD - 1);

	return (__s64)tracerd_load(rec + off, in->size, in->is_signed);
}

static __always_inline bool cmp_num(const struct filter_insn *in, __s64 v)
{
	__s64 imm = (__s64)in->imm;

	switch (in->cmp) {
	case FCMP_EQ: return v == imm;
	case FCMP_NE: return v != imm;
	case FCMP_BAND: return (v & imm) != 0;
	case FCMP_BALL: return (v & imm) == imm;
	}
	if (in->is_signed) {
		switch (in->cmp) {
		case FCMP_LT: return v < imm;
		case FCMP_LE: return v <= imm;
		case FCMP_GT: return v > imm;
		case FCMP_GE: return v >= imm;
		}
	} else {
		switch (in->cmp) {
		case FCMP_LT: return (__u64)v < (__u64)imm;
		case FCMP_LE: return (__u64)v <= (__u64)imm;
		case FCMP_GT: return (__u64)v > (__u64)imm;
		case FCMP_GE: return (__u64)v >= (__u64)imm;
		}
	}
	return false;
}

static __always_inline __s64 load_num(const __u8 *rec, const struct filter_insn *in,
				      __u64 pid_tgid)
{
	switch (in->src) {
	case SRC_PID: return (__u32)pid_tgid;
	case SRC_TGID: return pid_tgid >> 32;
	case SRC_CPU: return bpf_get_smp_processor_id();
	default: return load_field(rec, in);
	}
}

/* What the filter keeps in map memory: values the verifier must not track
 * precisely, or it would explore every iteration of the loops below. */
struct filter_scratch {
	__u64 stack;		/* the boolean stack, a bit per entry */
	__u32 pc;		/* the next instruction */
	__u32 p, s;		/* glob: position in pattern and in string */
	__u32 bp, bs;		/* glob: where to retry after the last '*' */
	__u32 base, n;		/* the string: offset in the record, bytes */
	__u8 k;			/* which pattern, index into desc->strs */
	__u8 literal;		/* == and !=: no metacharacters */
	__u8 from_comm;		/* the string is comm[], not in the record */
	__u8 star;		/* a '*' was seen: bp and bs are valid */
	__u8 cls, inv, hit, first;	/* inside a [...] class */
	__u8 res;
	char comm[TRACERD_COMM_LEN];
};

#define FILTER_REC_MASK (2 * TRACERD_MAX_RECORD - 1)
#define FILTER_STR_MASK (TRACERD_FILTER_STR - 1)

struct glob_run {
	const struct event_desc *d;
	const __u8 *rec;
	struct filter_scratch *fs;
};

static __always_inline __u8 str_byte(const struct glob_run *g, __u32 i)
{
	struct filter_scratch *fs = g->fs;

	if (i >= fs->n)
		return 0;
	if (fs->from_comm)
		return fs->comm[i & (TRACERD_COMM_LEN - 1)];
	return g->rec[(fs->base + i) & FILTER_REC_MASK];
}

/* After a mismatch: retry from the last '*', one character later (the
 * kernel's lib/glob.c never needs more than one level of backtracking). */
static __always_inline long glob_backtrack(struct filter_scratch *fs, __u8 c)
{
	if (!c || !fs->star) {
		fs->res = 0;
		return 1;
	}
	fs->p = fs->bp;
	fs->s = ++fs->bs;
	return 0;
}

/* One span of a [...] class per step, so a step stays a handful of insns. */
static __always_inline long glob_class_step(const struct glob_run *g, const char *pat, __u8 c)
{
	struct filter_scratch *fs = g->fs;
	__u32 p = fs->p;
	__u8 a = pat[p & FILTER_STR_MASK], b = a;

	if (a == ']' && !fs->first) {
		fs->cls = 0;
		fs->p = p + 1;
		if (!c || fs->hit == fs->inv)	/* [!x] does not match the end */
			return glob_backtrack(fs, c);
		fs->s++;
		return 0;
	}
	fs->first = 0;
	if (pat[(p + 1) & FILTER_STR_MASK] == '-' && pat[(p + 2) & FILTER_STR_MASK] != ']') {
		b = pat[(p + 2) & FILTER_STR_MASK];
		p += 2;
	}
	fs->p = p + 1;
	if (a <= c && c <= b)
		fs->hit = 1;
	return 0;
}

/* One step of lib/glob.c's glob_match(); the compiler has checked the
 * pattern (classes closed, no trailing backslash). */
static long glob_step(__u32 i, void *arg)
{
	const struct glob_run *g = arg;
	struct filter_scratch *fs = g->fs;
	const char *pat = g->d->strs[fs->k & (TRACERD_FILTER_STRS - 1)];
	__u8 c = str_byte(g, fs->s), d;
	__u32 p;

	(void)i;
	if (fs->cls)
		return glob_class_step(g, pat, c);
	p = fs->p;
	d = pat[p & FILTER_STR_MASK];
	fs->p = ++p;
	if (!fs->literal) {
		switch (d) {
		case '?':
			if (!c)
				return glob_backtrack(fs, c);
			fs->s++;
			return 0;
		case '*':
			if (!pat[p & FILTER_STR_MASK]) {
				fs->res = 1;
				return 1;
			}
			fs->star = 1;
			fs->bp = p;
			fs->bs = fs->s;
			return 0;
		case '[':
			fs->inv = pat[p & FILTER_STR_MASK] == '!';
			fs->p = p + fs->inv;
			fs->cls = fs->first = 1;
			fs->hit = 0;
			return 0;
		case '\\':
			d = pat[p & FILTER_STR_MASK];
			fs->p = p + 1;
			break;
		}
	}
	if (c == d) {
		if (!d) {
			fs->res = 1;
			return 1;
		}
		fs->s++;
		return 0;
	}
	return glob_backtrack(fs, c);
}

/* Where the string of a FOP_STRCMP lies; false when it cannot be read. */
static __always_inline bool str_locate(const __u8 *rec, __u32 len, const struct filter_insn *in,
				       struct filter_scratch *fs)
{
	__u32 off = in->off & (TRACERD_MAX_RECORD - 1), loc;

	fs->from_comm = in->src == SRC_COMM;
	switch (in->src) {
	case SRC_COMM:
		bpf_get_current_comm(fs->comm, sizeof(fs->comm));
		fs->base = 0;
		fs->n = TRACERD_COMM_LEN;
		return true;
	case SRC_DATA_LOC:
	case SRC_REL_LOC:
	case SRC_USER_STR:
		loc = *(__u32 *)(rec + off);
		fs->base = tracerd_loc_off(loc, off, in->src == SRC_REL_LOC);
		fs->n = tracerd_loc_len(loc);
		/* A user string not read (unreadable, NULL) is no string. */
		if (in->src == SRC_USER_STR && (!fs->n || off + 4 > len))
			return false;
		/* A truncated record: compare what was copied. */
		if (fs->base >= len)
			fs->n = 0;
		else if (fs->n > len - fs->base)
			fs->n = len - fs->base;
		return true;
	default:
		fs->base = off;
		fs->n = in->imm;
		return true;
	}
}

static __always_inline bool filter_strcmp(const __u8 *rec, __u32 len,
					  const struct event_desc *d,
					  const struct filter_insn *in,
					  struct filter_scratch *fs)
{
	struct glob_run g = { .d = d, .rec = rec, .fs = fs };
	bool neg = in->cmp == FCMP_NE || in->cmp == FCMP_NGLOB;
	__u32 steps;

	/* No string to compare: == and ~ are false, != true. */
	if (!str_locate(rec, len, in, fs))
		return neg;
	fs->k = in->str;
	fs->literal = in->cmp == FCMP_EQ || in->cmp == FCMP_NE;
	fs->p = fs->s = fs->bp = fs->bs = 0;
	fs->star = fs->cls = fs->res = 0;
	/* Each step moves on in the pattern or the string; a backtrack
	 * restarts the pattern one character further: pattern x string. */
	steps = (TRACERD_FILTER_STR + 1) * (fs->n + 2);
	bpf_loop(steps, glob_step, &g, 0);
	return fs->res ^ neg;
}

struct filter_run {
	const struct event_desc *d;
	const __u8 *rec;
	__u32 len;
	__u64 pid_tgid;
	struct filter_scratch *fs;	/* in map memory, so the verifier does not
					 * track its every value across steps */
};

/* One instruction per bpf_loop() step: the verifier checks the step once,
 * rather than every path through an unrolled loop. A step always moves the
 * pc forward, so n_insns steps are enough. */
static long filter_step(__u32 i, void *arg)
{
	struct filter_run *r = arg;
	const struct filter_insn *in;
	__u64 a, b, st = r->fs->stack;
	__u32 pc = r->fs->pc;

	(void)i;
	if (pc >= r->d->n_insns || pc >= TRACERD_FILTER_INSNS)
		return 1;
	in = &r->d->insns[pc];
	r->fs->pc = pc + 1;
	switch (in->op) {
	case FOP_CMP:
		st = st << 1 | cmp_num(in, load_num(r->rec, in, r->pid_tgid));
		break;
	case FOP_STRCMP:
		st = st << 1 | filter_strcmp(r->rec, r->len, r->d, in, r->fs);
		break;
	case FOP_TRUE:
		st = st << 1 | 1;
		break;
	case FOP_NOT:
		st ^= 1;
		break;
	case FOP_AND:
	case FOP_OR:
		a = st & 1;
		b = (st >> 1) & 1;
		st = (st >> 2) << 1 | (in->op == FOP_AND ? (a & b) : (a | b));
		break;
	case FOP_ANDSC:
	case FOP_ORSC:
		if ((st & 1) == (in->op == FOP_ORSC))
			r->fs->pc = pc + 1 + (__u32)in->imm;	/* decided: skip the right side */
		else
			st >>= 1;	/* the right side decides */
		break;
	default:
		return 1;
	}
	r->fs->stack = st;
	return 0;
}

/* One compare of a chain (desc->filter_chain) per step: compare i + 1 is
 * insn 2i + 2, as the first ran inline. The first that equals the chain's
 * absorbing value (true for ||, false for &&) decides. */
static long chain_step(__u32 i, void *arg)
{
	struct filter_run *r = arg;
	const struct filter_insn *in = &r->d->insns[(2 * i + 2) & (TRACERD_FILTER_INSNS - 1)];
	bool any = r->d->filter_chain == FOP_ORSC;

	if (cmp_num(in, load_num(r->rec, in, r->pid_tgid)) != any)
		return 0;
	r->fs->stack = any;
	return 1;
}

/* Not inlined into filter_match(): clang would merge its bpf_loop() call
 * with the interpreter's into one call whose callback depends on the path,
 * and the verifier inlines bpf_loop() only where the callback is always the
 * same: otherwise every step is an indirect call (measured: 16 ||-ed
 * compares rejecting took ~470 ns inside the program, ~185 ns inlined). */
static __attribute__((noinline)) bool chain_match(const struct event_desc *d, const __u8 *rec,
						  __u64 pid_tgid, struct filter_scratch *fs)
{
	struct filter_run r = { .d = d, .rec = rec, .pid_tgid = pid_tgid, .fs = fs };
	__u32 n = d->n_insns;

	if (n > TRACERD_FILTER_INSNS)
		n = TRACERD_FILTER_INSNS;
	fs->stack = d->filter_chain != FOP_ORSC;
	bpf_loop(n / 2, chain_step, &r, 0);
	return fs->stack & 1;
}

/* Returns true when the record passes. */
static __always_inline bool filter_match(const struct event_desc *d, const __u8 *rec,
					 __u32 len, __u64 pid_tgid, struct filter_scratch *fs)
{
	struct filter_run r = { .d = d, .rec = rec, .len = len, .pid_tgid = pid_tgid,
				.fs = fs };
	const struct filter_insn *in = &d->insns[0], *next = &d->insns[1];
	__u32 n = d->n_insns;
	bool v;

	if (n > TRACERD_FILTER_INSNS)
		n = TRACERD_FILTER_INSNS;
	fs->stack = 0;
	fs->pc = 0;
	/* The first compare runs inline, without bpf_loop(): it alone decides
	 * a single compare, and an &&/|| chain that it short-circuits to the
	 * end of the filter ("ret != 0 && ..." rejecting). Otherwise the
	 * interpreter goes on from the state filter_step() would have left. */
	if (n >= 1 && in->op == FOP_CMP) {
		v = cmp_num(in, load_num(rec, in, pid_tgid));
		if (n == 1)
			return v;
		if (next->op == FOP_ANDSC || next->op == FOP_ORSC) {
			if (v == (next->op == FOP_ORSC)) {	/* decided: skip the right side */
				/* (a chain's absorbing value decides it all) */
				if (d->filter_chain || 2 + next->imm >= n)
					return v;
				fs->stack = v;
				fs->pc = 2 + (__u32)next->imm;
			} else {
				fs->pc = 2;	/* popped: the right side decides */
			}
		}
		/* Undecided by the first compare: the chain's other compares
		 * decide, one bpf_loop() step each instead of two (compare,
		 * skip) through the stack machine. */
		if (d->filter_chain && fs->pc == 2)
			return chain_match(d, rec, pid_tgid, fs);
	}
	bpf_loop(n, filter_step, &r, 0);
	return fs->stack & 1;
}

#endif
