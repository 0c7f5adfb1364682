#!/usr/bin/env python3
"""What a rejected event costs, part by part: tracerd's rejecting filter
against the kernel's ftrace filter and against minimal BPF tracepoint
programs (bench/reject-floor.bpf.c), on the same workload, interleaved, with
the workload pinned to each CPU in turn. Not a timed test: run as root.

    bench/reject-floor.py [--rounds 9] [--count 300000] [--event fcntl_setlk|wait]
                          [--filter F] [--build build [--build other/build ...]]
                          [--plain build ...] [--inside-only] [--daemon KEY=VALUE ...]

The workload (bench/filter-loop.c) fires filelock:fcntl_setlk (filter
`type == 1`, as bench/bench.py) or sched:sched_process_wait (`pid == 1`). Per CPU: the
added ns per event (10th percentile and median of 4096-event chunks, median
over rounds, minus nothing attached) and the ratio to ftrace rejecting.
Pinning matters: libbpf's attach_tracepoint() opens the tracepoint's perf
event on CPU 0, so there a program returning 1 also runs perf_tp_event()
over that CPU's list; ":d" rows attach through a disabled perf event instead.

A filter that keeps the events measures what a written record costs:
tracerd writes to stdout (/dev/null). --plain BUILD adds that build without
a Filter= (the shared class program). --inside-only measures only the ns
inside the BPF programs, every configuration started once per round
(A B C A B C ...): the robust figure on a shared machine. A build is a
directory holding `tracerd`; a wrapper script there that sets an
environment variable and execs another tracerd works too.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bpfstats import ns_per_run

TRACEFS = "/sys/kernel/tracing"
EVENTS = {"fcntl_setlk": ("filelock", "fcntl_setlk", "type == 1"),
          "wait": ("sched", "sched_process_wait", "pid == 1")}
SYSTEM, EVENT = EVENTS["fcntl_setlk"][:2]
HERE = os.path.dirname(os.path.abspath(__file__))


class Ftrace:
    def __init__(self, filt):
        self.filt, self.inst = filt, f"{TRACEFS}/instances/reject-floor-{os.getpid()}"

    def start(self):
        os.mkdir(self.inst)
        d = f"{self.inst}/events/{SYSTEM}/{EVENT}"
        open(f"{d}/filter", "w").write(self.filt + "\n")
        open(f"{d}/enable", "w").write("1\n")

    def stop(self):
        open(f"{self.inst}/events/enable", "w").write("0\n")
        os.rmdir(self.inst)


class Prog:
    """One program of reject-floor.bpf.o; NAME:d attaches it disabled."""

    def __init__(self, spec, tmp):
        self.name, _, d = spec.partition(":")
        self.disabled, self.tmp = bool(d), tmp

    def start(self):
        env = dict(os.environ)
        env.pop("DISABLED", None)
        if self.disabled:
            env["DISABLED"] = "1"
        self.p = subprocess.Popen([f"{self.tmp}/loader", f"{self.tmp}/floor.bpf.o", self.name,
                                   SYSTEM, EVENT], stdout=subprocess.PIPE, env=env)
        if not self.p.stdout.readline().startswith(b"attached"):
            raise RuntimeError(f"{self.name} did not attach")

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait()


class Tracerd:
    daemon = []     # --daemon KEY=VALUE lines

    def __init__(self, build, filt, tmp, n):
        self.build, self.conf, self.tmp = build, f"{tmp}/tracerd{n}.conf", tmp
        with open(self.conf, "w") as f:
            f.write("[Daemon]\nRingBufferSize=8M\nStatsIntervalSec=0\nOutput=stdout\n"
                    + "".join(f"{kv}\n" for kv in Tracerd.daemon) +
                    f"[Selection]\nName=bench\nEvents={SYSTEM}:{EVENT}\n")
            if filt:
                f.write(f"Filter={filt}\n")

    def start(self):
        self.err = open(f"{self.tmp}/tracerd.err", "w+")
        self.p = subprocess.Popen([f"{self.build}/tracerd", "--config", self.conf, "--foreground"],
                                  stdout=subprocess.DEVNULL, stderr=self.err)
        for _ in range(2400):
            self.err.seek(0)
            if "attached" in self.err.read():
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.025)
        raise RuntimeError("tracerd did not attach")

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait()
        self.err.seek(0)
        m = re.search(r"summary: selection bench: (\d+) delivered, (\d+) lost", self.err.read())
        if m:
            self.delivered = getattr(self, "delivered", 0) + int(m.group(1))
            self.lost = getattr(self, "lost", 0) + int(m.group(2))


def run_loop(tmp, cpu, count, event):
    out = subprocess.run(["taskset", "-c", cpu, f"{tmp}/filter-loop", str(count), event],
                         capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def inside_once(c, tmp, cpus, count, event):
    """ns per run inside c's BPF programs, one start of it."""
    c.start()
    try:
        return ns_per_run([c.p.pid], lambda: [run_loop(tmp, cpu, count, event) for cpu in cpus])[0]
    finally:
        c.stop()


def inside_only(configs, args, tmp, cpus):
    """--inside-only: every BPF configuration once per round, interleaved."""
    progs = {n: c for n, c in configs.items() if isinstance(c, (Tracerd, Prog))}
    per = {n: [] for n in progs}
    for r in range(args.rounds):
        for name, c in progs.items():
            v = inside_once(c, tmp, cpus, args.count // 4, args.event)
            if v is not None:
                per[name].append(v)
        print(f"# round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{SYSTEM}:{EVENT}, filter `{args.filter}`, CPUs {args.cpus}, {args.rounds} rounds interleaved")
    print("ns inside the BPF program per event (kernel.bpf_stats_enabled; median, min, max of rounds):")
    for name, v in per.items():
        c = progs[name]
        lost = (f"  (lost {c.lost} of {c.lost + c.delivered})"
                if isinstance(c, Tracerd) and hasattr(c, "lost") else "")
        if v:
            print(f"  {name:<48} {statistics.median(v):6.0f} {min(v):6.0f} {max(v):6.0f}{lost}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--count", type=int, default=300000)
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--event", choices=list(EVENTS), default="fcntl_setlk")
    ap.add_argument("--filter")
    ap.add_argument("--progs", default="ret1,ret0,ret1:d,helpers:d,copy48:d,direct:d")
    ap.add_argument("--build", action="append")
    ap.add_argument("--plain", action="append", default=[])
    ap.add_argument("--inside-only", action="store_true")
    ap.add_argument("--daemon", action="append", default=[],
                    help="KEY=VALUE for tracerd's [Daemon], e.g. WakeupBytes=48M with "
                         "RingBufferSize=64M: no consumer drains during a run")
    args = ap.parse_args()
    Tracerd.daemon = args.daemon
    global SYSTEM, EVENT
    SYSTEM, EVENT, default_filter = EVENTS[args.event]
    args.filter = args.filter or default_filter
    builds = args.build or ["build"]
    cpus = args.cpus.split(",")
    with tempfile.TemporaryDirectory(prefix="reject-floor.") as tmp:
        subprocess.run(["cc", "-O2", "-o", f"{tmp}/filter-loop", f"{HERE}/filter-loop.c"], check=True)
        subprocess.run(["cc", "-O2", "-Wall", "-o", f"{tmp}/loader", f"{HERE}/reject-floor-loader.c",
                        "-lbpf"], check=True)
        subprocess.run(["clang", "-g", "-O2", "-target", "bpf",
                        f"-I/usr/include/{os.uname().machine}-linux-gnu", "-c",
                        f"{HERE}/reject-floor.bpf.c", "-o", f"{tmp}/floor.bpf.o"], check=True)
        configs = {"none": None, "ftrace reject": Ftrace(args.filter)}
        for p in filter(None, args.progs.split(",")):
            configs[f"bpf {p}"] = Prog(p, tmp)
        for i, b in enumerate(builds):
            configs[f"tracerd filter [{b}]"] = Tracerd(os.path.abspath(b), args.filter, tmp, i)
        for i, b in enumerate(args.plain):
            configs[f"tracerd no filter [{b}]"] = Tracerd(os.path.abspath(b), None, tmp, f"p{i}")
        if args.inside_only:
            inside_only(configs, args, tmp, cpus)
            return
        res = {(k, c): [] for k in configs for c in cpus}
        for r in range(args.rounds):
            for name, c in configs.items():
                if c:
                    c.start()
                try:
                    time.sleep(0.05)
                    for cpu in cpus:
                        res[(name, cpu)].append(run_loop(tmp, cpu, args.count, args.event))
                finally:
                    if c:
                        c.stop()
            print(f"# round {r + 1}/{args.rounds} done", file=sys.stderr)
        # Time inside tracerd's program, from the kernel's statistics: on
        # only here, as they add two clock reads to every BPF program run.
        inside = {}
        for name, c in configs.items():
            if not isinstance(c, (Tracerd, Prog)):
                continue
            per = []
            c.start()
            try:
                for r in range(args.rounds):
                    v = ns_per_run([c.p.pid], lambda: [run_loop(tmp, cpu, args.count // 4, args.event)
                                                       for cpu in cpus])[0]
                    if v is not None:
                        per.append(v)
            finally:
                c.stop()
            inside[name] = (statistics.median(per), min(per)) if per else (float("nan"),) * 2
        med = lambda name, cpu, s: statistics.median(x[s] for x in res[(name, cpu)])
        low = lambda name, cpu: min(x["p10"] for x in res[(name, cpu)])
        for cpu in cpus:
            print(f"{SYSTEM}:{EVENT}, filter `{args.filter}`, CPU {cpu}: nothing attached {med('none', cpu, 'p10'):.0f} ns per event (p10)")
            print(f"  {'configuration':<40} {'added p10':>9} {'p50':>6} {'min':>6}"
                  f" {'/ftrace p10':>11} {'p50':>6} {'min':>6}")
            ft = {s: med("ftrace reject", cpu, s) - med("none", cpu, s) for s in ("p10", "p50")}
            ft["min"] = low("ftrace reject", cpu) - low("none", cpu)
            for name in configs:
                if name == "none":
                    continue
                a = {s: med(name, cpu, s) - med("none", cpu, s) for s in ("p10", "p50")}
                a["min"] = low(name, cpu) - low("none", cpu)
                rat = {s: a[s] / ft[s] if ft[s] > 0 else float("nan") for s in a}
                print(f"  {name:<40} {a['p10']:9.0f} {a['p50']:6.0f} {a['min']:6.0f}"
                      f" {rat['p10']:11.2f} {rat['p50']:6.2f} {rat['min']:6.2f}")
        print("(added: median over rounds of the p10 or p50 of 4096-event chunks, minus nothing"
              " attached; min: the lowest p10 of any round, minus that of nothing attached)")
        print("ns inside the BPF program per event (kernel.bpf_stats_enabled, median and min of rounds):")
        for name, (m, lo) in inside.items():
            print(f"  {name:<40} {m:6.0f} {lo:6.0f}")


main()
