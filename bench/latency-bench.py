#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Wakeup latency (issue 31): tracerd's inter-event hist triggers against the
same pairing written as a bpftrace script, on one ping-pong workload.

  bench/latency-bench.py [--build build] [--rounds 5] [--pingpongs 200000] [--cpu 1]
                         [--cpu-pairs 1000000] [--compare BUILD...] [--breakdown] [--out FILE]

The workload is bench/latw.c: two processes named latbn-ping and latbn-pong,
pinned to one CPU, a byte back and forth over pipes; each wakeup of a
blocked one is a sched_waking and then the sched_switch to it. Both tools
filter on the comm prefix "latbn" (tracerd `comm ~ "latbn*"`, bpftrace
strncmp(.., "latbn", 5)), key the start by pid, and put the wakeup latency
in ns into a log2 histogram. A "pair" is one latency the tool counted (its
histogram's total): on one CPU a woken task often preempts its waker, so a
round trip gives one or two pairs, and both tools count what they saw.

Three parts, each tool one at a time (the kernel does not run a tracepoint
program while another BPF program runs on that CPU), interleaved round by
round, medians compared:
1. inside the BPF programs, kernel.bpf_stats_enabled: the run time of all
   the tool's programs over the run, per pair and per run. The kernel counts
   a program's time where it was entered: bpf_prog_run() times the program
   the tracepoint ran, and a tail call jumps into the next one without
   passing there, so tracerd's emitted filter programs' figures include the
   accept program and its tail calls to itself, and the accept program's own
   counters stay at zero (checked and printed).
2. end to end, statistics off: the workload's time with the tool minus
   without, per pair; events lost (tracerd: each selection's lost, dropped
   and sink errors, and what the kernel skipped; both: the programs'
   recursion_misses).
3. tracerd's own CPU (utime+stime from /proc/PID/stat, and the threads'
   schedstat run time, finer) over a run of at least --cpu-pairs pairs,
   against an idle tracerd of the same config over the same wall time.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import Proc, file_has, median, read, wait_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATS = "/proc/sys/kernel/bpf_stats_enabled"

# Not tests/integration/latency.sh's "latw": other jobs on a shared machine
# run that test, and their pairs would count here.
WAKING = 'comm ~ "latbn*"'
SWITCH = 'next_comm ~ "latbn*"'

# The config, in ns (bpftrace's nsecs) and with the bench's filters.
TRACERD_CONF = f"""[Daemon]
Output=stdout
StatsIntervalSec=0
[Synthetic]
Event=wakeup_latency u64 lat; pid_t pid; int prio
[Selection]
Name=waking
Events=sched:sched_waking
Aggregate=hist:keys=pid:ts0=common_timestamp if {WAKING}
[Selection]
Name=switch
Events=sched:sched_switch
Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp-$ts0:onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,next_prio) if {SWITCH}
[Selection]
Name=lathist
Events=synthetic:wakeup_latency
Aggregate=hist:keys=lat.log2
AggregateIntervalSec=0
"""

# The script, filtered alike: the comm prefix on both sides.
BPFTRACE_PROG = """tracepoint:sched:sched_waking /strncmp(args->comm, "latbn", 5) == 0/ { @ts[args->pid] = nsecs; }
tracepoint:sched:sched_switch /strncmp(args->next_comm, "latbn", 5) == 0 && @ts[args->next_pid]/ {
  @lat = hist(nsecs - @ts[args->next_pid]); delete(@ts[args->next_pid]); }
"""

# The same, with the work the kernel's hist triggers do besides: each
# trigger's own histogram counts its events per key (the waking's by pid,
# the switch's by next_pid), which tracerd's dump shows as the kernel's hist
# file would. Same work on both sides.
BPFTRACE_PROG_COUNTS = """tracepoint:sched:sched_waking /strncmp(args->comm, "latbn", 5) == 0/ {
  @wk[args->pid] = count(); @ts[args->pid] = nsecs; }
tracepoint:sched:sched_switch /strncmp(args->next_comm, "latbn", 5) == 0 && @ts[args->next_pid]/ {
  @sw[args->next_pid] = count(); @lat = hist(nsecs - @ts[args->next_pid]); delete(@ts[args->next_pid]); }
"""

# --breakdown: tracerd configs that each do part of the work, to see where
# its time goes; per pair of the full config's run in the same round.
BREAKDOWN = {
    "filters only, rejecting": f"""[Daemon]
Output=stdout
StatsIntervalSec=0
[Selection]
Name=waking
Events=sched:sched_waking
Filter=comm ~ "latbnx*"
[Selection]
Name=switch
Events=sched:sched_switch
Filter=next_comm ~ "latbnx*"
""",
    "filters + plain hist keys=pid": f"""[Daemon]
Output=stdout
StatsIntervalSec=0
[Selection]
Name=waking
Events=sched:sched_waking
Filter={WAKING}
Aggregate=hist:keys=pid
AggregateIntervalSec=0
[Selection]
Name=switch
Events=sched:sched_switch
Filter={SWITCH}
Aggregate=hist:keys=next_pid
AggregateIntervalSec=0
""",
    "waking trigger alone (ts0 stored)": f"""[Daemon]
Output=stdout
StatsIntervalSec=0
[Selection]
Name=waking
Events=sched:sched_waking
Aggregate=hist:keys=pid:ts0=common_timestamp if {WAKING}
AggregateIntervalSec=0
""",
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def prog_info(pid):
    """prog id -> bpftool's JSON of each BPF program process pid holds, with
    "tp": the tracepoint it is attached to (bpftool perf), or None."""
    ids = bench.bpf_footprint(pid, ids_only=True)
    tps = {}
    try:
        for e in json.loads(subprocess.run(["bpftool", "-j", "perf", "show"], capture_output=True,
                                           text=True).stdout or "[]"):
            if e.get("pid") == pid:
                tps[e.get("prog_id")] = e.get("tracepoint")
    except ValueError:
        pass
    out = {}
    for i in ids:
        j = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "id", str(i)],
                                      capture_output=True, text=True).stdout or "{}")
        j["tp"] = tps.get(i)
        out[i] = j
    return out


def run_latw(a):
    argv = [f"{a.build}/bench/latw", str(a.pingpongs)]
    if a.cpu >= 0:
        argv.append(str(a.cpu))
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


class Bpftrace:
    def __init__(self, tmp, name="bpftrace", prog=BPFTRACE_PROG):
        self.tmp, self.name = tmp, name
        self.script = f"{tmp}/lat-{abs(hash(name))}.bt"
        with open(self.script, "w") as f:
            f.write(prog)

    def start(self):
        self.out, self.err = f"{self.tmp}/bt.out", f"{self.tmp}/bt.err"
        with open(self.err, "w") as e:
            self.proc = Proc(["bpftrace", "-o", self.out, self.script], stderr=e)
        wait_for(lambda: file_has(self.out, "Attaching") or not self.proc.alive(), what="bpftrace")
        # Its "Attaching" comes before it attaches; wait until both programs are.
        wait_for(lambda: len([p for p in prog_info(self.proc.p.pid).values() if p["tp"]]) >= 2
                 or not self.proc.alive(), what="bpftrace attach")
        if not self.proc.alive():
            raise RuntimeError("bpftrace failed: " + read(self.err))
        self.proc.mark()

    def stop(self):
        misses = sum(p.get("recursion_misses", 0) for p in prog_info(self.proc.p.pid).values())
        cpu_s, _, _ = self.proc.stop(signal.SIGINT)
        text = read(self.out) + read(self.err)
        # "[1K, 2K)   80758 |@@@...|": the histogram's buckets
        pairs = sum(int(x) for x in re.findall(r"^[\[(].*?\)\s+(\d+) \|", text, re.M))
        lost = sum(int(x) for x in re.findall(r"Lost (\d+) events", text))
        return {"pairs": pairs, "lost": lost, "misses": misses, "cpu_s": cpu_s, "text": text}


class Tracerd:
    def __init__(self, tmp, build, name="tracerd", conf=TRACERD_CONF):
        self.tmp, self.build, self.name = tmp, build, name
        self.conf = f"{tmp}/tracerd-{abs(hash(name))}.conf"
        with open(self.conf, "w") as f:
            f.write(conf)

    def start(self):
        self.err = f"{self.tmp}/tracerd-{abs(hash(self.name))}.err"
        self.out = f"{self.tmp}/tracerd-{abs(hash(self.name))}.out"
        with open(self.err, "w") as e, open(self.out, "w") as o:
            self.proc = Proc([f"{self.build}/tracerd", "--config", self.conf, "--foreground"],
                             stderr=e, stdout=o)
        wait_for(lambda: file_has(self.err, "attached") or not self.proc.alive(), what="tracerd")
        if not self.proc.alive():
            raise RuntimeError("tracerd failed: " + read(self.err))
        self.proc.mark()

    def stop(self):
        misses = sum(p.get("recursion_misses", 0) for p in prog_info(self.proc.p.pid).values())
        cpu_s, _, _ = self.proc.stop(signal.SIGINT)
        text = read(self.err)
        sel = {}
        for name, kv in re.findall(r"^tracerd:\s+(\S+)\s+\S+:\S+ (\w+=.*)$", text, re.M):
            sel[name] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", kv)}
        m = re.search(r"summary: (\d+) skipped by the kernel", text)
        skipped = int(m.group(1)) if m else 0
        # skipped: the kernel's, not tracerd's (bpftrace's programs are
        # skipped alike, their recursion_misses); reported beside lost.
        lost = sum(s.get("lost", 0) + s.get("agg_dropped", 0) + s.get("sink_errors", 0)
                             for s in sel.values())
        # The latency histogram's own "Dropped:" (no room for a key), in the dump.
        dropped = [int(x) for x in re.findall(r"Dropped: (\d+)", read(self.out))]
        lost += sum(dropped)
        pairs = sel.get("lathist", {}).get("aggregated", 0)
        return {"pairs": pairs, "lost": lost, "skipped": skipped, "misses": misses, "cpu_s": cpu_s,
                "sel": sel, "text": text}


# ---------------------------------------------------------------- 1. inside

def inside_once(tool, a):
    """One start of tool: its programs' run time and count over one workload
    run, per program, with the statistics on only meanwhile."""
    tool.start()
    old = read(STATS)
    try:
        pid = tool.proc.p.pid
        before = prog_info(pid)
        with open(STATS, "w") as f:
            f.write("1\n")
        try:
            w = run_latw(a)
        finally:
            with open(STATS, "w") as f:
                f.write(old)
        after = prog_info(pid)
    finally:
        res = tool.stop()
    progs = {}
    for i, p in after.items():
        b = before.get(i, {})
        progs[i] = {"name": p.get("name"), "tp": p.get("tp"),
                    "ns": p.get("run_time_ns", 0) - b.get("run_time_ns", 0),
                    "cnt": p.get("run_cnt", 0) - b.get("run_cnt", 0),
                    "xlated": p.get("bytes_xlated"), "jited": p.get("bytes_jited")}
    ns = sum(p["ns"] for p in progs.values())
    cnt = sum(p["cnt"] for p in progs.values())
    res.update(w, progs=progs, bpf_ns=ns, bpf_cnt=cnt,
               ns_pair=ns / res["pairs"] if res["pairs"] else float("nan"),
               ns_run=ns / cnt if cnt else float("nan"))
    return res


def fmt(x, d=0):
    return "n/a" if x is None or x != x else f"{x:.{d}f}"


def inside(tools, a, p):
    per = {t.name: [] for t in tools}
    foreign = 0
    for r in range(a.rounds):
        foreign += bool(bench.foreign_bpf())
        for t in tools:
            per[t.name].append(inside_once(t, a))
        # A breakdown config pairs nothing, or not all: per pair of the
        # full config, run on the same workload in this round.
        ref = per["tracerd"][-1]["pairs"]
        for t in tools:
            x = per[t.name][-1]
            if getattr(t, "breakdown", False) and ref:
                x.update(pairs=ref, ns_pair=x["bpf_ns"] / ref)
        log(f"   inside: round {r + 1}/{a.rounds} done")
    p(f"\n## 1. inside the BPF programs (kernel.bpf_stats_enabled; {a.pingpongs} ping-pongs per run, "
      f"{a.rounds} interleaved rounds, medians; the statistics' own two clock reads per run included; "
      f"rounds that began with others' tracing BPF programs loaded: {foreign})")
    p(f"{'tool':<42} {'ns/pair':>8} {'min..max':>13} {'ns/run':>7} {'runs/pair':>9} {'pairs':>8} "
      f"{'lost':>5} {'rec.misses':>10}")
    res = {}
    for t in tools:
        rs = per[t.name]
        v = [r["ns_pair"] for r in rs]
        res[t.name] = median(v)
        p(f"{t.name:<42} {fmt(median(v)):>8} {fmt(min(v)) + '..' + fmt(max(v)):>13} "
          f"{fmt(median([r['ns_run'] for r in rs])):>7} "
          f"{fmt(median([r['bpf_cnt'] / r['pairs'] for r in rs if r['pairs']]), 2):>9} "
          f"{int(median([r['pairs'] for r in rs])):>8} {sum(r['lost'] for r in rs):>5} "
          f"{sum(r['misses'] for r in rs):>10}")
    p("per program (median ns per run of it, runs per pair; xlated/JIT bytes):")
    for t in tools:
        rs = per[t.name]
        keys = sorted({(q["tp"] or "-", q["name"]) for r in rs for q in r["progs"].values()})
        for tp, name in keys:
            qs = [q for r in rs for q in r["progs"].values() if (q["tp"] or "-", q["name"]) == (tp, name)]
            per_run = [q["ns"] / q["cnt"] for q in qs if q["cnt"]]
            per_pair = [q["ns"] / r["pairs"] for r in rs for q in r["progs"].values()
                        if (q["tp"] or "-", q["name"]) == (tp, name) and r["pairs"]]
            cnt = [q["cnt"] / r["pairs"] for r in rs for q in r["progs"].values()
                   if (q["tp"] or "-", q["name"]) == (tp, name) and r["pairs"]]
            p(f"  {t.name:<32} {tp if tp != '-' else '(not attached)':<14} {name:<20} "
              f"{fmt(median(per_run)) if per_run else 'not run':>6} ns/run, "
              f"{fmt(median(per_pair))} ns/pair, {fmt(median(cnt), 2)} runs/pair; "
              f"{qs[0]['xlated']}/{qs[0]['jited']} bytes")
    return res, per


# ---------------------------------------------------------------- 2. end to end

class NoTool:
    name = "none"

    def start(self):
        pass

    def stop(self):
        return {"pairs": None, "lost": 0, "misses": 0, "cpu_s": 0.0}


def per_pair(r, base, key):
    """ns the tool added per pair, from one latw figure (per round trip)
    against the no-tool runs' median of it."""
    return (r[key] - base[key]) * r["rounds"] / r["pairs"]


def end_to_end(tools, a, p):
    allt = [NoTool()] + tools
    per = {t.name: [] for t in allt}
    foreign = 0
    for r in range(a.rounds):
        foreign += bool(bench.foreign_bpf())
        for t in allt:
            t.start()
            try:
                time.sleep(0.05)
                w = run_latw(a)
            finally:
                res = t.stop()
            res.update(w)
            per[t.name].append(res)
        log(f"   end to end: round {r + 1}/{a.rounds} done")
    base = {k: median([r[k] for r in per["none"]]) for k in ("ns_per_round", "p50", "p10")}
    p(f"\n## 2. end to end (statistics off; {a.pingpongs} ping-pongs per run on CPU {a.cpu}, "
      f"{a.rounds} interleaved rounds; no tool: {fmt(base['ns_per_round'])} ns per ping-pong, "
      f"chunks' p50 {fmt(base['p50'])}, p10 {fmt(base['p10'])}; rounds that began with others' "
      f"tracing BPF programs loaded: {foreign})")
    p("added ns/pair: from the whole run's time, as make bench's rows; beside it the same from "
      "the chunks' median and 10th percentile time per ping-pong (less moved by other tenants' "
      "bursts); medians over rounds")
    p(f"{'tool':<34} {'added ns/pair':>13} {'min..max':>13} {'p50-based':>10} {'p10-based':>9} "
      f"{'pairs/run':>10} {'lost':>5} {'skipped':>7} {'rec.misses':>10} {'tool CPU ms/run':>15}")
    res = {}
    for t in tools:
        rs = [r for r in per[t.name] if r["pairs"]]
        added = [per_pair(r, base, "ns_per_round") for r in rs]
        res[t.name] = {"added": median(added), "lost": sum(r["lost"] for r in rs),
                       "skipped": sum(r.get("skipped", 0) for r in rs),
                       "misses": sum(r["misses"] for r in rs),
                       "p50": median([per_pair(r, base, "p50") for r in rs]),
                       "p10": median([per_pair(r, base, "p10") for r in rs])}
        x = res[t.name]
        p(f"{t.name:<34} {fmt(x['added']):>13} {fmt(min(added)) + '..' + fmt(max(added)):>13} "
          f"{fmt(x['p50']):>10} {fmt(x['p10']):>9} {int(median([r['pairs'] for r in rs])):>10} "
          f"{x['lost']:>5} {x['skipped']:>7} {x['misses']:>10} "
          f"{fmt(median([r['cpu_s'] * 1e3 for r in rs]), 1):>15}")
    return res, per


# ---------------------------------------------------------------- 3. daemon CPU

def cpu_of(pid):
    """(utime+stime seconds of the whole process, sum of its live threads'
    schedstat run time in seconds)."""
    f = read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()
    st = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    ss = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            ss += int(read(f"/proc/{pid}/task/{tid}/schedstat").split()[0])
        except OSError:
            pass
    return st, ss / 1e9


def daemon_cpu(a, tmp, p):
    rounds = max(a.cpu_pairs, 1)  # at least one pair per ping-pong: enough ping-pongs
    res = {"busy": [], "idle": []}
    for r in range(max(1, a.cpu_rounds)):
        t = Tracerd(tmp, a.build, "tracerd cpu")
        t.start()
        try:
            c0, w0 = cpu_of(t.proc.p.pid), time.monotonic()
            argv = [f"{a.build}/bench/latw", str(rounds)] + ([str(a.cpu)] if a.cpu >= 0 else [])
            subprocess.run(argv, capture_output=True, check=True)
            wall = time.monotonic() - w0
            c1 = cpu_of(t.proc.p.pid)
        finally:
            out = t.stop()
        res["busy"].append((c1[0] - c0[0], c1[1] - c0[1], wall, out["pairs"], out["lost"]))
        t.start()
        try:
            c0 = cpu_of(t.proc.p.pid)
            time.sleep(wall)
            c1 = cpu_of(t.proc.p.pid)
        finally:
            out = t.stop()
        res["idle"].append((c1[0] - c0[0], c1[1] - c0[1], wall, out["pairs"], out["lost"]))
        log(f"   daemon CPU: round {r + 1} done")
    p(f"\n## 3. tracerd's own CPU over >= {a.cpu_pairs} pairs (ping-pongs on CPU {a.cpu}, the issue's "
      f"config), against an idle tracerd of the same config over the same wall time; "
      f"{a.cpu_rounds} rounds, each a busy run then an idle one")
    p(f"{'run':<6} {'pairs':>9} {'wall s':>7} {'stat utime+stime ms':>20} {'schedstat ms':>13} {'lost':>5}")
    for kind in ("busy", "idle"):
        for st, ss, wall, pairs, lost in res[kind]:
            p(f"{kind:<6} {pairs:>9} {wall:>7.2f} {st * 1e3:>20.0f} {ss * 1e3:>13.2f} {lost:>5}")
    b = median([x[1] for x in res["busy"]])
    i = median([x[1] for x in res["idle"]])
    pairs = median([x[3] for x in res["busy"]])
    p(f"median schedstat: busy {b * 1e3:.2f} ms, idle {i * 1e3:.2f} ms; difference per pair "
      f"{(b - i) * 1e9 / pairs if pairs else float('nan'):.2f} ns")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pingpongs", type=int, default=200000)
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1,
                    help="the CPU the workload is pinned to (-1: not pinned)")
    ap.add_argument("--cpu-pairs", type=int, default=1000000)
    ap.add_argument("--cpu-rounds", type=int, default=2)
    ap.add_argument("--compare", nargs="*", default=[], help="more tracerd builds, same rounds")
    ap.add_argument("--breakdown", action="store_true",
                    help="also, inside the programs: tracerd configs doing part of the work")
    ap.add_argument("--parts", default="1,2,3")
    ap.add_argument("--out")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("latency-bench.py: needs root")
    a.build = os.path.abspath(a.build)
    a.compare = [os.path.abspath(b) for b in a.compare]
    now = datetime.datetime.now(datetime.timezone.utc)
    path = a.out or f"{ROOT}/bench/results/{now:%Y-%m-%d}-latency.txt"
    tmp = tempfile.mkdtemp(prefix="latency-bench.")
    parts = a.parts.split(",")

    def on_term(sig, frame):
        raise KeyboardInterrupt  # through every cleanup below
    signal.signal(signal.SIGTERM, on_term)

    f = open(path + ".tmp", "w")

    def p(*x):
        print(*x, file=f, flush=True)
        print(*x, flush=True)
    try:
        ver = subprocess.run(["bpftrace", "--version"], capture_output=True, text=True).stdout.strip()
        git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True).stdout.strip()
        p(f"# wakeup latency benchmark (issue 31), {now:%Y-%m-%d %H:%M} UTC")
        p(f"kernel {platform.release()}, {os.cpu_count()} CPUs, load average at start "
          f"{' '.join(read('/proc/loadavg').split()[:3])}; {ver}; tracerd {git}")
        fb = bench.foreign_bpf()
        if fb:
            p(f"WARNING: tracing BPF programs not ours loaded at start: {' '.join(fb)}")
        p("tracerd config:\n    " + TRACERD_CONF.strip().replace("\n", "\n    "))
        p("bpftrace script:\n    " + BPFTRACE_PROG.strip().replace("\n", "\n    "))
        tools = [Bpftrace(tmp), Tracerd(tmp, a.build)]
        tools += [Tracerd(tmp, b, f"tracerd ({os.path.basename(os.path.dirname(b)) or b})")
                  for b in a.compare]
        tools.append(Bpftrace(tmp, "bpftrace + trigger hitcounts", BPFTRACE_PROG_COUNTS))
        if a.breakdown:
            for k, conf in BREAKDOWN.items():
                tools.append(Tracerd(tmp, a.build, f"tracerd: {k}", conf))
                tools[-1].breakdown = True
        ins = e2e = None
        if "1" in parts:
            ins, _ = inside(tools, a, p)
        if "2" in parts:
            e2e, _ = end_to_end(tools[:2 + len(a.compare)], a, p)
        if "3" in parts:
            daemon_cpu(a, tmp, p)
        p("\ntargets (ratios in this run):")
        if ins:
            t, b = ins["tracerd"], ins["bpftrace"]
            p(f"  [{'met' if t <= b else 'MISSED'}] inside the programs: tracerd {fmt(t)} ns/pair "
              f"<= bpftrace {fmt(b)} ns/pair ({fmt(t / b, 2)}x)")
            c = ins["bpftrace + trigger hitcounts"]
            p(f"  [{'met' if t <= c else 'MISSED'}] the same work (bpftrace also counting each "
              f"trigger's events per key, as the kernel's hist triggers do): tracerd {fmt(t)} "
              f"ns/pair <= {fmt(c)} ns/pair ({fmt(t / c, 2)}x)")
        if e2e:
            t, b = e2e["tracerd"], e2e["bpftrace"]
            p(f"  [{'met' if t['added'] <= b['added'] else 'MISSED'}] end to end: tracerd "
              f"{fmt(t['added'])} ns/pair <= 1.0 x bpftrace {fmt(b['added'])} ns/pair "
              f"({fmt(t['added'] / b['added'], 2)}x)")
            p(f"  [{'met' if t['lost'] == 0 else 'MISSED'}] end to end: tracerd lost {t['lost']} "
              f"(skipped by the kernel, a BPF program already running on the CPU: tracerd "
              f"{t['skipped']}, bpftrace's programs' recursion misses {b['misses']})")
        fb = bench.foreign_bpf()
        if fb:
            p(f"WARNING: tracing BPF programs not ours loaded at the end: {' '.join(fb)}")
    finally:
        f.close()
        shutil.rmtree(tmp, ignore_errors=True)
    os.replace(path + ".tmp", path)
    log(f"results: {path}")


if __name__ == "__main__":
    main()
