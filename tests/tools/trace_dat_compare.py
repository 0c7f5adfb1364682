#!/usr/bin/env python3
"""Compares `tracerd --read --json --raw-pointers STORE` (argv 1) with `trace-cmd
report -N -t` (argv 2) of the same records exported by --trace-dat. Per CPU, in order: every
record's timestamp (ns), pid (common_pid: the thread) and event name must be
the same, and as many records. The text is compared after "event: ": events
whose text differs are listed (DIFF lines, with a sample), and those not named
in KNOWN (libtraceevent's known differences from the kernel's text, told by
the event's print fmt in the tracefs of argv 3) fail.
Prints key=value lines for the shell test; exits 0."""
import json
import re
import sys
from collections import defaultdict

# Where libtraceevent's text is not the kernel's, measured in this project
# (bench/results/NOTES.md "Rendering", render_diff.sh): tracerd prints as the
# kernel does, trace-cmd as libtraceevent does. An event's difference is
# explained by what its print fmt (tracefs) uses.
KNOWN = [
    (lambda sysname, fmt: sysname == "syscalls",
     "syscall events: the kernel prints them with its own functions (print_syscall_enter/exit: "
     "unpadded hex, 'sys_openat(...)', '-> ret'), not their print fmt; tracerd adds the user "
     "strings it read (SyscallStrings=)"),
    (lambda sysname, fmt: re.search(r"\b(jiffies|vmemmap_base)\b", fmt),
     "the print fmt reads jiffies or vmemmap_base, which only the running kernel has: tracerd "
     "prints field=value, libtraceevent computes with 0"),
    (lambda sysname, fmt: re.search(r"%p[sSB]", fmt),
     "%pS/%ps: the trace.dat's kallsyms hold only the stacks' functions (the store keeps no "
     "others): libtraceevent prints the address, the kernel the symbol"),
    (lambda sysname, fmt: re.search(r"%p(?![a-zA-Z])|%#[0-9]*l*[xX]", fmt),
     "%p and %#x: libtraceevent prints 0x before an address and (nil) for NULL, the kernel "
     "(hash-ptr off, --raw-pointers) neither; the kernel prints %#x of 0 as 0x0, libtraceevent "
     "(glibc's printf) as 0"),
]


def printf_only(ours, theirs):
    """Whether the texts differ only as %p and %#x print (KNOWN's last): the
    same values once every 0x is taken off and (nil) is a NULL pointer."""
    def norm(t):
        return re.sub(r"0x([0-9a-f]+)", r"\1", t.replace("(nil)", "0" * 16))
    return norm(ours) == norm(theirs)


def print_fmt(tracefs, event):
    sysname, name = event.split(":", 1)
    try:
        text = open(f"{tracefs}/events/{sysname}/{name}/format").read()
    except OSError:
        return ""
    return text[text.find("print fmt:"):]


LINE = re.compile(r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<s>\d+)\.(?P<ns>\d{9}):"
                  r"\s+(?P<ev>[^:\s]+):\s?(?P<text>.*)$")
DROPPED = re.compile(r"^CPU:(\d+) \[(\d+) EVENTS DROPPED\]$")


def read_tracerd(path):
    per_cpu = defaultdict(list)
    for line in open(path):
        j = json.loads(line)
        sysname, name = j["TRACE_EVENT"].split(":", 1)
        msg = j["MESSAGE"]
        if msg.startswith(name + ": "):
            msg = msg[len(name) + 2:]
        per_cpu[int(j["TRACE_CPU"])].append(
            (int(j["TRACE_TIMESTAMP_NS"]), int(j["TRACE_TID"]), name, j["TRACE_EVENT"], msg))
    return per_cpu


def read_report(path):
    per_cpu, dropped, last = defaultdict(list), defaultdict(int), None
    for line in open(path):
        line = line.rstrip("\n")
        m = DROPPED.match(line)
        if m:
            dropped[int(m.group(1))] += int(m.group(2))
            continue
        m = LINE.match(line)
        if not m:
            if last is not None and line.startswith(("\t", " ")):
                last[4] += "\n" + line	# a multi-line text
            continue
        last = [int(m["s"]) * 10**9 + int(m["ns"]), int(m["pid"]), m["ev"], None, m["text"].lstrip(" ")]
        per_cpu[int(m["cpu"])].append(last)
    return per_cpu, dropped


def known(tracefs, event):
    fmt = print_fmt(tracefs, event)
    for test, why in KNOWN:
        if test(event.split(":", 1)[0], fmt):
            return why
    return None


def main():
    ours = read_tracerd(sys.argv[1])
    theirs, dropped = read_report(sys.argv[2])
    records = mismatched = 0
    same, diff, sample, beyond_0x = defaultdict(int), defaultdict(int), {}, defaultdict(int)
    for cpu in sorted(set(ours) | set(theirs)):
        a, b = ours.get(cpu, []), theirs.get(cpu, [])
        if len(a) != len(b):
            print(f"COUNT cpu={cpu} tracerd={len(a)} trace-cmd={len(b)}")
        for x, y in zip(a, b):
            records += 1
            if (x[0], x[1], x[2]) != (y[0], y[1], y[2]):
                mismatched += 1
                if mismatched <= 5:
                    print(f"MISMATCH cpu={cpu} tracerd={x[:3]} trace-cmd={tuple(y[:3])}")
                continue
            if x[4] == y[4]:
                same[x[3]] += 1
            else:
                diff[x[3]] += 1
                sample.setdefault(x[3], (x[4], y[4]))
                if not printf_only(x[4], y[4]):
                    beyond_0x[x[3]] += 1
    unexplained = 0
    for ev in sorted(diff):
        why = known(sys.argv[3], ev)
        if why and why.startswith("%p and %#x") and beyond_0x[ev]:
            why = None	# its print fmt's only known difference is not all there is
        unexplained += why is None
        print(f"DIFF {ev} differ={diff[ev]} same={same[ev]} known={'yes' if why else 'no'}: {why or ''}")
        print(f"  tracerd:   {sample[ev][0][:200]}")
        print(f"  trace-cmd: {sample[ev][1][:200]}")
    equal_events = sum(1 for ev in same if ev not in diff)
    print(f"SUMMARY cpus={len(set(ours) | set(theirs))} tracerd={sum(map(len, ours.values()))} "
          f"trace_cmd={sum(map(len, theirs.values()))} compared={records} mismatched={mismatched} "
          f"events={len(set(same) | set(diff))} text_equal_events={equal_events} "
          f"text_differing_events={len(diff)} unexplained={unexplained} "
          f"dropped={sum(dropped.values())} dropped_cpus={','.join(map(str, sorted(dropped)))}")


main()
