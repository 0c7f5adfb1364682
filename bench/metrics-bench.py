#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""GET /metrics under load (issue 32): what a scrape costs, and that scrapers
cost the records nothing.

  bench/metrics-bench.py [--build build] [--series 10000] [--scrapes 200]
                         [--scrapers 100] [--events 200000] [--rate 50000]
                         [--rounds 5] [--count 4000000] [--parts 123] [--out FILE]

1. A histogram of --series keys (Aggregate=hist:keys=arg1 on
   syscalls:sys_enter_sysfs, fired by tests/tools/fire_syscall with arg1 =
   0..series-1 under a comm of the run's own; MaxSeries= the same): --scrapes
   scrapes one after another, each timed from connect to the server's close,
   median, p90, p99, max; tracerd's CPU per scrape; its RSS before the first
   scrape, after it, and after the last (targets: <= 50 ms a scrape, <= 1 MiB
   of growth). The same tracerd without the histogram for the floor.
2. --scrapers clients at once (asyncio, one process), each scraping again as
   soon as its answer is in, while fire_syscall fires --events calls at
   --rate under another comm into a selection printed to stdout, the
   histogram of part 1 beside it (every scrape the large one). Targets:
   delivered + lost = the calls, lost = 0, and the records' delay (from the
   record's timestamp, CLOCK_MONOTONIC as bpf_ktime_get_ns(), to the bench
   reading its line from tracerd's stdout pipe) against the same run without
   scrapers, rounds interleaved.
3. Per-event cost (A/B, bench.py's way): bench/workload.c fcntl_setlk
   --count times, ns added per event by tracerd to stdout and by tracerd
   aggregating, each with no [Metrics] and with Listen= scraped once a second
   (the histogram's and the counters' series), interleaved over --rounds,
   medians; the ratio on/off side by side.

Results: bench/results/DATE-metrics.txt (or --out). Everything it starts it
stops, its temporary files removed.
"""
import argparse
import asyncio
import datetime
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import Proc, median, read, wait_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVENT = "syscalls:sys_enter_sysfs"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def status_kb(pid, key):
    m = re.search(rf"{key}:\s+(\d+)", read(f"/proc/{pid}/status"))
    return int(m.group(1)) if m else 0


def scrape(port, timeout=30.0):
    """One GET /metrics: (seconds from connect to close, body bytes, status line)."""
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n")
    chunks = []
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        chunks.append(b)
    s.close()
    dt = time.perf_counter() - t0
    data = b"".join(chunks)
    head, _, body = data.partition(b"\r\n\r\n")
    return dt, body, head.split(b"\r\n", 1)[0].decode(errors="replace")


def metric(body, name, labels=""):
    key = f"{name}{{{labels}}}" if labels else name
    for line in body.decode().splitlines():
        if line.startswith(key + " "):
            return int(float(line.split()[-1]))
    return None


class Daemon:
    """tracerd on a config of its own, stdout to a file or a pipe."""

    def __init__(self, build, tmp, name, body, port=None, stdout=subprocess.DEVNULL):
        self.port = port
        self.conf = f"{tmp}/{name}.conf"
        self.err = f"{tmp}/{name}.err"
        with open(self.conf, "w") as f:
            f.write("[Daemon]\nOutput=stdout\nStatsIntervalSec=0\nFlushIntervalMSec=100\n")
            if port:
                f.write(f"[Metrics]\nListen=127.0.0.1:{port}\n")
            f.write(body)
        with open(self.err, "w") as e:
            self.proc = Proc([f"{build}/tracerd", "--config", self.conf, "--foreground"],
                             stdout=stdout, stderr=e)
        wait_for(lambda: bench.file_has(self.err, "attached") or not self.proc.alive(), what="tracerd")
        if not self.proc.alive():
            raise RuntimeError("tracerd failed: " + read(self.err))

    @property
    def pid(self):
        return self.proc.p.pid

    def stop(self):
        return self.proc.stop(signal.SIGINT)


def comm_fire(build, tmp, comm):
    """fire_syscall under comm COMM (its file's name)."""
    path = f"{tmp}/{comm}"
    shutil.copy(f"{build}/tests/tools/fire_syscall", path)
    return path


def hist_sel(comm, series):
    size = 1 << max(7, (series - 1).bit_length())
    return (f"[Selection]\nName=many\nEvents={EVENT}\nFilter=comm == \"{comm}\"\n"
            f"Aggregate=hist:keys=arg1:size={size}\nAggregateIntervalSec=0\n")


# ---------------------------------------------------------------- part 1

def part1(a, tmp, p):
    comm = f"mbh{os.getpid() % 100000}"
    fire = comm_fire(a.build, tmp, comm)
    p(f"\n## 1. scrape of a histogram of {a.series} keys, {a.scrapes} scrapes one after another")
    # The third: glibc's mmap threshold fixed at its default, 128 KiB (it
    # rises to the size of each mmapped block freed, and later blocks that
    # size come from the heap, where freed memory stays): what the
    # allocator keeps, told from what tracerd holds.
    res = None
    for label, with_hist, tun in (
            ("histogram", True, None),
            ("no histogram (the floor)", False, None),
            ("histogram, GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072", True,
             "glibc.malloc.mmap_threshold=131072")):
        port = free_port()
        sel = hist_sel(comm, a.series) if with_hist else \
            f"[Selection]\nName=few\nEvents={EVENT}\nFilter=comm == \"{comm}\"\n"
        # (MaxSeries= goes under the [Metrics] that Daemon writes with Listen=)
        if tun:
            os.environ["GLIBC_TUNABLES"] = tun
        try:
            d = Daemon(a.build, tmp, "p1", (f"MaxSeries={a.series}\n" if with_hist else "") + sel, port)
        finally:
            os.environ.pop("GLIBC_TUNABLES", None)
        try:
            subprocess.run([fire, str(a.series)], check=True, capture_output=True)
            time.sleep(0.3)
            rss0 = status_kb(d.pid, "VmRSS")
            cpu0 = d.proc.cpu_now()
            dt, body, st = scrape(port)
            series = sum(1 for l in body.decode().splitlines()
                         if l.startswith("tracerd_hist_hits_total{") and 'selection="many"' in l)
            other = sum(1 for l in body.decode().splitlines()
                        if l.startswith("tracerd_hist_hits_total{") and 'arg1="other"' in l)
            rss1 = status_kb(d.pid, "VmRSS")
            lat, rss = [], []
            for _ in range(a.scrapes):
                dt, b, st = scrape(port)
                if not st.endswith(" 200 OK"):
                    raise RuntimeError(f"scrape: {st}")
                lat.append(dt)
                rss.append(status_kb(d.pid, "VmRSS"))
            cpu = d.proc.cpu_now() - cpu0
            hwm = status_kb(d.pid, "VmHWM")
            hits = sum(int(l.split()[-1]) for l in b.decode().splitlines()
                       if l.startswith("tracerd_hist_hits_total{") and 'selection="many"' in l)
        finally:
            d.stop()
        ms = [x * 1e3 for x in lat]
        p(f"{label}: {series} key series ({other} 'other'), hits {hits if with_hist else 'n/a'} of "
          f"{a.series} fired, {len(b)} bytes, {len(b.splitlines())} lines")
        p(f"  latency ms: median {median(ms):.2f}, p90 {pct(ms, .9):.2f}, p99 {pct(ms, .99):.2f}, "
          f"max {max(ms):.2f}; tracerd CPU {cpu / (a.scrapes + 1) * 1e3:.2f} ms a scrape "
          f"({a.scrapes + 1} scrapes, clock ticks of 10 ms: a mean)")
        p(f"  RSS KiB: before the first scrape {rss0}, after it {rss1} (+{rss1 - rss0}), "
          f"after {a.scrapes} more {rss[-1]} (+{rss[-1] - rss1} over them; max {max(rss)}), "
          f"peak (VmHWM) {hwm}")
        p("  RSS KiB after scrape " + ", ".join(f"{i + 1}: {rss[i]}" for i in (0, 4, 24, 49, 99, 149)
                                                if i < len(rss)) + f", {len(rss)}: {rss[-1]}")
        if with_hist and not tun:
            res = {"median_ms": median(ms), "p99_ms": pct(ms, .99), "growth_kb": rss[-1] - rss1,
                   "growth0_kb": rss[-1] - rss0, "series": series, "hits": hits}
    ok = lambda c: "[met]" if c else "[MISSED]"
    p(f"{ok(res['p99_ms'] <= 50)} scrape of {res['series']} series <= 50 ms: median "
      f"{res['median_ms']:.2f} ms, p99 {res['p99_ms']:.2f} ms")
    p(f"{ok(res['growth0_kb'] <= 1024)} memory growth <= 1 MiB: +{res['growth0_kb']} KiB from "
      f"before the first scrape to after the last ({res['growth_kb']:+} KiB over the last {a.scrapes})")
    return res


# ---------------------------------------------------------------- part 2

async def scraper_main(port, conc, stopfile):
    """--scrapers clients, each scraping again as soon as its answer is in,
    until stopfile exists; prints its counts."""
    n = {"ok": 0, "refused": 0, "other": 0, "bytes": 0}
    lat = []

    async def one():
        while not os.path.exists(stopfile):
            t0 = time.perf_counter()
            try:
                r, w = await asyncio.open_connection("127.0.0.1", port)
                w.write(b"GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n")
                await w.drain()
                data = await r.read()
                w.close()
            except OSError:
                n["refused"] += 1
                await asyncio.sleep(0.01)
                continue
            if data.startswith(b"HTTP/1.1 200") or data.startswith(b"HTTP/1.0 200"):
                n["ok"] += 1
                n["bytes"] += len(data)
                lat.append(time.perf_counter() - t0)
            elif not data:
                n["refused"] += 1  # closed at once: over the connection cap
                await asyncio.sleep(0.01)
            else:
                n["other"] += 1

    await asyncio.gather(*(one() for _ in range(conc)))
    ms = sorted(x * 1e3 for x in lat)
    print(f"ok={n['ok']} refused={n['refused']} other={n['other']} bytes={n['bytes']} "
          f"median_ms={median(ms):.1f} p99_ms={pct(ms, .99):.1f}", flush=True)


class Reader(threading.Thread):
    """tracerd's stdout pipe: each chunk stamped when read; the delay of each
    record of COMM is the stamp minus the record's own time."""

    def __init__(self, fd, comm):
        super().__init__(daemon=True)
        self.fd, self.comm = fd, comm.encode()
        self.delays = []
        self.n = 0

    def run(self):
        rx = re.compile(rb"^\s*" + re.escape(self.comm) + rb"-\d+\s+\[\d+\]\s+(\d+\.\d+):", re.M)
        rest = b""
        while True:
            b = os.read(self.fd, 1 << 20)
            if not b:
                break
            t = time.clock_gettime(time.CLOCK_MONOTONIC)
            buf = rest + b
            cut = buf.rfind(b"\n") + 1
            buf, rest = buf[:cut], buf[cut:]
            for m in rx.finditer(buf):
                self.delays.append(t - float(m.group(1)))
                self.n += 1


def part2_run(a, tmp, scrapers):
    hcomm = f"mbh{os.getpid() % 100000}"
    rcomm = f"mbr{os.getpid() % 100000}"
    hfire = comm_fire(a.build, tmp, hcomm)
    rfire = comm_fire(a.build, tmp, rcomm)
    port = free_port()
    rfd, wfd = os.pipe()
    sel = hist_sel(hcomm, a.series) + \
        f"[Selection]\nName=rec\nEvents={EVENT}\nFilter=comm == \"{rcomm}\"\n"
    d = Daemon(a.build, tmp, "p2", f"MaxSeries={a.series}\n" + sel, port, stdout=wfd)
    os.close(wfd)
    reader = Reader(rfd, rcomm)
    reader.start()
    sc = None
    stopfile = f"{tmp}/stop-scrapers"
    try:
        subprocess.run([hfire, str(a.series)], check=True, capture_output=True)
        if scrapers:
            if os.path.exists(stopfile):
                os.unlink(stopfile)
            sc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--scraper", str(port),
                                   str(scrapers), stopfile], stdout=subprocess.PIPE, text=True)
            time.sleep(1.0)  # all of them polling
        cpu0 = d.proc.cpu_now()
        t0 = time.monotonic()
        out = subprocess.run([rfire, str(a.events), str(a.rate)], check=True, capture_output=True,
                             text=True).stdout
        fire_s = time.monotonic() - t0
        # drained: every record read, or nothing new for 2 s
        last, since = -1, time.monotonic()
        while reader.n < a.events and time.monotonic() - since < 2.0:
            if reader.n != last:
                last, since = reader.n, time.monotonic()
            time.sleep(0.05)
        cpu = d.proc.cpu_now() - cpu0
        sc_out = ""
        if sc:
            open(stopfile, "w").close()
            sc_out = sc.communicate(timeout=60)[0].strip()
        _, body, _ = scrape(port)
        L = f'selection="rec",event="{EVENT}"'
        delivered = metric(body, "tracerd_events_total", L + ',outcome="delivered"')
        lost = metric(body, "tracerd_events_total", L + ',outcome="lost"')
        sink_err = metric(body, "tracerd_events_total", L + ',outcome="sink_error"')
        skipped = metric(body, "tracerd_kernel_skipped_total")
    finally:
        if sc and sc.poll() is None:
            open(stopfile, "w").close()
            try:
                sc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                sc.kill()
                sc.wait()
        d.stop()
        reader.join(timeout=10)
        os.close(rfd)
    return {"delivered": delivered, "lost": lost, "sink_error": sink_err, "skipped": skipped,
            "records": reader.n, "delays": reader.delays, "scrapers": sc_out, "fire_s": fire_s,
            "cpu": cpu, "fire_out": out.strip()}


def part2(a, tmp, p):
    p(f"\n## 2. {a.scrapers} scrapers at once (each scrape {a.series} histogram series) while "
      f"{a.events} calls fire at {a.rate}/s into a selection printed to stdout; {a.rounds2} rounds, "
      "without and with scrapers interleaved")
    runs = {0: [], a.scrapers: []}
    for rnd in range(a.rounds2):
        for s in (0, a.scrapers):
            r = part2_run(a, tmp, s)
            runs[s].append(r)
            log(f"   part 2 round {rnd + 1}, {s} scrapers: records {r['records']}, lost {r['lost']} "
                f"{r['scrapers']}")
    p(f"{'scrapers':>8} {'round':>5} {'delivered':>9} {'lost':>5} {'sink_err':>8} {'skipped':>7} "
      f"{'printed':>8} {'delay ms p50':>12} {'p90':>7} {'p99':>7} {'max':>7} {'CPU s':>6}  scrapes")
    allok = True
    for s, rs in runs.items():
        for i, r in enumerate(rs):
            ms = [x * 1e3 for x in r["delays"]]
            good = r["delivered"] is not None and r["delivered"] + r["lost"] == a.events and \
                r["lost"] == 0 and r["records"] == a.events
            allok = allok and good
            p(f"{s:>8} {i + 1:>5} {r['delivered']:>9} {r['lost']:>5} {r['sink_error']:>8} "
              f"{r['skipped']:>7} {r['records']:>8} {median(ms):>12.1f} {pct(ms, .9):>7.1f} "
              f"{pct(ms, .99):>7.1f} {max(ms) if ms else float('nan'):>7.1f} {r['cpu']:>6.2f}  "
              f"{r['scrapers'] or '-'}")
    med = {s: median([median([x * 1e3 for x in r["delays"]]) for r in rs]) for s, rs in runs.items()}
    p99 = {s: median([pct([x * 1e3 for x in r["delays"]], .99) for r in rs]) for s, rs in runs.items()}
    p(f"records' delay (median over rounds): p50 {med[0]:.1f} ms without scrapers, "
      f"{med[a.scrapers]:.1f} ms with {a.scrapers} ({med[a.scrapers] / med[0]:.2f}x); "
      f"p99 {p99[0]:.1f} ms and {p99[a.scrapers]:.1f} ms ({p99[a.scrapers] / p99[0]:.2f}x)")
    p(f"{'[met]' if allok else '[MISSED]'} no record lost while {a.scrapers} scrapers poll: "
      "delivered + lost = the calls, lost = 0, every record printed, in every run")
    return runs


# ---------------------------------------------------------------- part 3

class MetricsTracerd(bench.Tracerd):
    """bench.py's tracerd row with [Metrics] Listen= and a scraper once a second."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.port = free_port()
        with open(self.conf, "a") as f:
            f.write(f"[Metrics]\nListen=127.0.0.1:{self.port}\n")
        self.scrapes = 0

    def start(self):
        super().start()
        self.stop_ev = threading.Event()
        self.scrapes = 0

        def loop():
            while not self.stop_ev.is_set():
                try:
                    scrape(self.port)
                    self.scrapes += 1
                except OSError:
                    pass
                self.stop_ev.wait(1.0)
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.stop_ev.set()
        self.thread.join()
        r = super().stop()
        r["scrapes"] = self.scrapes
        return r


def part3(a, tmp, p):
    ev = bench.EVENTS["fcntl_setlk"]
    cons = [bench.NoConsumer(),
            bench.Tracerd(ev, None, tmp, "tracerd stdout", a.build),
            MetricsTracerd(ev, None, tmp, "tracerd stdout +metrics", a.build),
            bench.Tracerd(ev, ev["accept"], tmp, "tracerd aggregate", a.build, aggregate=ev["hist"]),
            MetricsTracerd(ev, ev["accept"], tmp, "tracerd aggregate +metrics", a.build,
                           aggregate=ev["hist"])]
    rows = {c.name: [] for c in cons}
    for rnd in range(a.rounds):
        for c in cons:
            r = bench.run_one(c, a.build, "fcntl_setlk", a.count)
            rows[c.name].append(r)
        log(f"   part 3 round {rnd + 1}/{a.rounds} done")
    # As bench.py: each run against the median of the no-consumer runs; the
    # p10-based figure (10th percentile of the workload's 4096-iteration
    # chunks) is the one a slow phase of the VM moves least.
    base = median([r["ns_per_iter"] for r in rows["none"]])
    base10 = median([r["p10"] for r in rows["none"]])
    p(f"\n## 3. per-event cost, {ev['tp']}, {a.count} events a run, {a.rounds} rounds interleaved; "
      f"no consumer {base:.0f} ns an iteration (median), p10 {base10:.0f}")
    p(f"{'consumer':<28} {'ns added/event':>14} {'min..max':>12} {'p10-based':>9} "
      f"{'lost per round':>30} {'skipped':>7} {'scrapes/run':>11} {'CPU ms/M':>9}")
    added, added10 = {}, {}
    for name, rs in rows.items():
        if name == "none":
            continue
        ad = [r["ns_per_iter"] - base for r in rs]
        added[name] = median(ad)
        added10[name] = median([r["p10"] - base10 for r in rs])
        cpu = median([r["cpu_s"] / r["delivered"] * 1e9 for r in rs if r["delivered"]])
        p(f"{name:<28} {median(ad):>14.0f} {min(ad):>5.0f}..{max(ad):<6.0f} {added10[name]:>9.0f} "
          f"{' '.join(str(r['lost']) for r in rs):>30} {sum(r.get('skipped', 0) for r in rs):>7} "
          f"{median([r.get('scrapes', 0) for r in rs]):>11.0f} {cpu:>9.1f}")
    for off in ("tracerd stdout", "tracerd aggregate"):
        on = off + " +metrics"
        p(f"{on} / {off}: {added[on] / added[off]:.2f}x (p10-based {added10[on] / added10[off]:.2f}x)")
    return added


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--series", type=int, default=10000)
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--scrapers", type=int, default=100)
    ap.add_argument("--events", type=int, default=200000)
    ap.add_argument("--rate", type=int, default=50000)
    ap.add_argument("--rounds2", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--count", type=int, default=4000000)
    ap.add_argument("--parts", default="123")
    ap.add_argument("--out")
    ap.add_argument("--scraper", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.scraper:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        asyncio.run(scraper_main(int(a.scraper[0]), int(a.scraper[1]), a.scraper[2]))
        return
    a.build = os.path.abspath(a.build)
    now = datetime.datetime.now(datetime.timezone.utc)
    path = a.out or f"{ROOT}/bench/results/{now:%Y-%m-%d}-metrics.txt"
    tmp = tempfile.mkdtemp(prefix="metrics-bench.")
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    lines = []

    def p(*x):
        s = " ".join(str(y) for y in x)
        lines.append(s)
        print(s, flush=True)
    p(f"# GET /metrics benchmark (issue 32), {now:%Y-%m-%d %H:%M} UTC")
    p(f"kernel {platform.release()}, {os.cpu_count()} CPUs, load average at start "
      f"{' '.join(read('/proc/loadavg').split()[:3])}; tracerd {rev}")
    try:
        if "1" in a.parts:
            part1(a, tmp, p)
        if "2" in a.parts:
            part2(a, tmp, p)
        if "3" in a.parts:
            part3(a, tmp, p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        log(f"results: {path}")


if __name__ == "__main__":
    main()
