#!/usr/bin/env python3
"""What a kernel stack costs a record, part by part (issue 30): minimal BPF
programs that write a record to a ring buffer with one way each of taking
the stack (bench/stack-floor.bpf.c), tracerd with and without
StackTrace=kernel, and `perf record` with and without -g, on the same
workload (filelock:fcntl_setlk from bench/filter-loop.c), interleaved over
rounds, the workload pinned to each CPU in turn. Not a timed test: run as root.

    bench/stack-floor.py [--rounds 7] [--count 200000] [--cpus 0,1]
                         [--progs base,k65,...] [--build build ...] [--no-perf]
                         [--inside-only] [--frames]

Per configuration: the ns the workload's loop iteration gained over nothing
attached (its thread's CPU time, which the tracepoint's probes run in; 10th
percentile and median of 4096-event chunks, median over rounds; with --wall,
make bench's measure: bench/workload's wall time, not pinned), and the ns
inside the BPF programs (kernel.bpf_stats_enabled, their own clock reads
included; one start per round, A B C A B C ...). --frames prints the stack a
tracepoint program runs on, the tracing machinery above the tracepoint
included: the frames every walk unwinds through and then drops.

The programs (each a header, the event's first 64 bytes, then):
  base   no stack                 k65    65 frames asked, from a subprogram
  k65i   65 frames, no subprogram k6i, k8i, k16i, k32i  fewer asked (less zeroed)
  k65s3  3 frames skipped         k65x2  two walks (a second helper call)
  k65d   into the ring's reservation (no copy, fixed size)
  k65n3  three subprograms deep   tail:P P reached by a tail call
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bpfstats import ns_per_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM, EVENT = "filelock", "fcntl_setlk"
PROGS = "base,k65,k65i,k8i,k65s3,k65x2,k65d,k65n3,tail:k65i"


class Prog:
    def __init__(self, name, tmp):
        self.name, self.tmp = name, tmp

    def start(self):
        self.proc = bench.Proc([f"{self.tmp}/loader", f"{self.tmp}/sf.bpf.o", self.name,
                                SYSTEM, EVENT], stdout=subprocess.PIPE)
        if not self.proc.p.stdout.readline().startswith(b"attached"):
            raise RuntimeError(f"{self.name} did not attach")

    def stop(self):
        os.kill(self.proc.p.pid, signal.SIGINT)
        self.out = self.proc.p.stdout.read().decode()
        self.proc.p.wait()
        return {}


WALL = None     # --wall BUILD: bench.py's workload, wall time, not pinned


def run_loop(tmp, cpu, count):
    if WALL:
        return bench.run_workload(WALL, "fcntl_setlk", count)
    out = subprocess.run(["taskset", "-c", cpu, f"{tmp}/filter-loop", str(count)],
                         capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def pid_of(c):
    return c.proc.p.pid


def inside_once(c, tmp, cpus, count):
    c.start()
    try:
        return ns_per_run([pid_of(c)], lambda: [run_loop(tmp, cpu, count) for cpu in cpus])[0]
    finally:
        c.stop()


def symbolize(addrs):
    syms = []
    with open("/proc/kallsyms") as f:
        for line in f:
            a, _, n = line.split()[:3]
            syms.append((int(a, 16), n))
    syms.sort()
    out = []
    for a in addrs:
        lo, hi = 0, len(syms)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if syms[mid][0] <= a else (lo, mid)
        out.append(f"{syms[lo][1]}+{a - syms[lo][0]:#x}")
    return out


def frames(tmp):
    c = Prog("frames", tmp)
    c.start()
    try:
        run_loop(tmp, "0", 4096)
    finally:
        c.stop()
    m = re.search(r"frames\(\d+\):([ 0-9a-f]*)", c.out)
    if not m:
        print("frames: no stack")
        return
    print("the stack under a tracepoint program on filelock:fcntl_setlk (bpf_get_task_stack, "
          "innermost first; bpf_prog_* is the program, whatever name kallsyms' neighbour gives):")
    for s in symbolize([int(x, 16) for x in m.group(1).split()]):
        print(f"  {s}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--count", type=int, default=200000)
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--progs", default=PROGS)
    ap.add_argument("--build", action="append", default=[])
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--inside-only", action="store_true")
    ap.add_argument("--frames", action="store_true")
    ap.add_argument("--wall", metavar="BUILD",
                    help="time BUILD/bench/workload (make bench's workload and measure: wall "
                         "time, not pinned) instead of filter-loop's CPU time")
    a = ap.parse_args()
    global WALL
    WALL = a.wall and os.path.abspath(a.wall)
    cpus = ["any"] if WALL else a.cpus.split(",")
    ev = bench.EVENTS["fcntl_setlk"]
    with tempfile.TemporaryDirectory(prefix="stack-floor.") as tmp:
        subprocess.run(["cc", "-O2", "-o", f"{tmp}/filter-loop", f"{HERE}/filter-loop.c"], check=True)
        subprocess.run(["cc", "-O2", "-Wall", "-o", f"{tmp}/loader", f"{HERE}/stack-floor-loader.c",
                        "-lbpf"], check=True)
        subprocess.run(["clang", "-g", "-O2", "-target", "bpf",
                        f"-I/usr/include/{os.uname().machine}-linux-gnu", "-c",
                        f"{HERE}/stack-floor.bpf.c", "-o", f"{tmp}/sf.bpf.o"], check=True)
        print(f"# load average at start: {' '.join(bench.read('/proc/loadavg').split()[:3])}")
        if a.frames:
            frames(tmp)
            return
        confs = {"none": None}
        if not a.no_perf and not a.inside_only:
            confs["perf record"] = bench.PerfRecord(ev, None, tmp, "perf record")
            confs["perf record -g"] = bench.PerfRecord(ev, None, tmp, "perf record -g", callgraph=True)
        for p in filter(None, a.progs.split(",")):
            confs[f"bpf {p}"] = Prog(p, tmp)
        for b in a.build:
            b = os.path.abspath(b)
            confs[f"tracerd store zstd [{b}]"] = bench.Tracerd(ev, None, tmp, f"store {b}", b,
                                                               output="store:zstd")
            confs[f"tracerd store zstd kstack [{b}]"] = bench.Tracerd(
                ev, None, tmp, f"kstack {b}", b, output="store:zstd", stack="kernel")
        inside = {n: [] for n, c in confs.items() if isinstance(c, (Prog, bench.Tracerd))}
        res = {(n, cpu): [] for n in confs for cpu in cpus}
        for r in range(a.rounds):
            for name, c in confs.items():
                if not a.inside_only:
                    if c:
                        c.start()
                    try:
                        time.sleep(0.05)
                        for cpu in cpus:
                            res[(name, cpu)].append(run_loop(tmp, cpu, a.count))
                    finally:
                        if c:
                            c.stop()
                if name in inside:
                    v = inside_once(c, tmp, cpus, a.count // 4)
                    if v is not None:
                        inside[name].append(v)
            print(f"# round {r + 1}/{a.rounds} done", file=sys.stderr)
        med = lambda n, cpu, s: statistics.median(x[s] for x in res[(n, cpu)])
        if not a.inside_only:
            for cpu in cpus:
                print(f"{SYSTEM}:{EVENT}, CPU {cpu}: nothing attached {med('none', cpu, 'p10'):.0f} ns "
                      f"per iteration (p10), {a.rounds} rounds of {a.count} events")
                print(f"  {'configuration':<58} {'added p10':>9} {'p50':>6} {'mean':>6}")
                for name in confs:
                    if name != "none":
                        d = {s: med(name, cpu, s) - med("none", cpu, s)
                             for s in ("p10", "p50", "ns_per_iter")}
                        print(f"  {name:<58} {d['p10']:9.0f} {d['p50']:6.0f} {d['ns_per_iter']:6.0f}")
        print("ns inside the BPF programs per event (kernel.bpf_stats_enabled; median, min, max of rounds):")
        for name, v in inside.items():
            if v:
                print(f"  {name:<58} {statistics.median(v):6.0f} {min(v):6.0f} {max(v):6.0f}")


main()
