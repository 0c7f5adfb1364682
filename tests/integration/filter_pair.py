#!/usr/bin/env python3
"""Pairs the records a tracefs instance accepted with those tracerd accepted,
for filter_diff.sh. Each round is one instance and one tracerd with at most
one expression per event, so (round, event) names an expression.

Records are paired by event, cpu, pid and time (pair_inorder, pair_subset):
both sides stamp CLOCK_MONOTONIC (trace_clock mono; bpf_ktime_get_ns).
Only records that both mechanisms saw are compared: an unfiltered instance
and an unfiltered tracerd give the universe (the kernel's ring buffer skips
some records, e.g. switches out of idle on a CPU; BPF skips a tracepoint that
fires while another BPF program runs on the CPU). For every record of the
universe, the kernel's filter and tracerd's must agree.

Records of tracerd's own threads are left out: tracerd does not trace itself.

usage: filter_pair.py SPEC T0_NS T1_NS BASE_KERNEL_TRACE BASE_TRACERD_OUT [EXCLUDE_TIDS_FILE]
SPEC lines: round<TAB>event<TAB>expr<TAB>kernel_expr<TAB>kernel_trace<TAB>tracerd_out<TAB>tracerd_err
"""
import re
import sys
from collections import Counter, defaultdict

TOL_US = 1000
EDGE_US = 2000  # records this close to the window's edges may be seen by one side only
SWAP_US = 50000  # look-alike records this close may pair one off across mechanisms

LINE = re.compile(r"-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): ([^:]+): ")


def event_name(name, rest):
    # The kernel prints syscall events as "sys_openat(...)" / "sys_openat -> 0x3".
    m = re.match(r"sys_(\w+)(\(| -> )", name)
    if m:
        return ("sys_enter_" if m.group(2) == "(" else "sys_exit_") + m.group(1)
    return name


def parse(path):
    """(event) -> list of (ts_us, cpu, pid)"""
    recs = defaultdict(list)
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.search(line)
            if not m:
                # syscall records: "sys_openat(dfd: ...)" has no ": " after the name
                m2 = re.search(r"-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): (sys_\w+(?:\(| -> ))", line)
                if not m2:
                    continue
                pid, cpu, s, us, name = m2.groups()
                text = line[m2.start(5):]
            else:
                pid, cpu, s, us, name = m.groups()
                text = line[m.end():]
            if int(pid) in EXCLUDE:
                continue
            recs[event_name(name, "")].append((int(s) * 1000000 + int(us), int(cpu), int(pid),
                                               text.rstrip("\n")))
    return recs


TEXT_US = 50  # texts with no number in common cost as much as stamps this far apart
NUM = re.compile(r"-?\d+")


def likeness(u, v):
    """Share of the numbers in two texts that both have: the kernel and
    tracerd print most fields alike, if not every one (symbols, flags)."""
    a, b = Counter(NUM.findall(u)), Counter(NUM.findall(v))
    n = max(sum(a.values()), sum(b.values()))
    return sum((a & b).values()) / n if n else 1.0


def pair_inorder(a, b):
    """Pairs the kernel's and tracerd's records of one event: per cpu and pid
    both keep the order the tracepoint fired in, so walk them side by side.
    A record one side lacks must not shift the rest: pair the heads only if
    neither pairs better with the other's next record (closer in time, or
    printing more of the same numbers). Returns {index in a: index in b}."""
    by = defaultdict(lambda: ([], []))
    for side, recs in ((0, a), (1, b)):
        for i, r in enumerate(recs):
            by[(r[1], r[2])][side].append((r[0], i, r[3]))
    cost = lambda u, v: abs(u[0] - v[0]) + TEXT_US * (1 - likeness(u[2], v[2]))
    out = {}
    for x, y in by.values():
        x.sort()
        y.sort()
        i = j = 0
        while i < len(x) and j < len(y):
            c = cost(x[i], y[j])
            if abs(x[i][0] - y[j][0]) > TOL_US:
                if x[i][0] < y[j][0]:
                    i += 1
                else:
                    j += 1
            elif i + 1 < len(x) and cost(x[i + 1], y[j]) < c:
                i += 1
            elif j + 1 < len(y) and cost(x[i], y[j + 1]) < c:
                j += 1
            else:
                out[x[i][1]] = y[j][1]
                i += 1
                j += 1
    return out


def pair_subset(sub, sup):
    """Pairs the records a filter accepted with the unfiltered ones seen by the
    same mechanism, which prints a record the same way: same cpu, pid and text
    (records alike in all three are alike to a filter too), in time order.
    Returns {index in sub: index in sup}."""
    by = defaultdict(lambda: ([], []))
    for side, recs in ((0, sub), (1, sup)):
        for i, r in enumerate(recs):
            by[(r[1], r[2], r[3])][side].append((r[0], i))
    out = {}
    for x, y in by.values():
        x.sort()
        y.sort()
        j = 0
        left = []
        used = set()  # this group's (a group's records are its own)
        for ts, i in x:
            while j < len(y) and y[j][0] < ts - TOL_US:
                j += 1
            if j < len(y) and abs(y[j][0] - ts) <= TOL_US:
                out[i] = y[j][1]
                used.add(y[j][1])
                j += 1
            else:
                left.append((ts, i))
        # Two instances stamp one record separately; under load the stamps
        # can drift past TOL_US. A record left over pairs with the nearest
        # unused record of the same cpu, pid and text.
        for ts, i in left:
            free = [(abs(t - ts), k) for t, k in y if k not in used]
            if free:
                k = min(free)[1]
                out[i] = k
                used.add(k)
    return out


def compare(k0, t0, kacc, tacc, lo, hi, pairs):
    """k0, t0: every record of the event; kacc, tacc: the accepted ones;
    pairs: pair_inorder(k0, t0), the same for every expression of the event."""
    universe = {k: t for k, t in pairs.items() if lo <= k0[k][0] <= hi}
    kin = pair_subset(kacc, k0)
    tin = pair_subset(tacc, t0)
    ksel, tsel = set(kin.values()), set(tin.values())
    inside = lambda r: lo <= r[0] <= hi
    outside = sum(1 for i, r in enumerate(kacc) if inside(r) and i not in kin) + \
        sum(1 for i, r in enumerate(tacc) if inside(r) and i not in tin)
    nk = nt = 0
    differ = []
    for k, t in universe.items():
        a, b = k in ksel, t in tsel
        nk += a
        nt += b
        if a != b:
            differ.append((a, k, t))
    # A differing record paired one off: look-alike records of one cpu and
    # pid (an exiting task's last switches, a loop's identical syscalls) can
    # pair across the two mechanisms one off, or the kernel's filtered twin
    # of one may not pair with its unfiltered record. Two differing records,
    # one each way, of the same cpu, pid and text within SWAP_US, or a
    # differing one and an unpaired one of the other side, are one record
    # accepted by both. Look-alikes differ to a filter only in fields the
    # text leaves out (comm across an exec), so only that could hide here.
    unpaired = {True: [kacc[i] for i in range(len(kacc)) if inside(kacc[i]) and i not in kin],
                False: [tacc[i] for i in range(len(tacc)) if inside(tacc[i]) and i not in tin]}
    left = [d for d in differ if not d[0]]
    kern = [d for d in differ if d[0]]
    for d in list(left):
        m = next((e for e in kern if alike(k0[e[1]], k0[d[1]])), None)
        if m:
            left.remove(d)
            kern.remove(m)
    left = [d for d in left if not take(unpaired[True], k0[d[1]])]
    kern = [d for d in kern if not take(unpaired[False], t0[d[2]])]
    bad = len(left) + len(kern)
    examples = []
    for a, k, t in kern + left:
        ts, cpu, pid, text = k0[k]
        examples.append("%s only: cpu %d pid %d at %.6f: %s | tracerd: %s" %
                        ("kernel" if a else "tracerd", cpu, pid, ts / 1e6, text[:90],
                         t0[t][3][:90]))
    return len(universe), nk, nt, bad, outside, examples


# Each instance runs the event's assign for itself: an exiting task's
# sched_switch can read its state as Z in one and X (reaped meanwhile by its
# parent on the other CPU) in the next.
EXIT_STATE = re.compile(r"prev_state=[XZ] ")


def alike(r, q):
    """Same cpu, pid and text, within SWAP_US."""
    return r[1] == q[1] and r[2] == q[2] and abs(r[0] - q[0]) <= SWAP_US and \
        EXIT_STATE.sub("prev_state=Z ", r[3]) == EXIT_STATE.sub("prev_state=Z ", q[3])


def take(recs, r):
    """Removes and reports a record of recs alike r."""
    for i, q in enumerate(recs):
        if alike(q, r):
            del recs[i]
            return True
    return False


def tracerd_stats(err_path):
    """event -> (filtered, lost) from tracerd's summary on stderr"""
    st = {}
    with open(err_path, errors="replace") as f:
        for line in f:
            m = re.search(r" (\S+):(\S+) delivered=\d+ lost=(\d+) suppressed=\d+ filtered=(\d+)", line)
            if m:
                st[m.group(2)] = (int(m.group(4)), int(m.group(3)))
    return st


EXCLUDE = set()


def main():
    spec, t0, t1 = sys.argv[1], int(sys.argv[2]) // 1000, int(sys.argv[3]) // 1000
    if len(sys.argv) > 6:
        EXCLUDE.update(int(x) for x in open(sys.argv[6]).read().split())
    lo, hi = t0 + EDGE_US, t1 - EDGE_US
    base_k, base_t = parse(sys.argv[4]), parse(sys.argv[5])
    cache = {}
    pairs = {}  # event -> pair_inorder() of its unfiltered records: the costly part
    total = defaultdict(int)
    for line in open(spec):
        rnd, event, expr, kexpr, ktrace, tout, terr = line.rstrip("\n").split("\t")
        ev = event.split(":", 1)[1]
        for p in (ktrace, tout):
            if p not in cache:
                cache[p] = parse(p)
        if terr not in cache:
            cache[terr] = tracerd_stats(terr)
        if ev not in pairs:
            pairs[ev] = pair_inorder(base_k.get(ev, []), base_t.get(ev, []))
        n, nk, nt, bad, outside, ex = compare(base_k.get(ev, []), base_t.get(ev, []),
                                              cache[ktrace].get(ev, []), cache[tout].get(ev, []),
                                              lo, hi, pairs[ev])
        filtered, lost = cache[terr].get(ev, (0, 0))
        for k, v in dict(exprs=1, universe=n, kern=nk, ours=nt, bad=bad, outside=outside,
                         lost=lost, accepting=nt > 0, rejecting=nt < n).items():
            total[k] += v
        shown = expr if expr == kexpr else "%s   (kernel: %s)" % (expr, kexpr)
        print("# %-26s %-58s records=%d kernel=%d tracerd=%d disagree=%d unpaired=%d" %
              (event, shown, n, nk, nt, bad, outside))
        for e in ex[:3]:
            print("#     " + e)
        print("%s - filter %s: %s" % ("ok" if bad == 0 and not lost and n > 0 else "not ok",
                                      event, shown))
    print("# %(exprs)d expressions: %(universe)d records compared, %(kern)d accepted by the kernel, "
          "%(ours)d by tracerd, %(bad)d disagreements, %(lost)d lost; %(outside)d accepted records "
          "outside the universe; %(accepting)d expressions accepted records, %(rejecting)d "
          "rejected some" % total)
    # A corpus whose filters accept nothing or reject nothing tests nothing.
    print("%s - most expressions accept some records and reject others (%d and %d of %d)" %
          ("ok" if total["accepting"] * 10 >= total["exprs"] * 8 and
           total["rejecting"] * 10 >= total["exprs"] * 8 else "not ok",
           total["accepting"], total["rejecting"], total["exprs"]))
    print("%s - accepted records outside the universe are rare (%d of %d)" %
          ("ok" if total["outside"] * 100 <= total["kern"] + total["ours"] else "not ok",
           total["outside"], total["kern"] + total["ours"]))


main()
