#!/usr/bin/env python3
"""Compares `tracerd --read --json --raw-pointers STORE` with `trace-cmd report
-N -t` of the same records exported by --trace-dat. Per CPU, in order: every
record's timestamp (ns), pid (common_pid: the thread) and event name must be
the same, and as many records. The text is compared after "event: ": events
whose text differs are listed (DIFF lines, with a sample), and those not named
in KNOWN (libtraceevent's known differences from the kernel's text) fail.
Prints key=value lines for the shell test; exits 0."""
import json
import re
import sys
from collections import defaultdict

# Where libtraceevent's text is not the kernel's, measured in this project
# (bench/results/NOTES.md "Rendering", render_diff.sh): tracerd prints as
# the kernel does, trace-cmd as libtraceevent does.
KNOWN = [
    (r"syscalls:.*", "the kernel prints syscall events with its own functions "
     "(print_syscall_enter/exit: no padding, no event: prefix), not their print fmt, "
     "and tracerd adds the user strings it read (SyscallStrings=)"),
    (r"kmem:(kmalloc|kfree|kmalloc_node|kmem_cache_alloc|kmem_cache_free)|"
     r"timer:(timer_start|timer_expire_entry|hrtimer_start|hrtimer_expire_entry|timer_init|hrtimer_init)|"
     r"workqueue:(workqueue_queue_work|workqueue_execute_start|workqueue_execute_end|workqueue_activate_work)|"
     r"irq:.*|skb:(kfree_skb|consume_skb)|net:.*|sock:.*|tcp:.*|filelock:.*|writeback:.*",
     "%pS/%ps (call sites, functions): the trace.dat has no kallsyms, libtraceevent "
     "prints the address"),
]

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


def known(event):
    for pat, why in KNOWN:
        if re.fullmatch(pat, event):
            return why
    return None


def main():
    ours = read_tracerd(sys.argv[1])
    theirs, dropped = read_report(sys.argv[2])
    records = mismatched = 0
    same, diff, sample = defaultdict(int), defaultdict(int), {}
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
    unexplained = 0
    for ev in sorted(diff):
        why = known(ev)
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
