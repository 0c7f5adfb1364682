#!/usr/bin/env python3
"""Pairs the kernel's stacktrace-trigger entries with tracerd's stacks.

stack_pair.py KERNEL_TRACE TRACERD_OUT MIN_PAIRS EVENT...

Both files are in the kernel's trace layout: an event's line, then a
"<stack trace>" line and " => func" lines. Records pair by event, task (tid),
CPU and the event's text (fields; both print raw pointers), nearest in time
first, within 500 us (both CLOCK_MONOTONIC). The kernel's frames are compared from the tracepoint's caller
on: its first frame is ftrace's own probe (trace_event_raw_event_<class>), and
with tracerd's probe on the same tracepoint the call goes through
__traceiter_<event>. Prints one EVENT line per event, MISMATCH blocks, and
exits 1 if any pair differs, a record has no stack, or an event has fewer
than MIN_PAIRS pairs."""
import bisect
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): (\w+): (.*)$')
# Read by each probe on its own: a tick between them changes it.
RACY = re.compile(r' now=\d+')
STACK = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): <stack trace>')
WINDOW_US = 500


def parse(path, events):
    """The kernel's trace merges CPUs: a stack entry may come after another
    CPU's lines, and an interrupt's event and stack between an event and its
    own stack. So a stack entry belongs to the latest event of its task and
    CPU that has none yet."""
    recs = defaultdict(list)     # (event, tid, cpu) -> [[us, frames or None]]
    waiting = defaultdict(list)  # (tid, cpu) -> records without a stack, oldest first
    frames = None
    for line in open(path, errors='replace'):
        if line.startswith(' => '):
            if frames is not None:
                frames.append(line[4:].strip())
            continue
        frames = None
        m = STACK.match(line)
        if m:
            w = waiting.get((m.group(2), m.group(3)))
            if w:
                rec = w.pop()
                rec[1] = frames = []
            continue
        m = LINE.match(line)
        if m and m.group(6) in events:
            rec = [int(m.group(4)) * 1000000 + int(m.group(5)), None]
            text = RACY.sub('', m.group(7))
            recs[(m.group(6), m.group(2), m.group(3), text)].append(rec)
            waiting[(m.group(2), m.group(3))].append(rec)
    return recs


def from_caller(frames):
    i = 1 if frames and frames[0].startswith('trace_event_raw_event_') else 0
    while i < len(frames) and frames[i].startswith('__traceiter_'):
        i += 1
    return frames[i:]


def in_bpf(rec):
    """A firing in an interrupt that landed in a BPF program or the perf path
    around it: the kernel may skip tracerd's program for it (recursion_misses,
    docs/ARCHITECTURE.md, "What is counted"), so one side may lack it; such records are left out
    on both sides."""
    # A frame the kernel prints as an address: JIT code without a symbol (a
    # BPF program's, a trampoline's).
    return rec[1] is not None and any(f.startswith(('bpf_prog_', 'trace_call_bpf', 'perf_', '0x'))
                                      for f in rec[1])


def same_stack(k, t):
    return k[1] is not None and t[1] is not None and from_caller(k[1]) == t[1]


def nearest_pairs(a, b):
    """Pairs of indexes into a and b (each sorted by time), closest first:
    a record pairs with the nearest one of the other side within the
    window, so that one a side lacks (skipped, or dropped on the perf path)
    does not shift its neighbours' pairs by one. Records with equal stacks
    pair first: an interrupt's firing nested in another's of the same task,
    CPU and text (softirq_raise in idle) may be timed in the other order on
    the two sides. A wrong stack still shows: its counterpart pairs with it
    or is left without the records of its stack."""
    times = [r[0] for r in b]
    cand = []
    for i, r in enumerate(a):
        lo = bisect.bisect_left(times, r[0] - WINDOW_US)
        hi = bisect.bisect_right(times, r[0] + WINDOW_US)
        cand += [(not same_stack(r, b[j]), abs(times[j] - r[0]), i, j) for j in range(lo, hi)]
    used_a, used_b = set(), set()
    for _, _, i, j in sorted(cand):
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            yield i, j


def main():
    kernel, ours, min_pairs, events = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4:])
    k, t = parse(kernel, events), parse(ours, events)
    pairs, bad, nostack, shown = defaultdict(int), defaultdict(int), defaultdict(int), 0
    for key in set(k) & set(t):
        a = sorted(r for r in k[key] if not in_bpf(r))
        b = sorted(r for r in t[key] if not in_bpf(r))
        for i, j in nearest_pairs(a, b):
            ev = key[0]
            if a[i][1] is None or b[j][1] is None:
                nostack[ev] += 1
                continue
            pairs[ev] += 1
            want = from_caller(a[i][1])
            if want != b[j][1]:
                bad[ev] += 1
                if shown < 5:
                    shown += 1
                    print(f'MISMATCH {ev} tid={key[1]} cpu={key[2]} kernel={a[i][0]} tracerd={b[j][0]}')
                    print('  kernel:  ' + ' '.join(want))
                    print('  tracerd: ' + ' '.join(b[j][1]))
    fail = False
    for ev in sorted(events):
        nk = sum(len(v) for kk, v in k.items() if kk[0] == ev)
        nt = sum(len(v) for kk, v in t.items() if kk[0] == ev)
        print(f'EVENT {ev} kernel={nk} tracerd={nt} paired={pairs[ev]} differing={bad[ev]} '
              f'without_stack={nostack[ev]}')
        fail |= pairs[ev] < min_pairs or bad[ev] > 0 or nostack[ev] > 0
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
