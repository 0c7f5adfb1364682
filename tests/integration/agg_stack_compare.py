#!/usr/bin/env python3
"""Compares tracerd's common_stacktrace histograms with the kernel's stacks of
the same events, taken one by one (a tracefs instance's `stacktrace` trigger,
options/sym-offset), and with the workload's known counts.

  agg_stack_compare.py [--summary TRACERD_ERR] TRACERD_OUT TRACE 'SEL|EVENT|LINE_PREFIX|COUNT'...
  agg_stack_compare.py --same TRACERD_OUT TRACERD_OUT

For each selection SEL (one event), the kernel's records whose line starts
with LINE_PREFIX ("fcntl_setlk:", "sys_getppid(") are the event's; each is
followed by its <stack trace>. The kernel's frames from the tracepoint's
caller on (its own probe, trace_event_raw_event_<class> or
ftrace_syscall_enter, and __traceiter_<event> taken off), the first 16, give
the count per stack that tracerd's hitcounts must equal; a stack deeper than
16 must show tracerd's "cut" line. Totals: Hits = COUNT (the workload's),
Dropped 0, and the kernel's records of the event = COUNT too. With
--summary, tracerd's stderr: its agg_stack_cut= per selection must equal the
kernel's records of stacks deeper than 16 and the hitcounts of the dump's
cut stacks, and some event must have such stacks. Prints TAP lines."""
import re
import sys

DEPTH = 16
CUT = "... (cut at 16 frames)"
# the kernel's own leading frames in ftrace's stacks of an event
FTRACE_OWN = ("trace_event_raw_event_", "__traceiter_", "ftrace_syscall_")


def tracerd_hists(path):
    """selection -> {(frames, cut): hitcount}, and its Totals."""
    hists, totals, sel, cur = {}, {}, None, None
    for line in open(path, errors="replace").read().splitlines():
        m = re.match(r"# selection: ([^,]+), event: \S+, dump: final", line)
        if m:
            sel = m.group(1)
            hists[sel], totals[sel] = {}, {}
            continue
        if sel is None:
            continue
        if line == "{ common_stacktrace:":
            cur = []
        elif cur is not None and line.startswith("         "):
            cur.append(line[9:])
        elif cur is not None and line.startswith("} hitcount:"):
            cut = bool(cur) and cur[-1] == CUT
            key = (tuple(cur[:-1] if cut else cur), cut)
            hists[sel][key] = hists[sel].get(key, 0) + int(line.split()[-1])
            cur = None
        else:
            m = re.match(r"    (Hits|Entries|Dropped): (\d+)", line)
            if m:
                totals[sel][m.group(1)] = int(m.group(2))
    return hists, totals


def kernel_stacks(path, prefixes):
    """prefix -> {(frames, cut): records}. A record's <stack trace> is the
    entry after it (the trigger runs on its CPU before the tracepoint
    returns, and the workload is one task)."""
    out = {p: {} for p in prefixes}
    last, stack = None, None  # the last record's prefix; the stack being read

    def close():
        if stack is not None and stack[0] is not None:
            f = list(stack[1])
            while f and f[0].startswith(FTRACE_OWN):
                f.pop(0)
            key = (tuple(f[:DEPTH]), len(f) > DEPTH)
            out[stack[0]][key] = out[stack[0]].get(key, 0) + 1

    for line in open(path, errors="replace").read().splitlines():
        if line.startswith(" => ") and stack is not None:
            stack[1].append(line[4:])
            continue
        m = re.match(r"\s*.+-\d+\s+\[\d+\]\s+\S+\s+[\d.]+: (.*)$", line)
        if not m:
            continue
        close()
        stack = None
        if m.group(1) == "<stack trace>":
            stack = (last, [])
        else:
            last = next((p for p in prefixes if m.group(1).startswith(p)), None)
    close()
    return out


def summary_cuts(path):
    """selection -> agg_stack_cut= of its summary line (stop's per-event lines)."""
    cuts = {}
    for line in open(path, errors="replace"):
        m = re.match(r"tracerd:\s+(\S+)\s+\S+ .*", line)
        if m:
            c = re.search(r" agg_stack_cut=(\d+)", line)
            cuts[m.group(1)] = int(c.group(1)) if c else None
    return cuts


def check_cuts(parsed, hists, kernel, cuts):
    fails, deep = 0, 0
    for sel, ev, prefix, _ in parsed:
        theirs = sum(n for k, n in kernel[prefix].items() if k[1])
        shown = sum(n for k, n in hists.get(sel, {}).items() if k[1])
        deep += theirs
        ok = cuts.get(sel) == theirs == shown
        print(f"{'ok' if ok else 'not ok'} - {ev}: agg_stack_cut={cuts.get(sel)} = the kernel's "
              f"records deeper than {DEPTH} frames ({theirs}) = the dump's cut hitcounts ({shown})")
        fails += not ok
    print(f"{'ok' if deep else 'not ok'} - some event's stacks were cut ({deep} records)")
    return fails + (not deep)


def same(a, b):
    """--same A B: tracerd's dumps A and B hold the same stacks and counts."""
    ha, hb = tracerd_hists(a)[0], tracerd_hists(b)[0]
    ok = ha == hb and all(ha.values())
    print(f"{'ok' if ok else 'not ok'} - one probe on the tracepoints (no __traceiter_ frame) "
          f"gives the same stacks and counts as two ({sum(len(h) for h in ha.values())} stacks)")
    if not ok:
        for sel in sorted(set(ha) | set(hb)):
            if ha.get(sel) != hb.get(sel):
                print(f"# {sel}: {ha.get(sel)} vs {hb.get(sel)}")
    return 0 if ok else 1


def main():
    if sys.argv[1] == "--same":
        return same(sys.argv[2], sys.argv[3])
    args, cuts = sys.argv[1:], None
    if args[0] == "--summary":
        cuts, args = summary_cuts(args[1]), args[2:]
    out, trace, specs = args[0], args[1], args[2:]
    parsed = [s.split("|") for s in specs]  # SEL, EVENT, PREFIX, COUNT
    hists, totals = tracerd_hists(out)
    kernel = kernel_stacks(trace, [p[2] for p in parsed])
    fails = 0
    for sel, ev, prefix, count in parsed:
        count = int(count)
        mine, theirs = hists.get(sel, {}), kernel[prefix]
        ok = mine == theirs and sum(theirs.values()) == count
        print(f"{'ok' if ok else 'not ok'} - {ev}: counts per stack equal the kernel's "
              f"records one by one ({len(theirs)} stacks, {sum(theirs.values())} records, "
              f"{count} fired)")
        if not ok:
            fails += 1
            for k in sorted(set(mine) | set(theirs)):
                if mine.get(k) != theirs.get(k):
                    print(f"# tracerd {mine.get(k)} kernel {theirs.get(k)}: "
                          + " | ".join(k[0]) + (" (cut)" if k[1] else ""))
        t = totals.get(sel, {})
        ok = t.get("Hits") == count and t.get("Dropped") == 0 and \
            t.get("Entries") == len(mine) and sum(mine.values()) + t.get("Dropped", -1) == count
        print(f"{'ok' if ok else 'not ok'} - {ev}: hitcounts {sum(mine.values())} + "
              f"Dropped {t.get('Dropped')} = Hits {t.get('Hits')} = {count} fired")
        fails += not ok
    if cuts is not None:
        fails += check_cuts(parsed, hists, kernel, cuts)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
