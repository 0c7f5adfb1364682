#!/usr/bin/env python3
"""Aggregate= against bpftrace's @[key] = count() on the same event, key and
filter: ns added per event (the workload's loop against no consumer),
interleaved over rounds, and the daemon's CPU per event. A short form of the
rows `make bench` adds ("bpftrace @[key] count accept", "tracerd aggregate
accept"), for checking the one comparison alone.

  bench/agg-bench.py [--build build] [--rounds 5] [--count 400000] [--events fcntl_setlk,wait]
                     [--stack] [--compare BUILD...] [--inside-only]
                     [--hist HIST --bt-key KEY]

--stack: the key is the kernel stack, keys=common_stacktrace against
bpftrace's @[kstack] = count(). --compare: more builds of tracerd (variants
of its BPF program), measured in the same interleaved rounds. --inside-only:
only the ns inside the BPF programs, the robust figure on a shared machine.
--hist, --bt-key: another key, as Aggregate= and as bpftrace's map key (e.g.
'hist:keys=comm,type,fl_start' and 'comm, args->type, args->fl_start': a
key over 24 bytes, the large map).

Inside the programs, every consumer runs once per round (A B C A B C ...),
and the median over rounds is compared: the statistics count only the
program's own time, so another job's load on the machine changes the
figure far less than the workload's ns per iteration."""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def in_program_once(c, a, evname):
    """ns per run inside the consumer's BPF programs, one start of it
    (kernel.bpf_stats_enabled, which adds its own two clock reads to all)."""
    c.start()
    try:
        return bench.ns_per_run([c.proc.p.pid], lambda: bench.run_workload(a.build, evname, a.count // 4))[0]
    finally:
        c.stop()


def in_program(cons, a, evname):
    """name -> (median, min) ns per event inside its programs, the consumers
    interleaved round by round."""
    per = {c.name: [] for c in cons}
    for _ in range(a.rounds):
        for c in cons:
            v = in_program_once(c, a, evname)
            if v is not None:
                per[c.name].append(v)
    return {n: (bench.median(v), min(v) if v else float("nan")) for n, v in per.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=400000)
    ap.add_argument("--events", default="fcntl_setlk,wait")
    ap.add_argument("--stack", action="store_true")
    ap.add_argument("--compare", nargs="*", default=[])
    ap.add_argument("--inside-only", action="store_true")
    ap.add_argument("--hist")
    ap.add_argument("--bt-key")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="agg-bench.")
    print(f"# load average at start: {' '.join(bench.read('/proc/loadavg').split()[:3])}")
    for evname in a.events.split(","):
        ev = dict(bench.EVENTS[evname])
        if a.stack:
            ev.update(bt_key="kstack", hist="hist:keys=common_stacktrace")
        if a.hist:
            ev.update(hist=a.hist, bt_key=a.bt_key or ev["bt_key"])
        cons = [bench.NoConsumer(),
                bench.Bpftrace(ev, ev["bt_accept"], tmp, "bpftrace @[key] count", key=ev["bt_key"]),
                bench.Tracerd(ev, ev["accept"], tmp, "tracerd aggregate", a.build,
                              aggregate=ev["hist"])]
        cons += [bench.Tracerd(ev, ev["accept"], tmp, f"tracerd aggregate ({b})", b,
                               aggregate=ev["hist"]) for b in a.compare]
        if a.inside_only:
            inside_table(cons[1:], a, evname, ev)
            continue
        rows = {c.name: [] for c in cons}
        for _ in range(a.rounds):
            for c in cons:
                r = bench.run_one(c, a.build, evname, a.count)
                rows[c.name].append(r)
        base = bench.median([r["ns_per_iter"] for r in rows["none"]])
        added_med = {}
        base10 = bench.median([r["p10"] for r in rows["none"]])
        print(f"## {ev['tp']} key {ev['hist']}, filter `{ev['accept']}`, {a.count} events x "
              f"{a.rounds} rounds; no consumer {base:.0f} ns/iteration")
        for name, rs in rows.items():
            if name == "none":
                continue
            added = [r["ns_per_iter"] - base for r in rs]
            p10 = [r["p10"] - base10 for r in rs]
            cpu = [r["cpu_s"] / r["delivered"] * 1e9 if r["delivered"] else float("nan") for r in rs]
            counted = [r["delivered"] for r in rs]
            added_med[name] = bench.median(added)
            print(f"{name:<24} added {bench.median(added):6.0f} ns/event (p10-based "
                  f"{bench.median(p10):4.0f}; {min(added):.0f}..{max(added):.0f}), consumer CPU "
                  f"{bench.median(cpu):8.1f} ms per M events, counted {min(counted)}..{max(counted)}")
        inside = inside_table(cons[1:], a, evname, ev)
        names = [c.name for c in cons[1:]]
        print(f"added per event (medians), {names[1]} / {names[0]}: "
              f"{added_med[names[1]] / added_med[names[0]]:.2f}")
        del inside
    print(f"# load average at end: {' '.join(bench.read('/proc/loadavg').split()[:3])}")


def inside_table(cons, a, evname, ev):
    """The ns inside each consumer's programs, and each tracerd's ratio to
    the first (bpftrace), rounds interleaved."""
    inside = in_program(cons, a, evname)
    base = inside[cons[0].name][0]
    print(f"## inside the BPF programs: {ev['tp']} {ev['hist']}, filter `{ev['accept']}`, "
          f"{a.count // 4} events x {a.rounds} interleaved rounds")
    for c in cons:
        med, low = inside[c.name]
        print(f"{c.name:<40} {med:6.0f} ns per event (min {low:6.0f}); "
              f"ratio to {cons[0].name}: {med / base:.2f}")
    return inside


if __name__ == "__main__":
    main()
