#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tracerd against ftrace, perf record and bpftrace, on the same workload, in one run.

Run by `make bench` as root. For each event (bench/workload.c fires it COUNT
times), every consumer runs in turn, round after round (A B C A B C ...), so
that the VM's slow and fast phases fall on all of them alike. What a consumer
costs is the workload's ns per iteration with it minus without it, in the
same round. Then: the highest rate each end-to-end consumer sustains without
loss, and the BPF footprint of selecting 1, 10 and all events of a large
class, against loading one program per event.

Everything it sets up it removes: tracefs instances, enabled events and
filters, the processes it started, its temporary files.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpfstats import ns_per_run  # noqa: E402

TRACEFS = "/sys/kernel/tracing"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The events. accept/reject are ftrace filters that keep every event the
# workload fires, or none of them; tracerd's Filter= takes the same syntax,
# bpftrace gets the same test as a predicate.
EVENTS = {
    "fcntl_setlk": {
        "tp": "filelock:fcntl_setlk",
        "why": "class filelock_lock (4 events), __print_flags + __print_symbolic",
        "accept": "type == 2", "reject": "type == 1",   # F_UNLCK, F_WRLCK
        "bt_accept": "args->type == 2", "bt_reject": "args->type == 1",
        "bt_print": 'printf("%d %u %d %lld\\n", pid, args->flags, args->type, args->fl_start)',
        "bt_key": "args->type", "hist": "hist:keys=type",
    },
    "wait": {
        "tp": "sched:sched_process_wait",
        "why": "__data_loc char[] comm",
        "accept": "pid == 0", "reject": "pid == 1",       # wait4(-1): no pid
        "bt_accept": "args->pid == 0", "bt_reject": "args->pid == 1",
        "bt_print": 'printf("%d %s %d\\n", pid, str(args->comm), args->prio)',
        "bt_key": "str(args->comm)", "hist": "hist:keys=comm",
    },
}

FOOTPRINT_CLASS = ("xfs:*", "xfs_da_class")
RING_BYTES = 8 << 20


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def read(path):
    with open(path) as f:
        return f.read()


class Proc:
    """A process we started; stop() returns its CPU seconds and peak RSS."""

    def __init__(self, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=None):
        self.p = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=stdin)
        self.rusage = None
        self.cpu0 = 0.0

    def cpu_now(self):
        try:
            f = read(f"/proc/{self.p.pid}/stat").rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError):
            return 0.0

    def mark(self):
        """From now on: CPU time spent starting up is not what an event costs."""
        self.cpu0 = self.cpu_now()

    def alive(self):
        return self.p.poll() is None

    def stop(self, sig=signal.SIGINT, timeout=15.0):
        """Signals, waits (SIGKILL after timeout); returns (cpu_s, maxrss_kb, hung)."""
        hung = False
        # Peak RSS from the kernel's high-water mark of this program's own
        # memory: ru_maxrss would count the Python that forked it.
        try:
            hwm = int(re.search(r"VmHWM:\s+(\d+)", read(f"/proc/{self.p.pid}/status")).group(1))
        except (OSError, AttributeError):
            hwm = 0
        self.hwm = max(getattr(self, "hwm", 0), hwm)
        if self.p.returncode is None:
            # Not Popen.send_signal: it may reap the child, and lose its rusage.
            try:
                os.kill(self.p.pid, sig)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + timeout
            while True:
                pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
                if pid:
                    self.p.returncode = os.waitstatus_to_exitcode(status)
                    self.rusage = ru
                    break
                if time.monotonic() > deadline:
                    hung = True
                    self.p.kill()
                    pid, status, ru = os.wait4(self.p.pid, 0)
                    self.p.returncode = os.waitstatus_to_exitcode(status)
                    self.rusage = ru
                    break
                time.sleep(0.02)
        ru = self.rusage
        if ru is None:
            return 0.0, 0, hung
        return max(0.0, ru.ru_utime + ru.ru_stime - self.cpu0), self.hwm, hung


def wait_for(pred, timeout=60.0, what="consumer"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.02)
    raise RuntimeError(f"{what} did not get ready in {timeout:.0f} s")


def file_has(path, text):
    try:
        return text in read(path)
    except OSError:
        return False


# ---------------------------------------------------------------- consumers
# Each has start() (returns once it records) and stop() -> dict with
# delivered (events it got), lost (events it says it dropped), cpu_s, rss_kb.

class NoConsumer:
    name = "none"

    def start(self):
        pass

    def stop(self):
        return {"delivered": None, "lost": 0, "cpu_s": 0.0, "rss_kb": 0}


class Ftrace:
    """A tracefs instance, its per-CPU trace_pipe_raw drained to files by bench/drain.c."""

    def __init__(self, ev, filt, tmp, label, build):
        self.ev, self.filt, self.tmp, self.name = ev, filt, tmp, label
        self.build = build
        self.sys, self.event = ev["tp"].split(":")
        self.inst = f"{TRACEFS}/instances/tracerd-bench-{os.getpid()}"
        self.readers = []

    def _evdir(self):
        return f"{self.inst}/events/{self.sys}/{self.event}"

    def start(self):
        self.cleanup()  # left over by a run that was killed
        os.mkdir(self.inst)
        write(f"{self.inst}/trace_clock", "mono")
        # The same total as tracerd's ring: RING_BYTES over the CPUs.
        write(f"{self.inst}/buffer_size_kb", str(RING_BYTES // 1024 // os.cpu_count()))
        if self.filt:
            write(f"{self._evdir()}/filter", self.filt)
        for cpu in range(os.cpu_count()):
            self.readers.append(Proc([f"{self.build}/bench/drain",
                                      f"{self.inst}/per_cpu/cpu{cpu}/trace_pipe_raw",
                                      f"{self.tmp}/ftrace.cpu{cpu}"]))
        write(f"{self._evdir()}/enable", "1")
        for r in self.readers:
            r.mark()

    def stop(self):
        delivered = lost = 0
        try:
            write(f"{self._evdir()}/enable", "0")
            time.sleep(0.2)
            for cpu in range(os.cpu_count()):
                st = dict(l.split(":", 1) for l in read(f"{self.inst}/per_cpu/cpu{cpu}/stats").splitlines())
                delivered += int(st["read events"]) + int(st["entries"])
                lost += int(st["overrun"]) + int(st["dropped events"]) + int(st["commit overrun"])
        finally:
            cpu_s, rss = 0.0, 0
            for r in self.readers:
                c, m, _ = r.stop(signal.SIGTERM)
                cpu_s += c
                rss = max(rss, m)
            self.readers = []
            self.cleanup()
        for f in os.listdir(self.tmp):
            if f.startswith("ftrace.cpu"):
                os.unlink(f"{self.tmp}/{f}")
        return {"delivered": delivered, "lost": lost, "cpu_s": cpu_s, "rss_kb": rss}

    def cleanup(self):
        if not os.path.isdir(self.inst):
            return
        try:
            write(f"{self._evdir()}/enable", "0")
            write(f"{self._evdir()}/filter", "0")
        except OSError:
            pass
        for _ in range(50):
            try:
                os.rmdir(self.inst)
                return
            except OSError:
                time.sleep(0.1)


class PerfRecord:
    """`perf record -a` of the one event; started disabled, enabled through its
    control fifo, so that its start-up is not measured."""

    def __init__(self, ev, filt, tmp, label, compress=False, callgraph=False):
        self.ev, self.filt, self.tmp, self.name = ev, filt, tmp, label
        self.compress = compress  # -z: the bytes on disk are compared with the store's
        self.callgraph = callgraph  # -g: kernel and user stacks, against StackTrace=

    def start(self):
        self.data = f"{self.tmp}/perf.data"
        ctl, ack = f"{self.tmp}/perf.ctl", f"{self.tmp}/perf.ack"
        for f in (ctl, ack):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        argv = ["perf", "record", "-q", "-e", self.ev["tp"], "-a", "-D", "-1",
                "--control", f"fifo:{ctl},{ack}", "-o", self.data]
        if self.compress:
            argv.insert(2, "-z")
        if self.callgraph:
            argv.insert(2, "-g")
        if self.filt:
            argv[5:5] = ["--filter", self.filt]
        self.err = f"{self.tmp}/perf.err"
        with open(self.err, "w") as e:
            self.proc = Proc(argv, stderr=e, stdout=e)
        self.ctl = os.open(ctl, os.O_RDWR)
        self.ack = os.open(ack, os.O_RDWR)
        os.write(self.ctl, b"enable\n")
        deadline = time.monotonic() + 20
        buf = b""
        while b"ack" not in buf:
            if time.monotonic() > deadline or not self.proc.alive():
                raise RuntimeError("perf record did not start: " + read(self.err))
            buf += os.read(self.ack, 64)
        self.proc.mark()

    def stop(self):
        cpu_s, rss, _ = self.proc.stop(signal.SIGINT)
        os.close(self.ctl)
        os.close(self.ack)
        # Counting what it wrote is not part of what it cost.
        out = subprocess.run(["perf", "report", "-i", self.data, "--stats"],
                             capture_output=True, text=True).stdout
        m = re.search(r"SAMPLE events:\s+(\d+)", out)
        lost = sum(int(x) for x in re.findall(r"LOST(?:_SAMPLES)? events:\s+(\d+)", out))
        size = os.path.getsize(self.data)
        os.unlink(self.data)
        delivered = int(m.group(1)) if m else 0
        return {"delivered": delivered, "lost": lost, "cpu_s": cpu_s,
                "rss_kb": rss, "bytes_ev": size / delivered if delivered else float("nan")}


class Bpftrace:
    def __init__(self, ev, pred, tmp, label, count=False, key=None):
        self.ev, self.pred, self.tmp, self.name, self.count = ev, pred, tmp, label, count
        self.key = key  # @[key] = count(): a map keyed as Aggregate= keys it
        # printf costs tens of microseconds per event here: a tenth of the
        # events is enough to measure it, and keeps the run short.
        self.count_scale = 1 if count else 0.1

    def start(self):
        action = f"@n[{self.key}] = count();" if self.key else \
            "@n = count();" if self.count else self.ev["bt_print"] + ";"
        pred = f"/{self.pred}/ " if self.pred else ""
        prog = f"tracepoint:{self.ev['tp']} {pred}{{ {action} }}"
        self.out = f"{self.tmp}/bpftrace.out"
        with open(f"{self.tmp}/bpftrace.err", "w") as e:
            self.proc = Proc(["bpftrace", "-o", self.out, "-e", prog], stderr=e)
        wait_for(lambda: file_has(self.out, "Attaching") or not self.proc.alive(), what="bpftrace")
        # "Attaching N probes" comes before the attaching, and its output
        # to a file is buffered, so nothing tells when it is done: wait.
        time.sleep(1.0)
        self.proc.mark()
        if not self.proc.alive():
            raise RuntimeError("bpftrace failed: " + read(f"{self.tmp}/bpftrace.err"))

    def stop(self):
        cpu_s, rss, _ = self.proc.stop(signal.SIGINT)
        text = read(self.out) + read(f"{self.tmp}/bpftrace.err")
        lost = sum(int(x) for x in re.findall(r"Lost (\d+) events", text))
        if self.key:
            # "@n[key]: N", or a kstack key's frames on lines of their own, then "]: N"
            delivered = sum(int(x) for x in re.findall(r"^(?:@n\[.*)?\]: (\d+)$", text, re.M))
        elif self.count:
            m = re.search(r"@n: (\d+)", text)
            delivered = int(m.group(1)) if m else 0
        else:
            delivered = sum(1 for l in text.splitlines() if l and l[0].isdigit())
        os.unlink(self.out)
        return {"delivered": delivered, "lost": lost, "cpu_s": cpu_s, "rss_kb": rss}


class Tracerd:
    def __init__(self, ev, filt, tmp, label, build, output="stdout", journald=None, ring_only=False,
                 aggregate=None, stack=None, unit=None):
        self.ev, self.filt, self.tmp, self.name = ev, filt, tmp, label
        self.build, self.output, self.journald = build, output, journald
        self.ring_only = ring_only  # bench/ring-drain.c: the daemon's code, no rendering
        self.conf = f"{tmp}/tracerd-{abs(hash(label))}.conf"
        # output "store:CODEC": the event store, in a directory of its own
        self.store = f"{tmp}/store-{abs(hash(label))}" if output.startswith("store") else None
        with open(self.conf, "w") as f:
            f.write(f"[Daemon]\nRingBufferSize={RING_BYTES // (1 << 20)}M\nOutput={output.split(':')[0]}\n"
                    "FlushIntervalMSec=100\nStatsIntervalSec=0\n")
            if self.store:
                f.write(f"[Store]\nDirectory={self.store}\nCompression={output.split(':')[1]}\n"
                        "MaxUse=0\n")
            f.write(f"[Selection]\nName=bench\nEvents={ev['tp']}\n")
            if filt:
                f.write(f"Filter={filt}\n")
            if stack:  # StackTrace=
                f.write(f"StackTrace={stack}\n")
            if unit:  # Unit=: checked before the filter, one lookup of the task's cgroup
                f.write(f"Unit={unit}\n")
            if aggregate:  # counted in BPF; the dump at stop goes to stdout
                f.write(f"Aggregate={aggregate}\nAggregateIntervalSec=0\n")
        self.aggregate = aggregate

    def check(self):
        """None if this configuration is accepted, else why not."""
        r = subprocess.run([f"{self.build}/tracerd", "--check-config", self.conf],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return None
        msg = (r.stderr or r.stdout).strip().splitlines()
        return msg[0] if msg else f"exit {r.returncode}"

    def start(self):
        self.err = f"{self.tmp}/tracerd-{abs(hash(self.name))}.err"  # one each: several may run at once
        if self.store:
            shutil.rmtree(self.store, ignore_errors=True)
        argv = [f"{self.build}/tracerd", "--config", self.conf]
        if self.ring_only:
            argv = [f"{self.build}/bench/ring-drain", self.conf]
        elif self.output == "stdout":
            argv.append("--foreground")
        with open(self.err, "w") as e:
            self.proc = Proc(argv, stderr=e, stdout=subprocess.DEVNULL)
        wait_for(lambda: file_has(self.err, "attached") or
                 file_has(self.err, "tracerd: summary") or not self.proc.alive(), what="tracerd")
        self.j0 = self.journald.cpu_s() if self.journald else 0.0
        self.proc.mark()
        if not self.proc.alive():
            raise RuntimeError("tracerd failed: " + read(self.err))

    def stop(self):
        cpu_s, rss, hung = self.proc.stop(signal.SIGINT)
        if self.journald:
            cpu_s += self.journald.cpu_s() - self.j0
        text = read(self.err)
        m = re.search(r"delivered=(\d+) lost=(\d+)", text)
        m2 = re.search(r"(\d+) delivered, (\d+) lost", text)
        delivered, lost = (int(m.group(1)), int(m.group(2))) if m else \
            (int(m2.group(1)), int(m2.group(2))) if m2 else (0, 0)
        # Records a sink failed (its queue full: ENOBUFS) are counted by
        # tracerd as sink errors: lost as well, in user space, not missing.
        m3 = re.search(r"sink_errors=(\d+)", text)
        if m3:
            lost += int(m3.group(1))
        m4 = re.search(r"aggregated=(\d+) agg_dropped=(\d+)", text)
        if self.aggregate and m4:
            delivered, lost = int(m4.group(1)), lost + int(m4.group(2))
        # Events the kernel did not run tracerd's program for (a BPF program
        # already ran on that CPU): counted by the kernel, not lost by tracerd.
        m4 = re.search(r"summary: (\d+) skipped", text)
        skipped = int(m4.group(1)) if m4 else 0
        if self.output == "journal" and not m and not m2:
            # The final statistics went to the journal, as a structured entry.
            j = subprocess.run(["journalctl", "-o", "json", "--no-pager", "-n", "1",
                                f"_PID={self.proc.p.pid}", "TRACE_STATS_FINAL=1"],
                               capture_output=True, text=True).stdout.strip().splitlines()
            if j:
                e = json.loads(j[-1])
                delivered = int(e.get("TRACE_STATS_DELIVERED", 0))
                lost = int(e.get("TRACE_STATS_LOST", 0)) + \
                    int(e.get("TRACE_STATS_SINK_ERRORS", 0))
                skipped = int(e.get("TRACE_STATS_SKIPPED", 0))
        res = {"delivered": delivered, "lost": lost, "skipped": skipped, "cpu_s": cpu_s, "rss_kb": rss,
               "hung": hung}
        if self.store:
            size = sum(os.path.getsize(os.path.join(self.store, f)) for f in os.listdir(self.store))
            res["bytes_ev"] = size / delivered if delivered else float("nan")
            shutil.rmtree(self.store, ignore_errors=True)
        return res


# ---------------------------------------------------------------- running

def run_workload(build, event, count, rate=0):
    argv = [f"{build}/bench/workload", event, str(count)]
    if rate:
        argv.append(str(int(rate)))
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def run_one(consumer, build, event, count, rate=0):
    try:
        consumer.start()
    except BaseException:
        try:  # stop what did start: processes, the tracefs instance
            consumer.stop()
        except Exception:
            pass
        raise
    try:
        time.sleep(0.05)
        w = run_workload(build, event, count, rate)
    finally:
        res = consumer.stop()
    res.update(w)
    return res


def tracerd_rows(ev, tmp, build, journal, sfx=""):
    """tracerd's configurations, run by one build (sfx " (B)": the --compare build)."""
    c = [Tracerd(ev, None, tmp, f"tracerd ring (no text){sfx}", build, ring_only=True),
         Tracerd(ev, None, tmp, f"tracerd stdout{sfx}", build),
         Tracerd(ev, None, tmp, f"tracerd store zstd{sfx}", build, output="store:zstd"),
         Tracerd(ev, None, tmp, f"tracerd store zlib{sfx}", build, output="store:zlib"),
         Tracerd(ev, None, tmp, f"tracerd store none{sfx}", build, output="store:none"),
         Tracerd(ev, ev["reject"], tmp, f"tracerd reject{sfx}", build),
         # rejected by Unit= (no task runs in that unit) where the row above is by Filter=
         Tracerd(ev, None, tmp, f"tracerd unit reject{sfx}", build,
                 unit="tracerd-bench-nothing.service"),
         Tracerd(ev, ev["accept"], tmp, f"tracerd accept{sfx}", build),
         Tracerd(ev, ev["accept"], tmp, f"tracerd aggregate accept{sfx}", build,
                 aggregate=ev["hist"]),
         Tracerd(ev, None, tmp, f"tracerd store zstd kstack{sfx}", build, output="store:zstd",
                 stack="kernel"),
         Tracerd(ev, ev["reject"], tmp, f"tracerd reject kstack{sfx}", build, stack="kernel")]
    if journal:
        c.append(Tracerd(ev, None, tmp, f"tracerd journal{sfx}", build, output="journal",
                         journald=journal))
    return c


def consumers_for(evname, ev, tmp, build, journal, compare=None):
    c = [NoConsumer(),
         Ftrace(ev, None, tmp, "ftrace", build),
         Ftrace(ev, ev["reject"], tmp, "ftrace reject", build),
         Ftrace(ev, ev["accept"], tmp, "ftrace accept", build),
         PerfRecord(ev, None, tmp, "perf record"),
         PerfRecord(ev, None, tmp, "perf record -z", compress=True),
         Bpftrace(ev, ev["bt_accept"], tmp, "bpftrace printf accept"),
         Bpftrace(ev, ev["bt_accept"], tmp, "bpftrace count accept", count=True),
         Bpftrace(ev, ev["bt_accept"], tmp, "bpftrace @[key] count accept", key=ev["bt_key"]),
         # Stack traces (issue 20): against perf's way of recording them.
         PerfRecord(ev, None, tmp, "perf record -g", callgraph=True)]
    c += tracerd_rows(ev, tmp, build, journal)
    if compare:  # A/B: every tracerd row again, run by another build
        c += tracerd_rows(ev, tmp, compare, journal, " (B)")
    return c


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x, digits=0):
    if x is None or x != x:
        return "n/a"
    return f"{x:.{digits}f}"


# The ftrace row each row's "vs ftrace" divides by: the one with the same
# filter, for tracerd's rows and their --compare (B) twins alike.
def base_of(name):
    name = name.removesuffix(" (B)")
    for f in ("reject", "accept"):
        if name.startswith(("ftrace", "tracerd")) and name.split()[1:2] == [f]:
            return f"ftrace {f}"
    if name.startswith(("tracerd unit reject", "tracerd reject kstack")):
        return "ftrace reject"
    return "ftrace"


def ab_ratios(summary, p):
    """--compare: each tracerd row against its (B) twin, in this run. A
    change may make no row more than 5% slower (issue 23)."""
    pairs = [(n, summary[n + " (B)"]) for n in summary if n + " (B)" in summary]
    if not pairs:
        return
    p("A/B, ns added per event, this build (A) against the --compare build (B):")
    for name, b in pairs:
        a = summary[name]["added"]
        r = a / b["added"] if b["added"] and b["added"] > 0 else float("nan")
        verdict = "n/a" if r != r else "ok" if r <= 1.05 else "SLOWER"
        p(f"  {name:<28} {fmt(a):>6} vs {fmt(b['added']):>6}  {fmt(r, 2)}x  {verdict}")


def stack_ratios(summary, p):
    """StackTrace=kernel (issue 20), within this run: the added cost per
    event streamed to the store against `perf record -g`, a rejected event's
    cost with and without stacks, and the store's bytes per event."""
    g = lambda name, k="added": summary.get(name, {}).get(k)
    ks, store, perf_g, perf = (g("tracerd store zstd kstack"), g("tracerd store zstd"),
                               g("perf record -g"), g("perf record"))
    if ks is None or perf_g is None:
        return
    p(f"stacks: tracerd store zstd kstack {fmt(ks)} ns/event vs perf record -g {fmt(perf_g)}: "
      f"{fmt(ks / perf_g, 2)}x (target <= 0.5x)")
    if store is not None and perf is not None:
        p(f"stacks: the walk's own cost: tracerd +{fmt(ks - store)} ns (store zstd kstack - store zstd), "
          f"perf +{fmt(perf_g - perf)} ns (record -g - record)")
    rk, r = g("tracerd reject kstack"), g("tracerd reject")
    if rk is not None and r is not None:
        p(f"stacks: a rejected event: {fmt(rk)} ns with StackTrace=kernel, {fmt(r)} without")
    bk, b = g("tracerd store zstd kstack", "bytes_ev"), g("tracerd store zstd", "bytes_ev")
    if bk and b:
        p(f"stacks: store bytes/event {fmt(bk, 2)} with kernel stacks, {fmt(b, 2)} without: "
          f"{fmt(bk / b, 2)}x (target <= 2x); perf record -g: {fmt(g('perf record -g', 'bytes_ev') or float('nan'), 1)}")


def bench_event(evname, args, tmp, journal, out):
    ev = EVENTS[evname]
    cons = consumers_for(evname, ev, tmp, args.build, journal, args.compare)
    if args.rows:  # "none" is every row's baseline
        cons = [c for c in cons if c.name == "none" or re.search(args.rows, c.name)]
    skipped = {}
    for c in cons:
        if isinstance(c, Tracerd):
            why = c.check()
            if why:
                skipped[c.name] = why
    active = [c for c in cons if c.name not in skipped]
    rows = {c.name: [] for c in active}
    log(f"== {ev['tp']}: {len(active)} consumers x {args.rounds} rounds x {args.count} events")
    for rnd in range(args.rounds):
        for c in active:
            try:
                n = int(args.count * getattr(c, "count_scale", 1))
                r = run_one(c, args.build, evname, n)
                r["fired"] = n
                rows[c.name].append(r)
            except Exception as e:  # a consumer that fails is reported, not fatal
                log(f"   {c.name}: {e}")
                rows[c.name].append({"error": str(e)})
        log(f"   round {rnd + 1}/{args.rounds} done")

    # ns added per event: each run against the median of the no-consumer
    # runs. One no-consumer run per round is as noisy as the run it would be
    # paired with; their median is not.
    none = [r for r in rows["none"] if "error" not in r]
    base_ns = median([r["ns_per_iter"] for r in none])
    base_p10 = median([r["p10"] for r in none])
    summary = {}
    for name, rs in rows.items():
        added, added_p10, lost, kskipped, missing, cpu, rss, hung = [], [], 0, 0, 0, [], 0, False
        bytes_ev = [r["bytes_ev"] for r in rs if "bytes_ev" in r]
        for r in rs:
            if "error" in r:
                continue
            added.append(r["ns_per_iter"] - base_ns)
            added_p10.append(r["p10"] - base_p10)
            if name == "none":
                continue
            lost += r["lost"]
            kskipped += r.get("skipped", 0)
            expect = 0 if "reject" in name else r["fired"]
            if r["delivered"] is not None and r["delivered"] < expect:
                missing = max(missing, expect - r["delivered"] - r["lost"] - r.get("skipped", 0))
            if r["delivered"] and "reject" not in name:
                cpu.append(r["cpu_s"] / r["delivered"] * 1e9)  # ms per million
            rss = max(rss, r["rss_kb"])
            hung = hung or r.get("hung", False)
        summary[name] = {
            "added": median(added), "min": min(added) if added else float("nan"),
            "max": max(added) if added else float("nan"), "added_p10": median(added_p10),
            "lost": lost, "skipped": kskipped, "missing": missing, "cpu_per_M": median(cpu), "rss_kb": rss,
            "hung": hung, "runs": len(added),
            "ns_iter": median([r["ns_per_iter"] for r in rs if "error" not in r]),
            "bytes_ev": median(bytes_ev) if bytes_ev else None,
        }

    p = lambda *a: print(*a, file=out)
    p(f"\n## {ev['tp']} ({ev['why']}), {args.count} events per run, {args.rounds} rounds")
    p(f"filters: accept `{ev['accept']}`, reject `{ev['reject']}`; "
      f"no consumer: {fmt(summary['none']['ns_iter'])} ns per iteration (median)")
    p(f"{'consumer':<24} {'ns added/event':>15} {'min..max':>15} {'p10-based':>10} "
      f"{'lost':>8} {'skipped':>8} {'missing':>8} {'vs ftrace':>10} {'CPU ms/M ev':>12} {'peak RSS':>10}")
    for name, s in summary.items():
        if name == "none":
            continue
        base = summary.get(base_of(name))
        ratio = s["added"] / base["added"] if base and base["added"] > 0 else float("nan")
        p(f"{name:<24} {fmt(s['added']):>15} {fmt(s['min']) + '..' + fmt(s['max']):>15} "
          f"{fmt(s['added_p10']):>10} {s['lost']:>8} {s['skipped']:>8} {s['missing']:>8} "
          f"{(fmt(ratio, 2) + 'x') if ratio == ratio else 'n/a':>10} {fmt(s['cpu_per_M'], 1):>12} "
          f"{str(s['rss_kb'] // 1024) + ' MiB':>10}{'  (hung on SIGINT)' if s['hung'] else ''}"
          + (f"  {fmt(s['bytes_ev'], 2)} bytes/event on disk" if s.get("bytes_ev") is not None else ""))
    for name, why in skipped.items():
        p(f"{name:<24} not measured: tracerd refuses the config: {why}")
    stack_ratios(summary, p)
    ab_ratios(summary, p)
    p("(vs ftrace: tracerd and ftrace rows against the ftrace row with the same filter; "
      "others against plain ftrace. CPU: the consumer's own processes from ready to exit "
      "(tracerd journal: and journald's). "
      "lost: in the kernel (ring full) or, for tracerd, also in a sink (its queue full); "
      "skipped: tracerd's program not run by the kernel (another BPF program ran on the CPU), "
      "as the kernel counts it; missing: events neither delivered nor counted as lost or skipped.)")
    return summary, skipped


def sustained(args, tmp, evname, mk, out_rows):
    """The highest rate with zero loss: rates doubling from 250 k/s until one
    loses events, then bisection between the last good rate and that one.
    Returns (rate, top): top when the workload could not go faster with this
    consumer attached, before any loss."""
    def trial(rate):
        n = int(max(rate * args.sustain_secs, 100000))
        r = run_one(mk(), args.build, evname, n, rate)
        ok = r["lost"] == 0 and (r["delivered"] or 0) >= n
        return ok, n / r["secs"] if r["secs"] else 0

    best, rate, fail, top = 0.0, 250e3, None, False
    while rate <= 8e6:
        ok, achieved = trial(rate)
        if not ok:
            fail = rate
            break
        best = max(best, min(rate, achieved))
        if achieved < 0.9 * rate:
            top = True
            break
        rate *= 2
    if fail:
        lo, hi = fail / 2, fail
        for _ in range(args.bisect):
            mid = (lo + hi) / 2
            ok, achieved = trial(mid)
            if ok:
                best = max(best, min(mid, achieved))
                lo = mid
            else:
                hi = mid
    return best, top


def bench_sustained(evname, args, tmp, out, skipped):
    ev = EVENTS[evname]
    mks = {
        "ftrace": lambda: Ftrace(ev, None, tmp, "ftrace", args.build),
        "perf record": lambda: PerfRecord(ev, None, tmp, "perf record"),
        "tracerd stdout": lambda: Tracerd(ev, None, tmp, "tracerd stdout", args.build),
        "tracerd store zstd": lambda: Tracerd(ev, None, tmp, "tracerd store zstd", args.build,
                                              output="store:zstd"),
    }
    p = lambda *a: print(*a, file=out)
    p(f"\nmaximum sustained rate with zero loss, {ev['tp']} "
      f"({args.sustain_secs:g} s runs at rates doubling from 0.25 M/s, then {args.bisect} bisection steps; "
      "'>=': the workload could go no faster with this consumer, without loss):")
    res = {}
    for name, mk in mks.items():
        try:
            rate, at_top = sustained(args, tmp, evname, mk, None)
        except Exception as e:
            p(f"  {name:<20} failed: {e}")
            continue
        res[name] = rate
        res[name + " top"] = at_top
        p(f"  {name:<20} {'>=' if at_top else '  '}{rate / 1e6:.2f} M events/s")
        log(f"   sustained {name}: {rate / 1e6:.2f} M/s")
    return res


def bench_bpf_runtime(evname, args, tmp, out, skipped):
    """ns per run of tracerd's programs, from the kernel's own BPF
    statistics. They cost two clock reads per run of every BPF program on the
    machine, so they are on only here, not in the rounds above. One
    configuration at a time, interleaved round by round (a start takes
    0.1 s): programs attached together run on each other's warm cache lines,
    the last attached 9-12% faster than the first (aggregate accept: 1.127x
    with this build attached first, 0.917x with it last), while a machine
    whose speed drifts slows every configuration alike across the rounds."""
    ev = EVENTS[evname]
    p = lambda *a: print(*a, file=out)
    p(f"\ntracerd's BPF program, ns per event it ran for (kernel.bpf_stats_enabled, "
      f"median of {args.rounds} runs of {args.count // 4} events, one configuration at a time, "
      f"interleaved; includes the statistics' own clock reads):")
    # No StackTrace= row here: the walk's cost depends on what ran before
    # it (the cold unwind: ~900 ns more on fcntl_setlk); bench/stack-floor.py.
    agg = ev["hist"]
    confs = [("no filter", None, None, None, args.build), ("reject", ev["reject"], None, None, args.build),
             ("unit reject", None, "tracerd-bench-nothing.service", None, args.build),
             ("accept", ev["accept"], None, None, args.build),
             ("agg accept", ev["accept"], None, agg, args.build)]
    if args.compare:
        confs += [("reject (B)", ev["reject"], None, None, args.compare),
                  ("accept (B)", ev["accept"], None, None, args.compare),
                  ("agg accept (B)", ev["accept"], None, agg, args.compare)]
    why = {c[0]: skipped[f"tracerd {c[0]}"] for c in confs if f"tracerd {c[0]}" in skipped}
    cons = []
    for label, filt, unit, aggregate, build in confs:
        if label in why:
            continue
        c = Tracerd(ev, filt, tmp, f"tracerd bpf {label}", build, unit=unit, aggregate=aggregate)
        if c.check():
            why[label] = c.check()
        else:
            cons.append((label, c))
    per = {label: [] for label, _ in cons}
    for _ in range(args.rounds):
        for label, c in cons:
            c.start()
            try:
                v = ns_per_run([c.proc.p.pid], lambda: run_workload(args.build, evname, args.count // 4))[0]
            finally:
                c.stop()
            if v is not None:
                per[label].append(v)
    for label, reason in why.items():
        p(f"  {label:<14} not measured: {reason}")
    res = {}
    for label, v in per.items():
        if v:
            res[label] = median(v)
            p(f"  {label:<14} {fmt(res[label])} ns (min {fmt(min(v))})")
    ratio = lambda a, b, what: (res.get(b, 0) > 0 and a in res and
                                p(f"  {a} / {b}: {res[a] / res[b]:.3f}x{what}"))
    ratio("no filter", "accept", " (no Filter= against one that keeps every event; target <= 1.1x)")
    ratio("accept", "accept (B)", " (target <= 1.05x)")
    ratio("agg accept", "agg accept (B)", "")
    ratio("unit reject", "reject", " (rejected by Unit= against rejected by Filter=; target <= 1)")
    return res


# ---------------------------------------------------------------- footprint

def bpf_footprint(pid, ids_only=False):
    """Programs, JIT bytes, xlated bytes and map memory held by process pid."""
    progs, maps = set(), set()
    fddir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fddir):
        try:
            info = read(f"{fddir}/{fd}")
        except OSError:
            continue
        for k, v in re.findall(r"^(prog_id|map_id):\s+(\d+)", info, re.M):
            (progs if k == "prog_id" else maps).add(int(v))
    if ids_only:
        return progs
    jited = xlated = map_bytes = 0
    for i in progs:
        j = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "id", str(i)],
                                      capture_output=True, text=True).stdout or "{}")
        jited += j.get("bytes_jited", 0)
        xlated += j.get("bytes_xlated", 0)
        for m in j.get("map_ids", []):
            maps.add(m)
    for i in maps:
        j = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(i)],
                                      capture_output=True, text=True).stdout or "{}")
        map_bytes += j.get("bytes_memlock", 0)
    return len(progs), jited, xlated, len(maps), map_bytes


def class_events(build, glob, cls):
    out = subprocess.run([f"{build}/tracerd", "--list-classes", glob],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith(cls + " "):
            return line.split(":", 1)[1].split()
    return []


FOOTPRINT_FILTER = "ino > 1 && namelen < 200"


def tracerd_footprint(args, tmp, sel, filt=None):
    conf = f"{tmp}/footprint.conf"
    with open(conf, "w") as f:
        f.write(f"[Daemon]\nRingBufferSize={RING_BYTES >> 20}M\nStatsIntervalSec=0\n"
                f"[Selection]\nName=fp\nEvents={' '.join(sel)}\n"
                + (f"Filter={filt}\n" if filt else ""))
    err = f"{tmp}/footprint.err"
    with open(err, "w") as e:
        t = Proc([f"{args.build}/tracerd", "--config", conf, "--foreground"], stderr=e)
    try:
        wait_for(lambda: file_has(err, "attached") or not t.alive(), what="tracerd")
        return bpf_footprint(t.p.pid)
    finally:
        t.stop()


def bench_footprint(args, tmp, out):
    p = lambda *a: print(*a, file=out)
    events = class_events(args.build, *FOOTPRINT_CLASS)
    if not events:
        p(f"\nfootprint: class {FOOTPRINT_CLASS[1]} not found on this kernel")
        return None
    p(f"\n## BPF footprint: events of {FOOTPRINT_CLASS[1]} ({len(events)} events), "
      f"{RING_BYTES >> 20} MiB ring buffer")
    p(f"{'selected':>8}  {'design':<28} {'programs':>8} {'JIT bytes':>10} {'xlated':>8} "
      f"{'maps':>5} {'map memory':>12}")
    res = {}
    for n in sorted({1, 10, len(events)}):
        sel = events[:n]
        a = tracerd_footprint(args, tmp, sel)
        # With a Filter=: the events of a class share one emitted program.
        af = tracerd_footprint(args, tmp, sel, FOOTPRINT_FILTER)
        ppe = Proc([f"{args.build}/bench/prog-per-event", str(RING_BYTES)] + sel,
                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            line = ppe.p.stdout.readline()
            b = bpf_footprint(ppe.p.pid) if b"ready" in line else None
        finally:
            ppe.p.stdin.close()
            ppe.stop(signal.SIGTERM)
        res[n] = (a, b, af)
        for design, v in (("tracerd (one class program)", a), ("tracerd, Filter= emitted", af),
                          ("one program per event", b)):
            if v is None:
                p(f"{n:>8}  {design:<28} failed")
                continue
            p(f"{n:>8}  {design:<28} {v[0]:>8} {v[1]:>10} {v[2]:>8} {v[3]:>5} "
              f"{v[4] / 1024:>9.0f} KiB")
    return res


# ---------------------------------------------------------------- main

class Journald:
    """The journal sink needs a journald. The host may have none (no systemd
    as PID 1): then one is started by hand for the benchmark, with rate
    limiting off (a runtime drop-in), and removed with all it created."""

    SOCK = "/run/systemd/journal/socket"
    CREATED = ("/run/systemd/journal", "/run/log/journal", "/run/systemd/journald.conf.d")

    def __init__(self):
        self.proc, self.made, self.why = None, [], None

    def start(self):
        if os.path.exists(self.SOCK):
            self.why = "the host's journald"
            return True
        exe = "/lib/systemd/systemd-journald"
        if not os.access(exe, os.X_OK):
            self.why = "no journald on this host and no " + exe
            return False
        self.made = [d for d in self.CREATED if not os.path.exists(d)]
        os.makedirs("/run/systemd/journald.conf.d", exist_ok=True)
        write("/run/systemd/journald.conf.d/tracerd-bench.conf",
              "[Journal]\nRateLimitIntervalSec=0\nStorage=volatile\n")
        self.proc = Proc([exe], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        try:
            wait_for(lambda: os.path.exists(self.SOCK) or not self.proc.alive(), 10, "journald")
        except RuntimeError:
            pass
        if not os.path.exists(self.SOCK):
            self.stop()
            self.why = "systemd-journald started by hand did not come up"
            return False
        self.why = "systemd-journald started by hand for the benchmark (volatile, no rate limit)"
        return True

    def cpu_s(self):
        """journald's CPU seconds so far: its share of what the journal sink costs."""
        return self.proc.cpu_now() if self.proc else 0.0

    def stop(self):
        if self.proc:
            self.proc.stop(signal.SIGTERM)
            self.proc = None
        for d in self.made:
            shutil.rmtree(d, ignore_errors=True)
        self.made = []


def foreign_bpf():
    """Tracing BPF programs loaded by others: they slow every run alike."""
    try:
        j = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                                      text=True).stdout or "[]")
    except ValueError:
        return []
    return [f"{x.get('id')}:{x.get('name')}" for x in j
            if x.get("type") in ("tracepoint", "raw_tracepoint", "tracing", "perf_event")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=400000)
    ap.add_argument("--events", default=",".join(EVENTS))
    ap.add_argument("--sustain-secs", type=float, default=1.0)
    ap.add_argument("--bisect", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="2 rounds, 100k events, no bisection")
    ap.add_argument("--no-sustained", action="store_true")
    ap.add_argument("--no-footprint", action="store_true")
    ap.add_argument("--out", help="results file (default bench/results/DATE.txt)")
    ap.add_argument("--compare", metavar="BUILD",
                    help="also run the tracerd of another build directory (an A/B of a change)")
    ap.add_argument("--rows", metavar="REGEX",
                    help="run only the consumers whose name matches (e.g. 'ftrace|tracerd')")
    ap.add_argument("--readme", action="store_true",
                    help="put the summary in bench/README.md, between its markers")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.count, args.bisect = 2, 100000, 2
    args.build = os.path.abspath(args.build)
    if args.compare:
        args.compare = os.path.abspath(args.compare)
    if os.geteuid() != 0:
        sys.exit("bench.py: needs root (BPF, tracefs, perf -a)")

    def on_term(sig, frame):
        raise KeyboardInterrupt  # unwinds through every cleanup below
    signal.signal(signal.SIGTERM, on_term)

    now = datetime.datetime.now(datetime.timezone.utc)
    path = args.out or results_path(now)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tracerd-bench.")
    journald = Journald()
    journal = journald.start()
    cpu_model = next((l.split(":", 1)[1].strip() for l in read("/proc/cpuinfo").splitlines()
                      if l.startswith("model name")), "?")
    with open(path + ".tmp", "w") as out:
        class Tee:
            def write(self, s):
                out.write(s)
                sys.stdout.write(s)

            def flush(self):
                out.flush()
                sys.stdout.flush()
        tee = Tee()
        p = lambda *a: print(*a, file=tee, flush=True)
        p(f"# tracerd benchmark, {now:%Y-%m-%d %H:%M} UTC")
        p(f"kernel: {platform.release()} ({platform.version()})")
        p(f"machine: {cpu_model}, {os.cpu_count()} CPUs, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') >> 30} GiB; "
          f"load average at start {os.getloadavg()[0]:.2f}")
        tools = []
        for t in (["perf", "--version"], ["bpftrace", "--version"]):
            r = subprocess.run(t, capture_output=True, text=True)
            tools.append((r.stdout or r.stderr).strip())
        p(f"tools: {', '.join(tools)}; tracerd {subprocess.run(['git', '-C', ROOT, 'describe', '--always', '--dirty'], capture_output=True, text=True).stdout.strip()}")
        if args.compare:
            p(f"build B (--compare): {args.compare}/tracerd; rows marked (B) ran it")
        fb = foreign_bpf()
        if fb:
            p(f"WARNING: tracing BPF programs not ours were loaded at start: {' '.join(fb)}")
        p(f"journal sink: {'measured' if journal else 'NOT measured'}: {journald.why}")
        verdicts = []
        try:
            results = {}
            for evname in args.events.split(","):
                summary, skipped = bench_event(evname, args, tmp, journald if journal else None, tee)
                sus = {} if args.no_sustained else bench_sustained(evname, args, tmp, tee, skipped)
                bench_bpf_runtime(evname, args, tmp, tee, skipped)
                results[evname] = (summary, skipped, sus)
                targets(p, EVENTS[evname]["tp"], summary, skipped, sus, verdicts)
            fp = None if args.no_footprint else bench_footprint(args, tmp, tee)
            rb = f"{args.build}/bench/render-bench"
            if os.access(rb, os.X_OK):  # the symbolization engineer's, from make bench-render
                p("\n## rendering alone (bench/render-bench.c, make bench-render)")
                p(subprocess.run([rb], capture_output=True, text=True).stdout.rstrip())
            if args.readme:
                update_readme(now, results, verdicts, fp, os.path.relpath(path, ROOT), args.compare)
        finally:
            journald.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    os.replace(path + ".tmp", path)
    log(f"results: {path}")


def results_path(now):
    """bench/results/DATE.txt, or DATE-b.txt, -c.txt ... when a run of that
    day is there already: an earlier run's results are kept."""
    base = f"{ROOT}/bench/results/{now:%Y-%m-%d}"
    for sfx in [""] + [f"-{c}" for c in "bcdefghijklmnopqrstuvwxyz"]:
        if not os.path.exists(f"{base}{sfx}.txt"):
            return f"{base}{sfx}.txt"
    return f"{base}-{now:%H%M%S}.txt"


BENCH_README = f"{ROOT}/bench/README.md"


def build_name(build):
    """A --compare build as the table names it: the commit of the work tree
    it is in, never its path (a path names one developer's machine)."""
    r = subprocess.run(["git", "-C", build, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return f"commit {r.stdout.strip()}" if r.returncode == 0 else "another build"


def update_readme(now, results, verdicts, fp, path, compare=None, readme=BENCH_README):
    """Replaces the text between the benchmark markers in bench/README.md."""
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    text = read(readme)
    if begin not in text or end not in text:
        log(f"{os.path.relpath(readme, ROOT)} has no benchmark markers; not updated")
        return
    evs = list(results)
    L = [begin,
         f"Latest run: {now:%Y-%m-%d %H:%M} UTC, kernel {platform.release()}, "
         f"{os.cpu_count()} CPUs; full results in `{path}`. ns added per event (median of "
         "the rounds), ratio to ftrace with the same filter, events lost"
         + (f"; rows marked (B) ran the --compare build, {build_name(compare)}" if compare else "") + ":", "",
         "| consumer | " + " | ".join(EVENTS[e]["tp"] for e in evs) + " |",
         "|---|" + "---|" * len(evs)]
    names = [n for n in results[evs[0]][0] if n != "none"]
    for n in names:
        cells = []
        for e in evs:
            summ = results[e][0]
            x = summ.get(n)
            if not x:
                cells.append("not measured")
                continue
            base = summ.get(base_of(n))
            ratio = x["added"] / base["added"] if base and base["added"] > 0 else float("nan")
            lost = x["lost"] + x["missing"]
            skipped = f", skipped {x['skipped']}" if x.get("skipped") else ""
            cells.append(f"{fmt(x['added'])} ns ({fmt(ratio, 2)}x), lost {lost}{skipped}")
        L.append(f"| {n} | " + " | ".join(cells) + " |")
    L.append("")
    for e in evs:
        summ, _, sus = results[e]
        t = summ.get("tracerd stdout")
        rates = ", ".join(f"{k} {'>=' if sus.get(k + ' top') else ''}{v / 1e6:.2f}"
                          for k, v in sus.items() if not k.endswith(" top"))
        if t:
            L.append(f"- {EVENTS[e]['tp']}: tracerd CPU {fmt(t['cpu_per_M'])} ms per million "
                     f"events, peak RSS {t['rss_kb'] // 1024} MiB; highest rate with zero loss "
                     f"(M events/s): {rates or 'not measured'}")
    if fp:
        n = max(fp)
        a, b, af = fp[n]
        if a and b:
            L.append(f"- Footprint, {n} events of {FOOTPRINT_CLASS[1]}: tracerd {a[0]} program(s), "
                     f"{a[1]} JIT bytes; with `Filter={FOOTPRINT_FILTER}` (emitted) "
                     f"{af[0] if af else '?'} programs, {af[1] if af else '?'} JIT bytes; "
                     f"one program per event: {b[0]} programs, {b[1]} JIT bytes.")
    L += ["", "Targets:", ""] + [f"- {v}" for v in verdicts] + [end]
    head, rest = text.split(begin, 1)
    write(readme, head + "\n".join(L) + rest.split(end, 1)[1])


def targets(p, tp, s, skipped, sus, verdicts=None):
    """The issue's targets, as ratios within this run."""
    p(f"\ntargets, {tp}:")

    def line(ok, text):
        v = 'met' if ok else 'MISSED' if ok is not None else 'n/a'
        p(f"  [{v}] {text}")
        if verdicts is not None:
            verdicts.append(f"{tp}: [{v}] {text}")

    def added(name):
        return s[name]["added"] if name in s else float("nan")

    if "tracerd reject" in s:
        a, b = added("tracerd reject"), added("ftrace reject")
        line(a <= b, f"rejected event: tracerd {fmt(a)} ns <= ftrace filter rejecting {fmt(b)} ns")
    else:
        line(None, "rejected event: tracerd cannot be configured to reject "
                   f"({skipped.get('tracerd reject', 'not measured')})")
    if "tracerd reject (B)" in s:
        a, b = added("tracerd reject (B)"), added("ftrace reject")
        line(a <= b, f"rejected event, build B (--compare): tracerd {fmt(a)} ns <= ftrace filter rejecting {fmt(b)} ns")
    if "tracerd accept (B)" in s:
        a, b = added("tracerd accept (B)"), added("ftrace accept")
        line(a <= 1.5 * b, f"accepted by a filter, build B (--compare): tracerd {fmt(a)} ns <= 1.5 x ftrace accepting {fmt(b)} ns")
    b = added("ftrace")
    if "tracerd ring (no text)" in s:
        a = added("tracerd ring (no text)")
        line(a <= 1.5 * b, f"accepted event into the ring buffer and drained (no text): tracerd {fmt(a)} ns "
                           f"<= 1.5 x ftrace {fmt(b)} ns (trace_pipe_raw drained, no text either)")
    a = added("tracerd stdout")
    line(a <= 1.5 * b, f"accepted event, rendered to stdout: tracerd {fmt(a)} ns <= 1.5 x ftrace {fmt(b)} ns")
    if "tracerd accept" in s:
        a, b = added("tracerd accept"), added("ftrace accept")
        line(a <= 1.5 * b, f"accepted by a filter: tracerd {fmt(a)} ns <= 1.5 x ftrace accepting {fmt(b)} ns")
    t, pr = s.get("tracerd stdout"), s.get("perf record")
    if pr and pr["missing"]:
        line(None, f"perf record comparisons: perf record missed {pr['missing']} events it "
                   "neither recorded nor counted as lost. A BPF program attached to the same "
                   "tracepoint through perf that returns 0 makes the kernel drop the event for "
                   "every perf user: is another tracer running?")
        pr = None
    if t and pr:
        line(t["lost"] == 0 and t["missing"] == 0,
             f"end to end, stdout to /dev/null: zero loss (lost {t['lost']}, missing {t['missing']})")
        line(t["added"] <= 0.5 * pr["added"],
             f"end to end: tracerd {fmt(t['added'])} ns <= 0.5 x perf record {fmt(pr['added'])} ns")
    st, pz, ring = s.get("tracerd store zstd"), s.get("perf record -z"), s.get("tracerd ring (no text)")
    if st and pz and st.get("bytes_ev") is not None and pz.get("bytes_ev") is not None:
        line(st["bytes_ev"] <= 0.5 * pz["bytes_ev"],
             f"store: {fmt(st['bytes_ev'], 2)} bytes/event on disk (zstd) <= 0.5 x perf record -z "
             f"{fmt(pz['bytes_ev'], 2)}")
    if st and ring:
        line(st["added"] <= 1.1 * ring["added"],
             f"store: {fmt(st['added'])} ns added/event (zstd) <= 1.1 x ring only {fmt(ring['added'])} ns")
    if "tracerd store zstd" in sus and "tracerd stdout" in sus:
        line(sus["tracerd store zstd"] >= sus["tracerd stdout"] or
             (sus.get("tracerd store zstd top") and None),
             f"store: sustained zero-loss rate {sus['tracerd store zstd'] / 1e6:.2f} M/s "
             f">= stdout to /dev/null {sus['tracerd stdout'] / 1e6:.2f} M/s")
    if "tracerd stdout" in sus and "perf record" in sus and pr:
        mark = lambda n: ">=" if sus.get(n + " top") else ""
        ok = sus["tracerd stdout"] >= sus["perf record"]
        if not ok and sus.get("tracerd stdout top"):
            ok = None   # tracerd lost nothing; the workload could not go faster
        line(ok, f"sustained rate: tracerd {mark('tracerd stdout')}{sus['tracerd stdout'] / 1e6:.2f} M/s "
                 f">= perf record {mark('perf record')}{sus['perf record'] / 1e6:.2f} M/s"
                 + (" (tracerd lost nothing at the workload's top speed with it attached)"
                    if ok is None else ""))


if __name__ == "__main__":
    main()
