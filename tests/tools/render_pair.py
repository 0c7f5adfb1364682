#!/usr/bin/env python3
"""Pairs the records of a tracefs instance's `trace` with tracerd's
foreground output (same event, CPU and pid, in order, timestamps within
--window µs) and compares the text after "event_name: ".

Usage: render_pair.py KERNEL_TRACE TRACERD_OUT CLASSES [--window US]
CLASSES: `tracerd --list-classes` output, to count classes.
Prints a summary and one "MISMATCH" block per differing record (at most
--show per event); exits 0."""
import collections
import re
import sys

LINE = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): ([\w]+): ?(.*)$')


def parse(path):
    recs = collections.defaultdict(list)
    with open(path, errors='surrogateescape') as f:
        for line in f:
            if line.startswith('#'):
                continue
            m = LINE.match(line.rstrip('\n'))
            if not m:
                continue
            comm, pid, cpu, s, us, ev, text = m.groups()
            ts = int(s) * 1000000 + int(us)
            recs[(ev, int(cpu), int(pid))].append((ts, text))
    return recs


def classes_of(path):
    cls = {}
    with open(path) as f:
        for line in f:
            name, _, events = line.partition(':')
            for e in events.split():
                sys_, ev = e.split(':', 1)
                cls[ev] = (name.split()[0], sys_)
    return cls


def pair(kern, ours, window):
    """Order-preserving pairs; a record more than `window` µs from the
    other side's next one is left unpaired (it fell outside the overlap)."""
    i = j = 0
    out = []
    while i < len(kern) and j < len(ours):
        dt = ours[j][0] - kern[i][0]
        if abs(dt) <= window:
            out.append((kern[i], ours[j]))
            i += 1
            j += 1
        elif dt < 0:
            j += 1
        else:
            i += 1
    return out


def main():
    args = sys.argv[1:]
    window = 2000
    show = 3
    if '--window' in args:
        k = args.index('--window')
        window = int(args[k + 1])
        del args[k:k + 2]
    kern, ours, cls = parse(args[0]), parse(args[1]), classes_of(args[2])
    per_event = collections.defaultdict(lambda: [0, 0, 0, 0])  # kernel, tracerd, paired, bad
    shown = collections.Counter()
    for key in set(kern) | set(ours):
        ev = key[0]
        st = per_event[ev]
        st[0] += len(kern.get(key, []))
        st[1] += len(ours.get(key, []))
        for (kt, ktext), (ot, otext) in pair(kern.get(key, []), ours.get(key, []), window):
            st[2] += 1
            if ktext != otext:
                st[3] += 1
                if shown[ev] < show:
                    shown[ev] += 1
                    print('MISMATCH %s cpu=%d pid=%d\n  kernel:  %s\n  tracerd: %s' %
                          (ev, key[1], key[2], ktext, otext))
    compared = sorted(e for e, st in per_event.items() if st[2])
    for ev in sorted(per_event):
        st = per_event[ev]
        c, sys_ = cls.get(ev, ('?', '?'))
        print('EVENT %s:%s class=%s kernel=%d tracerd=%d paired=%d mismatches=%d' %
              (sys_, ev, c, st[0], st[1], st[2], st[3]))
    print('SUMMARY events=%d classes=%d subsystems=%d records=%d mismatches=%d' % (
        len(compared), len({cls.get(e, (e, e))[0] for e in compared}),
        len({cls.get(e, (e, e))[1] for e in compared}),
        sum(per_event[e][2] for e in compared), sum(per_event[e][3] for e in compared)))


main()
