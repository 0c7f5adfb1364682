#!/usr/bin/env python3
"""Cost per event of a filter that rejects and one that accepts, tracerd's
(BPF, before the ring buffer) against the kernel's ftrace filter, on the same
workload in the same run. Not a timed test: run as root, read the figures.

    bench/filter-bench.py [--rounds 7] [--count 400000] [--build build]

The workload (bench/filter-loop.c) fires filelock:fcntl_setlk in a tight loop.
Configurations run interleaved, round after round, so that the machine's fast
and slow phases fall on all of them; each run reports the 10th percentile and
median of 4096-iteration chunks. Added cost = configuration - nothing attached.
"""
import argparse
import ctypes
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bpfstats import prog_stats

TRACEFS = "/sys/kernel/tracing"
EVENT = "filelock:fcntl_setlk"
FILTERS = {
    "reject": "ret != 0",
    "accept": "ret == 0",
    "reject5": 'ret != 0 || type == 0 || flags & 0x80 || i_ino == 1 || comm ~ "nomatch*"',
    "accept5": 'ret == 0 && type != 0 && !(flags & 0x80) && i_ino != 1 && comm ~ "filter-loo*"',
    # rejected by its first predicate: short-circuit
    "rejectsc": 'ret != 0 && type == 0 && flags & 0x80 && i_ino == 1 && comm ~ "nomatch*"',
    # 16 compares, 31 instructions: the interpreter's cost per instruction
    "reject16": " || ".join(f"ret == {i + 1}" for i in range(16)),
}


def enable_bpf_stats():
    """BPF_ENABLE_STATS(BPF_STATS_RUN_TIME): the kernel times every BPF
    program run while the returned fd is open (it is closed at exit)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 32)(0)
    fd = libc.syscall(321, 32, ctypes.byref(attr), 128)  # __NR_bpf, BPF_ENABLE_STATS
    return fd if fd >= 0 else None


class Ftrace:
    def __init__(self, filt, name):
        self.filt, self.inst = filt, f"{TRACEFS}/instances/{name}"

    def start(self):
        os.mkdir(self.inst)
        d = f"{self.inst}/events/{EVENT.replace(':', '/')}"
        open(f"{d}/filter", "w").write(self.filt + "\n")
        open(f"{d}/enable", "w").write("1\n")

    def stop(self):
        if os.path.isdir(self.inst):
            open(f"{self.inst}/events/enable", "w").write("0\n")
            os.rmdir(self.inst)


class Tracerd:
    def __init__(self, filt, build, tmp):
        self.filt, self.build, self.tmp, self.proc = filt, build, tmp, None

    def start(self):
        conf = f"{self.tmp}/bench.conf"
        with open(conf, "w") as f:
            f.write(f"[Daemon]\nRingBufferSize=64M\nStatsIntervalSec=0\n"
                    f"[Selection]\nName=bench\nEvents={EVENT}\n")
            if self.filt is not None:
                f.write(f"Filter={self.filt}\n")
        self.err = open(f"{self.tmp}/bench.err", "w+")
        self.proc = subprocess.Popen([f"{self.build}/tracerd", "--config", conf, "--foreground"],
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        for _ in range(400):
            self.err.seek(0)
            if "attached" in self.err.read():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.025)
        raise RuntimeError("tracerd did not attach")

    def sample(self):
        self.stats = prog_stats(self.proc.pid)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=30)
        self.err.seek(0)
        m = re.search(r"delivered=(\d+) lost=(\d+) suppressed=\d+ filtered=(\d+)", self.err.read())
        self.counts = m.groups() if m else None


def run_loop(loop, count):
    out = subprocess.run([loop, str(count)], capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--count", type=int, default=400000)
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="filter-bench.") as tmp:
        loop = f"{tmp}/filter-loop"
        subprocess.run(["cc", "-O2", "-o", loop, f"{here}/filter-loop.c"], check=True)
        configs = {"none": None}
        for k, f in FILTERS.items():
            configs[f"ftrace {k}"] = Ftrace(f, f"tracerd-filter-bench-{os.getpid()}")
            configs[f"tracerd {k}"] = Tracerd(f, args.build, tmp)
        configs["tracerd no filter"] = Tracerd(None, args.build, tmp)
        res = {k: [] for k in configs}
        prog = {k: [] for k in configs}
        stats_fd = enable_bpf_stats()
        for r in range(args.rounds):
            for name, c in configs.items():
                try:
                    if c:
                        c.start()
                    if isinstance(c, Tracerd):
                        t0 = prog_stats(c.proc.pid)
                    res[name].append(run_loop(loop, args.count))
                    if isinstance(c, Tracerd):
                        t1 = prog_stats(c.proc.pid)
                        if t1[1] > t0[1]:
                            prog[name].append((t1[0] - t0[0]) / (t1[1] - t0[1]))
                finally:
                    if c:
                        c.stop()
                if isinstance(c, Tracerd) and c.counts:
                    d, lost, filt = c.counts
                    if int(lost):
                        print(f"# round {r} {name}: {lost} lost", file=sys.stderr)
            print(f"# round {r + 1}/{args.rounds} done", file=sys.stderr)
        base = {s: statistics.median(x[s] for x in res["none"]) for s in ("p10", "p50")}
        print(f"{'configuration':<22} {'p10 ns/iter':>12} {'added':>8} {'p50 ns/iter':>12} {'added':>8}")
        added = {}
        for name in configs:
            p10 = statistics.median(x["p10"] for x in res[name])
            p50 = statistics.median(x["p50"] for x in res[name])
            added[name] = (p10 - base["p10"], p50 - base["p50"])
            print(f"{name:<22} {p10:12.0f} {added[name][0]:8.0f} {p50:12.0f} {added[name][1]:8.0f}")
        print("min p10 over rounds (the fast phase), added to none:")
        lo = min(x["p10"] for x in res["none"])
        for name in configs:
            print(f"  {name:<22} {min(x['p10'] for x in res[name]) - lo:8.0f}")
        if stats_fd is not None:
            print("ns inside tracerd's BPF program per event (kernel BPF stats, median of rounds):")
            for name in configs:
                if prog[name]:
                    print(f"  {name:<22} {statistics.median(prog[name]):8.0f}")
        print("ratios tracerd / ftrace of the added cost (p10, p50):")
        for k in FILTERS:
            a, b = added[f"tracerd {k}"], added[f"ftrace {k}"]
            print(f"  {k:<8} {a[0] / b[0] if b[0] > 0 else float('nan'):5.2f} "
                  f"{a[1] / b[1] if b[1] > 0 else float('nan'):5.2f}")


main()
