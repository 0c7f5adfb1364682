#!/usr/bin/env python3
"""Aggregate= against bpftrace's @[key] = count() on the same event, key and
filter: ns added per event (the workload's loop against no consumer),
interleaved over rounds, and the daemon's CPU per event. A short form of the
rows `make bench` adds ("bpftrace @[key] count accept", "tracerd aggregate
accept"), for checking the one comparison alone.

  bench/agg-bench.py [--build build] [--rounds 5] [--count 400000] [--events fcntl_setlk,wait]
                     [--stack]

--stack: the key is the kernel stack, keys=common_stacktrace against
bpftrace's @[kstack] = count()."""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def in_program(c, a, evname):
    """ns per run inside the consumer's BPF programs (kernel.bpf_stats_enabled,
    which adds its own two clock reads to both)."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    old = bench.read(path).strip()
    per = []
    c.start()
    try:
        for _ in range(a.rounds):
            bench.write(path, "1")
            try:
                t0, n0 = bench.prog_stats(c.proc.p.pid)
                bench.run_workload(a.build, evname, a.count // 4)
                t1, n1 = bench.prog_stats(c.proc.p.pid)
            finally:
                bench.write(path, old)
            if n1 > n0:
                per.append((t1 - t0) / (n1 - n0))
    finally:
        c.stop()
    return bench.median(per), min(per) if per else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=400000)
    ap.add_argument("--events", default="fcntl_setlk,wait")
    ap.add_argument("--stack", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="agg-bench.")
    for evname in a.events.split(","):
        ev = dict(bench.EVENTS[evname])
        if a.stack:
            ev.update(bt_key="kstack", hist="hist:keys=common_stacktrace")
        cons = [bench.NoConsumer(),
                bench.Bpftrace(ev, ev["bt_accept"], tmp, "bpftrace @[key] count", key=ev["bt_key"]),
                bench.Tracerd(ev, ev["accept"], tmp, "tracerd aggregate", a.build,
                              aggregate=ev["hist"])]
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
        inside = {}
        for c in cons[1:]:
            med, low = in_program(c, a, evname)
            print(f"{c.name:<24} inside its BPF program: {med:.0f} ns per event (min {low:.0f})")
            inside[c.name] = med
        names = [c.name for c in cons[1:]]
        print(f"ratio inside the program, {names[1]} / {names[0]}: "
              f"{inside[names[1]] / inside[names[0]]:.2f}; added per event (medians): "
              f"{added_med[names[1]] / added_med[names[0]]:.2f}")


if __name__ == "__main__":
    main()
