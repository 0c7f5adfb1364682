#!/usr/bin/env python3
"""Compares tracerd's histogram dumps (its --foreground output) with the
records a tracefs instance kept of the same events, grouped by the same key.

  agg_compare.py TRACERD_OUT INSTANCE_TRACE SELECTION EVENT KIND

KIND says how to key a kernel record, the way the Aggregate= of SELECTION
keys it: next_comm+prev_state, syscall, log2:bytes_req:bytes_alloc,
buckets=64:bytes_req:bytes_alloc, filename, comm+pid.
Prints TAP lines; exits 1 on a difference."""
import re
import sys
from collections import Counter, defaultdict


def dumps(path, selection, event):
    """Entries of every dump of (selection, event): key text -> [hits, sums]."""
    entries = defaultdict(lambda: [0, 0])
    totals = Counter()
    cur = False
    for line in open(path, errors="replace"):
        if line.startswith("# selection: "):
            m = re.match(r"# selection: (\S+), event: (\S+),", line)
            cur = bool(m) and m.group(1) == selection and m.group(2) == event
            continue
        if not cur:
            continue
        m = re.match(r"\{ (.*) \} hitcount: +(\d+)(?:  \w+: +(\d+))?", line)
        if m:
            e = entries[m.group(1)]
            e[0] += int(m.group(2))
            e[1] += int(m.group(3) or 0)
            continue
        m = re.match(r"\s+(Hits|Entries|Dropped): (\d+)", line)
        if m:
            totals[m.group(1)] += int(m.group(2))
    return entries, totals


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def log2(v):
    """The kernel's ilog2(roundup_pow_of_two(v))."""
    return 0 if v < 2 else (v - 1).bit_length()


def kernel_groups(path, event, kind):
    name = event.split(":")[1]
    groups = defaultdict(lambda: [0, 0])
    for line in open(path, errors="replace"):
        if line.startswith("#") or f" {name}: " not in line:
            continue
        text = line.split(f" {name}: ", 1)[1]
        if kind == "next_comm+prev_state":
            m = re.search(r"prev_state=(\S+) ==> next_comm=(.*) next_pid=", text)
            key = (m.group(2), m.group(1))
        elif kind == "syscall":
            key = int(re.match(r"NR (\d+)", text).group(1))
        elif kind == "filename":
            key = re.match(r"filename=(.*) pid=\d+ old_pid=\d+$", text.rstrip("\n")).group(1)
        elif kind == "comm+pid":
            m = re.match(r"comm=(.*) pid=(-?\d+) prio=-?\d+$", text.rstrip("\n"))
            key = (m.group(1), int(m.group(2)))
        elif kind.startswith(("log2:", "buckets=")):
            how, k, v = kind.split(":")
            f = fields(text)
            if how == "log2":
                key = log2(int(f[k]))
            else:
                size = int(how.split("=")[1])
                key = int(f[k]) // size * size
            groups[key][1] += int(f[v])
        else:
            raise SystemExit(f"unknown kind {kind}")
        groups[key][0] += 1
    return groups


def tracerd_groups(entries, kind):
    groups = defaultdict(lambda: [0, 0])
    for text, (hits, total) in entries.items():
        if kind == "next_comm+prev_state":
            m = re.match(r"next_comm: (.*?) *, prev_state: (\S+) +\[ *\d+\]$", text)
            key = (m.group(1), m.group(2))
        elif kind == "syscall":
            key = int(re.search(r"\[ *(\d+)\]$", text).group(1))
        elif kind == "filename":
            key = re.match(r"filename: (.*?) *$", text).group(1)
        elif kind == "comm+pid":
            m = re.match(r"comm: (.*?) *, pid: +(-?\d+)$", text)
            key = (m.group(1), int(m.group(2)))
        elif kind.startswith("buckets="):
            size = int(kind.split(":")[0].split("=")[1])
            m = re.search(r"~ (\d+)-(\d+)", text)
            key = int(m.group(1))
            if int(m.group(2)) != key + size - 1:
                raise SystemExit(f"bucket {text!r} is not {size} wide")
        else:
            key = int(re.search(r"~ 2\^(\d+)", text).group(1))
        groups[key][0] += hits
        groups[key][1] += total
    return groups


def main():
    out, trace, selection, event, kind = sys.argv[1:6]
    entries, totals = dumps(out, selection, event)
    ours = tracerd_groups(entries, kind)
    theirs = kernel_groups(trace, event, kind)
    with_sums = kind.startswith(("log2:", "buckets="))
    bad = 0
    for key in sorted(set(ours) | set(theirs), key=str):
        a, b = ours.get(key, [0, 0]), theirs.get(key, [0, 0])
        if a[0] != b[0] or (with_sums and a[1] != b[1]):
            print(f"#   {key}: tracerd {a}, kernel {b}")
            bad += 1
    n = sum(v[0] for v in theirs.values())
    name = f"{selection} ({event}, {kind}): per key, tracerd's counts" + \
        (" and sums" if with_sums else "") + f" equal the kernel's records ({len(theirs)} keys, {n} records)"
    if bad or not n:
        print(f"not ok - {name}: {bad} keys differ")
        return 1
    print(f"ok - {name}")
    hits = sum(v[0] for v in ours.values())
    tot = f"{selection}: Totals Hits {totals['Hits']} = the entries' hitcounts {hits} + Dropped {totals['Dropped']}"
    print(("ok - " if totals["Hits"] == hits + totals["Dropped"] else "not ok - ") + tot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
