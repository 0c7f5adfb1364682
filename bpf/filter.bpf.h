/* SPDX-License-Identifier: GPL-2.0 */
/* The filter interpreter: runs an event's filter bytecode (include/
 * tracerd_record.h) over the record copied into the scratch buffer. The
 * boolean stack is a bit field, so the verifier sees no indexed stack. */
#ifndef TRACERD_FILTER_BPF_H
#define TRACERD_FILTER_BPF_H

static __always_inline __s64 load_field(const __u8 *rec, const struct filter_insn *in)
{
	__u32 off = in->off & (TRACERD_MAX_RECORD - 1);

	switch (in->size) {
	case 1: return in->is_signed ? (__s64)*(__s8 *)(rec + off) : *(__u8 *)(rec + off);
	case 2: return in->is_signed ? (__s64)*(__s16 *)(rec + off) : *(__u16 *)(rec + off);
	case 4: return in->is_signed ? (__s64)*(__s32 *)(rec + off) : *(__u32 *)(rec + off);
	default: return *(__s64 *)(rec + off);
	}
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
	case FSRC_PID: return (__u32)pid_tgid;
	case FSRC_TGID: return pid_tgid >> 32;
	case FSRC_CPU: return bpf_get_smp_processor_id();
	default: return load_field(rec, in);
	}
}

#ifndef TRACERD_HAVE_STRCMP
/* String compares come with the filter compiler; until then a string
 * instruction never matches, and the compiler refuses to emit one. */
static __always_inline bool filter_strcmp(const __u8 *rec, __u32 len,
					  const struct event_desc *d,
					  const struct filter_insn *in)
{
	(void)rec; (void)len; (void)d; (void)in;
	return false;
}
#endif

struct filter_run {
	const struct event_desc *d;
	const __u8 *rec;
	__u32 len;
	__u64 pid_tgid;
	__u64 *stack;	/* in map memory, so the verifier does not track its
			 * every value across steps */
};

/* One instruction per bpf_loop() step: the verifier checks the step once,
 * rather than every path through an unrolled loop. */
static long filter_step(__u32 i, void *arg)
{
	struct filter_run *r = arg;
	const struct filter_insn *in;
	__u64 a, b, st = *r->stack;

	if (i >= TRACERD_FILTER_INSNS)
		return 1;
	in = &r->d->insns[i];
	switch (in->op) {
	case FOP_CMP:
		st = st << 1 | cmp_num(in, load_num(r->rec, in, r->pid_tgid));
		break;
	case FOP_STRCMP:
		st = st << 1 | filter_strcmp(r->rec, r->len, r->d, in);
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
	default:
		return 1;
	}
	*r->stack = st;
	return 0;
}

/* Returns true when the record passes. */
static __always_inline bool filter_match(const struct event_desc *d, const __u8 *rec,
					 __u32 len, __u64 pid_tgid, __u64 *stack)
{
	struct filter_run r = { .d = d, .rec = rec, .len = len, .pid_tgid = pid_tgid,
				.stack = stack };
	__u32 n = d->n_insns;

	if (n > TRACERD_FILTER_INSNS)
		n = TRACERD_FILTER_INSNS;
	*stack = 0;
	bpf_loop(n, filter_step, &r, 0);
	return *stack & 1;
}

#endif
