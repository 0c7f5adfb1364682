#!/usr/bin/env python3
"""Pairs the records of a tracefs instance's `trace` with tracerd's
foreground output (same event, CPU and pid, in order, timestamps within
--window µs) and compares the text after "event_name: " (of syscall events,
which have none, all of it).

Usage: render_pair.py KERNEL_TRACE TRACERD_OUT CLASSES [--window US]
CLASSES: `tracerd --list-classes` output, to count classes.
Prints a summary and one "MISMATCH" block per differing record (at most
--show per event); exits 0."""
import collections
import re
import sys

LINE = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): ([\w]+): ?(.*)$')
# The kernel prints syscall events with its own functions and no "event: ":
# "sys_openat(dfd: 0xffffff9c, ...)" (sys_enter_openat), "sys_openat -> 0x3"
# (sys_exit_openat). The whole text is compared, but for the user strings
# tracerd prints after their pointers (SyscallStrings=), which this kernel
# does not: 'filename: 0x7f3e99f030b1 "/etc/passwd"' or '... (unreadable)'.
SYSCALL = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): (sys_(\w+?)(\(| -> ).*)$')
USER_STR = re.compile(r'(: (?:0x[0-9a-f]+|[1-9])) (?:"(?:[^"\\]|\\.)*"(?:\.\.\.)?|\(unreadable\))(?=, |\)$)')


def match(line):
    """(comm, pid, cpu, secs, usecs, event, text), or None."""
    m = SYSCALL.match(line)
    if m:
        comm, pid, cpu, s, us, text, name, kind = m.groups()
        text = USER_STR.sub(r'\1', text)
        return comm, pid, cpu, s, us, ('sys_enter_' if kind == '(' else 'sys_exit_') + name, text
    m = LINE.match(line)
    return m.groups() if m else None


def parse(path):
    recs = collections.defaultdict(list)
    with open(path, errors='surrogateescape') as f:
        for line in f:
            if line.startswith('#'):
                continue
            m = match(line.rstrip('\n'))
            if not m:
                continue
            comm, pid, cpu, s, us, ev, text = m
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


LOOKAHEAD = 4096


def find(recs, start, rec, window):
    """Index of the first record from start, within window µs of rec,
    whose text is rec's; None if there is none."""
    for k in range(start, min(start + LOOKAHEAD, len(recs))):
        if recs[k][0] - rec[0] > window:
            break
        if recs[k][1] == rec[1] and abs(recs[k][0] - rec[0]) <= window:
            return k
    return None


def pair(kern, ours, window):
    """Order-preserving pairs. A record more than `window` µs from the other
    side's next one is left unpaired (outside the overlap). Records only one
    side has (a BPF program does not run while another runs on that CPU, so
    tracerd misses some; tracerd also runs longer) are skipped the way diff
    resynchronizes: look ahead for the other side's text. Else the pair is
    taken as it is, and compared."""
    i = j = 0
    out = []
    while i < len(kern) and j < len(ours):
        if abs(kern[i][0] - ours[j][0]) > window:
            if ours[j][0] < kern[i][0]:
                j += 1
            else:
                i += 1
            continue
        if kern[i][1] != ours[j][1]:
            jj = find(ours, j + 1, kern[i], window)
            ii = find(kern, i + 1, ours[j], window)
            if jj is not None and (ii is None or jj - j <= ii - i):
                j = jj
                continue
            if ii is not None:
                i = ii
                continue
        out.append((kern[i], ours[j]))
        i += 1
        j += 1
    return out


# The ftrace and the perf (BPF) probes of an event each run its
# TP_fast_assign, so a value read from a task another CPU changes can differ
# between the two records. sched_switch's prev_state of an exiting task reads
# p->exit_state, which the parent's wait turns from EXIT_ZOMBIE (Z) to
# EXIT_DEAD (X). timer_start's `now` is jiffies read by each probe, so a
# tick between the two makes its [timeout=] one less in the later probe's
# record; timer_expire_entry's `now` is jiffies too, read the same way.
# Such pairs are counted as races, not mismatches.
RACES = {
    'sched_switch': (re.compile(r' prev_state=([XZ]) '), lambda a, b: True),
    'timer_start': (re.compile(r' \[timeout=(-?\d+)\] '), lambda a, b: abs(int(a) - int(b)) == 1),
    'timer_expire_entry': (re.compile(r' now=(\d+) '), lambda a, b: abs(int(a) - int(b)) == 1),
}


def race(ev, a, b):
    r = RACES.get(ev)
    if not r:
        return False
    pat, close = r
    ma, mb = pat.search(a), pat.search(b)
    return bool(ma and mb and close(ma.group(1), mb.group(1)) and pat.sub(' ', a) == pat.sub(' ', b))


def unaligned(a, b):
    """Two different records, not one record rendered two ways: both sides
    dropped a record at the same point (ftrace and BPF each skip events that
    would recurse), so neither look-ahead found the other's. A rendering
    error changes one value; these differ in two or more, or in layout."""
    ta, tb = a.split(' '), b.split(' ')
    return len(ta) != len(tb) or sum(x != y for x, y in zip(ta, tb)) >= 2


FORK = re.compile(r'-(\d+)\s+\[\d+\].* sched_process_fork: .* child_pid=(\d+)')


def workload_tree(path, root):
    """The workload's pids: root and its descendants, from the kernel's
    sched_process_fork records. Records of other tasks (kernel threads,
    tracerd itself, anything else on the machine) read live state that can
    change between the ftrace and the BPF probe: differences there are
    counted with the unaligned ones, not as mismatches."""
    if root is None:
        return AllPids()
    tree = {root}
    with open(path, errors='surrogateescape') as f:
        for line in f:
            m = FORK.search(line)
            if m and int(m.group(1)) in tree:
                tree.add(int(m.group(2)))
    return tree


class AllPids:
    def __contains__(self, pid):
        return True


def main():
    args = sys.argv[1:]
    window = 200
    show = 3
    root = None
    if '--root' in args:
        k = args.index('--root')
        root = int(args[k + 1])
        del args[k:k + 2]
    if '--window' in args:
        k = args.index('--window')
        window = int(args[k + 1])
        del args[k:k + 2]
    kern, ours, cls = parse(args[0]), parse(args[1]), classes_of(args[2])
    tree = workload_tree(args[0], root)
    per_event = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])  # kernel, tracerd, paired, bad, raced, unaligned
    shown = collections.Counter()
    for key in set(kern) | set(ours):
        ev = key[0]
        st = per_event[ev]
        st[0] += len(kern.get(key, []))
        st[1] += len(ours.get(key, []))
        for (kt, ktext), (ot, otext) in pair(kern.get(key, []), ours.get(key, []), window):
            st[2] += 1
            if ktext != otext and race(ev, ktext, otext):
                st[4] += 1
            elif ktext != otext and (unaligned(ktext, otext) or key[2] not in tree):
                st[5] += 1
            elif ktext != otext:
                st[3] += 1
                if shown[ev] < show:
                    shown[ev] += 1
                    print('MISMATCH %s cpu=%d pid=%d\n  kernel:  %s\n  tracerd: %s' %
                          (ev, key[1], key[2], ktext, otext))
    compared = sorted(e for e, st in per_event.items() if st[2])
    for ev in sorted(per_event):
        st = per_event[ev]
        c, sys_ = cls.get(ev, ('?', '?'))
        print('EVENT %s:%s class=%s kernel=%d tracerd=%d paired=%d mismatches=%d%s' %
              (sys_, ev, c, st[0], st[1], st[2], st[3], ' raced=%d' % st[4] if st[4] else '') +
              (' unaligned=%d' % st[5] if st[5] else ''))
    sysc = [e for e in compared if cls.get(e, ('?', '?'))[1] == 'syscalls']
    print('SUMMARY events=%d classes=%d subsystems=%d records=%d unaligned=%d mismatches=%d '
          'syscall_events=%d syscall_records=%d syscall_differences=%d' % (
              len(compared), len({cls.get(e, (e, e))[0] for e in compared}),
              len({cls.get(e, (e, e))[1] for e in compared}),
              sum(per_event[e][2] for e in compared), sum(per_event[e][5] for e in compared),
              sum(per_event[e][3] for e in compared), len(sysc),
              sum(per_event[e][2] for e in sysc),
              sum(per_event[e][3] + per_event[e][5] for e in sysc)))


main()
