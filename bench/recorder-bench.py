#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The flight recorder's targets (issue 33), one run:
- per event, what Output=recorder adds to a workload against Output=store
  (filelock:fcntl_setlk from tests/tools/fire_setlk, interleaved rounds, the
  median of each), and tracerd's own CPU per event;
- the bytes tracerd wrote (/proc/PID/io write_bytes) during a run with no
  trigger: the target is 0 for the recorder;
- the bytes tracerd wrote during --quiet-seconds of events at --rate with no
  trigger: the target is 0;
- a full window: a snapshot of Size= (Compression=none, so that it fills in
  seconds) from SIGUSR1 to its message (written, fdatasynced, renamed), while
  a second workload records on, and what that lost; RSS before and after;
- RSS over --rss-seconds of events at --rate into a window of --rss-size
  (which wraps within a minute): the target is at most Size= + 64 MiB, flat.
The ring buffer is the daemon's default (--ring), as an installed tracerd's.
Run as root from the repository, after make; journald's socket is hidden
(a mount namespace of its own) so that tracerd's messages come on stderr."""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def reexec_without_journal():
    if os.environ.get("RECORDER_BENCH_NS"):
        subprocess.run(["mount", "-t", "tmpfs", "none", "/run/systemd"], check=True)
        return
    os.environ["RECORDER_BENCH_NS"] = "1"
    os.execvp("unshare", ["unshare", "-m", sys.executable] + sys.argv)


RING = "8M"


def conf(path, tmp, output, size, codec="zstd"):
    with open(path, "w") as f:
        f.write(f"[Daemon]\nRingBufferSize={RING}\nStatsIntervalSec=0\n"
                f"[Store]\nDirectory={tmp}/store\nCompression={codec}\nMaxUse=0\n"
                f"[Recorder]\nSize={size}\nKeepAfterSec=0\nMinIntervalSec=0\n"
                f"[Selection]\nName=bench\nEvents=filelock:fcntl_setlk\n"
                f"Filter=comm == \"recbench\"\nOutput={output}\n")


def wait_for(path, pattern, proc, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = re.search(pattern, open(path, errors="replace").read())
        if m:
            return m
        if proc.poll() is not None:
            break
        time.sleep(0.005)
    raise RuntimeError(f"no '{pattern}' in {path}: " + open(path).read()[-2000:])


def proc_io(pid):
    return int(re.search(r"write_bytes: (\d+)", open(f"/proc/{pid}/io").read()).group(1))


def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def rss_mib(pid):
    return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1)) / 1024


def fire(work, n, first=1):
    out = subprocess.run([work, str(n), str(first)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[2])


def start(tracerd, cfg, err):
    p = subprocess.Popen([tracerd, "--config", cfg], stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    wait_for(err, "attached", p)
    return p


def stop(p):
    p.send_signal(signal.SIGINT)
    p.wait(timeout=120)


def per_event(args, tmp, work):
    """Seconds per round by mode; write_bytes and CPU ticks of the traced rounds."""
    secs, io, cpu = {"none": [], "store": [], "recorder": []}, {"store": [], "recorder": []}, \
        {"store": [], "recorder": []}
    for r in range(args.rounds):
        secs["none"].append(fire(work, args.events))
        for mode in ("store", "recorder"):
            cfg, err = f"{tmp}/{mode}.conf", f"{tmp}/{mode}.err"
            subprocess.run(["rm", "-rf", f"{tmp}/store"])
            conf(cfg, tmp, mode, "64M")
            p = start(args.tracerd, cfg, err)
            w0, c0 = proc_io(p.pid), cpu_ticks(p.pid)
            secs[mode].append(fire(work, args.events))
            time.sleep(0.3)	# the flush timer's drain
            io[mode].append(proc_io(p.pid) - w0)
            cpu[mode].append(cpu_ticks(p.pid) - c0)
            stop(p)
    return secs, io, cpu


def full_window(args, tmp, work):
    cfg, err = f"{tmp}/full.conf", f"{tmp}/full.err"
    subprocess.run(["rm", "-rf", f"{tmp}/store"])
    conf(cfg, tmp, "recorder", args.size, "none")
    p = start(args.tracerd, cfg, err)
    rss0 = rss_mib(p.pid)
    fire(work, args.fill)
    time.sleep(0.5)
    rss1 = rss_mib(p.pid)
    t0 = time.monotonic()
    p.send_signal(signal.SIGUSR1)
    more = subprocess.Popen([work, str(args.fill // 2), str(args.fill + 1)], stdout=subprocess.DEVNULL)
    m = wait_for(err, r"snapshot \(signal\) in (\S+): (\d+) records", p, 120)
    took = time.monotonic() - t0
    more.wait()
    time.sleep(0.3)
    rss2 = rss_mib(p.pid)
    stop(p)
    du = sum(os.path.getsize(os.path.join(m.group(1), f)) for f in os.listdir(m.group(1)))
    summary = re.search(r"selection bench: (\d+) delivered, (\d+) lost", open(err).read())
    return took, int(m.group(2)), du, rss0, rss1, rss2, summary.groups() if summary else ("?", "?")


def paced(work, n, rate):
    return subprocess.Popen([work, str(n), "1", str(rate)], stdout=subprocess.DEVNULL)


def quiet(args, tmp, work):
    """Bytes written by tracerd while --rate events a second go to the window."""
    cfg, err = f"{tmp}/quiet.conf", f"{tmp}/quiet.err"
    subprocess.run(["rm", "-rf", f"{tmp}/store"])
    conf(cfg, tmp, "recorder", "64M")
    p = start(args.tracerd, cfg, err)
    w0 = proc_io(p.pid)
    fire_p = paced(work, args.rate * args.quiet_seconds, args.rate)
    fire_p.wait()
    time.sleep(0.3)
    written = proc_io(p.pid) - w0
    stop(p)
    on_disk = os.path.exists(f"{tmp}/store") and os.listdir(f"{tmp}/store")
    summary = re.search(r"selection bench: (\d+) delivered, (\d+) lost", open(err).read())
    return written, bool(on_disk), summary.groups() if summary else ("?", "?")


def rss_run(args, tmp, work):
    """VmRSS every 20 s while --rate events a second go into --rss-size."""
    cfg, err = f"{tmp}/rss.conf", f"{tmp}/rss.err"
    subprocess.run(["rm", "-rf", f"{tmp}/store"])
    conf(cfg, tmp, "recorder", args.rss_size)
    p = start(args.tracerd, cfg, err)
    fire_p = paced(work, args.rate * args.rss_seconds, args.rate)
    t0, samples = time.monotonic(), []
    while fire_p.poll() is None:
        samples.append((time.monotonic() - t0, rss_mib(p.pid)))
        due = samples[-1][0] + 20
        while fire_p.poll() is None and time.monotonic() - t0 < due:
            time.sleep(0.5)
    samples.append((time.monotonic() - t0, rss_mib(p.pid)))
    stop(p)
    text = open(err).read()
    summary = re.search(r"selection bench: (\d+) delivered, (\d+) lost", text)
    window = re.search(r"recorder: .*", text)
    return samples, summary.groups() if summary else ("?", "?"), window.group(0) if window else ""


def size_mib(size):
    n, unit = re.fullmatch(r"(\d+)([KMG]?)", size).groups()
    return int(n) * {"": 1 / (1 << 20), "K": 1 / 1024, "M": 1, "G": 1024}[unit]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracerd", default=f"{ROOT}/build/tracerd")
    ap.add_argument("--events", type=int, default=1000000, help="events per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", default="256M", help="the full window's Size=")
    ap.add_argument("--fill", type=int, default=3200000, help="events that fill it (no compression)")
    ap.add_argument("--ring", default="8M", help="RingBufferSize= (the daemon's default)")
    ap.add_argument("--rate", type=int, default=200000, help="events a second, paced runs")
    ap.add_argument("--quiet-seconds", type=int, default=60)
    ap.add_argument("--rss-seconds", type=int, default=600)
    ap.add_argument("--rss-size", default="16M")
    ap.add_argument("--parts", default="1234", help="1 per event, 2 quiet, 3 full window, 4 RSS")
    args = ap.parse_args()
    global RING
    RING = args.ring
    reexec_without_journal()
    with tempfile.TemporaryDirectory(prefix="recorder-bench.") as tmp:
        work = f"{tmp}/recbench"
        subprocess.run(["cp", f"{ROOT}/build/tests/tools/fire_setlk", work], check=True)
        print(f"# RingBufferSize={args.ring}, {os.uname().release}, {os.cpu_count()} CPUs")
        if "1" in args.parts:
            secs, io, cpu = per_event(args, tmp, work)
            base = statistics.median(secs["none"])
            print(f"# {args.events} fcntl_setlk events a round, {args.rounds} rounds, medians")
            for mode in ("store", "recorder"):
                added = (statistics.median(secs[mode]) - base) / args.events * 1e9
                ticks = statistics.median(cpu[mode]) / os.sysconf("SC_CLK_TCK")
                print(f"Output={mode:8} added {added:6.1f} ns/event  tracerd CPU "
                      f"{ticks / args.events * 1e9:6.1f} ns/event  written {max(io[mode])} bytes "
                      f"(most of a round)")
        if "2" in args.parts:
            written, on_disk, (dl, lost) = quiet(args, tmp, work)
            print(f"no trigger, {args.quiet_seconds} s at {args.rate}/s: tracerd wrote {written} bytes, "
                  f"store directory {'made' if on_disk else 'not made'}; {dl} delivered, {lost} lost "
                  f"[{'met' if written == 0 and not on_disk else 'MISSED'}]")
        if "3" in args.parts:
            took, recs, du, rss0, rss1, rss2, (dl, lost) = full_window(args, tmp, work)
            limit = size_mib(args.size) + 64
            print(f"full window: Size={args.size}, {recs} records, {du >> 20} MiB on disk "
                  f"{took:.2f} s after SIGUSR1 (written, fdatasynced, renamed) "
                  f"[{'met' if took <= 2 and lost == '0' else 'MISSED'}]")
            print(f"  recording on meanwhile: {dl} delivered, {lost} lost; RSS {rss0:.0f} MiB at start, "
                  f"{rss1:.0f} MiB full, {rss2:.0f} MiB after the snapshot (Size= + 64 MiB: "
                  f"{limit:.0f}) [{'met' if max(rss1, rss2) <= limit else 'MISSED'}]")
        if "4" in args.parts:
            samples, (dl, lost), window = rss_run(args, tmp, work)
            limit = size_mib(args.rss_size) + 64
            late = [r for t, r in samples if t >= 120]
            print(f"RSS at {args.rate}/s for {args.rss_seconds} s into Size={args.rss_size}: "
                  + ", ".join(f"{t:.0f} s {r:.1f}" for t, r in samples) + " MiB")
            print(f"  {dl} delivered, {lost} lost; {window}")
            print(f"  max {max(r for _, r in samples):.1f} MiB (Size= + 64 MiB: {limit:.0f}) "
                  f"[{'met' if max(r for _, r in samples) <= limit else 'MISSED'}]; from 120 s on "
                  f"{min(late):.1f}..{max(late):.1f} MiB" if late else "")

if __name__ == "__main__":
    main()
