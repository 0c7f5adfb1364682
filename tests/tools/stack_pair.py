#!/usr/bin/env python3
"""Pairs the kernel's stacktrace-trigger entries with tracerd's stacks.

stack_pair.py KERNEL_TRACE TRACERD_OUT MIN_PAIRS EVENT...

Both files are in the kernel's trace layout: an event's line, then a
"<stack trace>" line and " => func" lines. Records pair by event, task (tid),
CPU and the event's text (fields; both print raw pointers), in time order,
when their timestamps (both CLOCK_MONOTONIC) are within 500 us. The kernel's frames are compared from the tracepoint's caller
on: its first frame is ftrace's own probe (trace_event_raw_event_<class>), and
with tracerd's probe on the same tracepoint the call goes through
__traceiter_<event>. Prints one EVENT line per event, MISMATCH blocks, and
exits 1 if any pair differs, a record has no stack, or an event has fewer
than MIN_PAIRS pairs."""
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
    """A firing in an interrupt that landed in a BPF program: the kernel
    skips tracerd's program for it (recursion_misses, README "Accounting"),
    so tracerd has no record to pair with it, and it is left out."""
    # A frame the kernel prints as an address: JIT code without a symbol (a
    # BPF program's, a trampoline's).
    return rec[1] is not None and any(f.startswith(('bpf_prog_', 'trace_call_bpf', '0x'))
                                      for f in rec[1])


def main():
    kernel, ours, min_pairs, events = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4:])
    k, t = parse(kernel, events), parse(ours, events)
    pairs, bad, nostack, shown = defaultdict(int), defaultdict(int), defaultdict(int), 0
    for key in set(k) & set(t):
        a, b = sorted(r for r in k[key] if not in_bpf(r)), sorted(t[key])
        i = j = 0
        while i < len(a) and j < len(b):
            if abs(a[i][0] - b[j][0]) > WINDOW_US:
                if a[i][0] < b[j][0]:
                    i += 1
                else:
                    j += 1
                continue
            ev = key[0]
            if a[i][1] is None or b[j][1] is None:
                nostack[ev] += 1
            else:
                pairs[ev] += 1
                want = from_caller(a[i][1])
                if want != b[j][1]:
                    bad[ev] += 1
                    if shown < 5:
                        shown += 1
                        print(f'MISMATCH {ev} tid={key[1]} cpu={key[2]} kernel={a[i][0]} tracerd={b[j][0]}')
                        print('  kernel:  ' + ' '.join(want))
                        print('  tracerd: ' + ' '.join(b[j][1]))
            i += 1
            j += 1
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
