#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How long a Filter= reload of a large selection takes (issue 23: no longer
than before filters were emitted), for one or more builds of tracerd,
interleaved round by round in one run.

tracerd starts on `Events=syscalls:*` (about 700 events) with one Filter=;
each reload rewrites the Filter= and sends SIGHUP, and is timed from the
signal to the log line that ends it (`reloaded ...`): building the new
selection (and loading its emitted programs), attaching its events, and
detaching the old ones."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wait_for(path, text, count, proc, timeout=600):
    """Until text occurs count times in the file at path."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(path, errors="replace") as f:
            if f.read().count(text) >= count:
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def write_conf(path, events, filt):
    with open(path, "w") as f:
        f.write("[Daemon]\nOutput=stdout\nStatsIntervalSec=0\n"
                f"[Selection]\nName=reload\nEvents={events}\nFilter={filt}\n")


class Daemon:
    def __init__(self, build, tmp, tag, events):
        self.conf, self.err = f"{tmp}/{tag}.conf", f"{tmp}/{tag}.err"
        self.events, self.n = events, 0
        write_conf(self.conf, events, self.filt(0))
        self.p = subprocess.Popen([f"{build}/tracerd", "--config", self.conf, "--foreground"],
                                  stdout=subprocess.DEVNULL, stderr=open(self.err, "w"))
        if not wait_for(self.err, "attached", 1, self.p):
            raise RuntimeError(f"{build}/tracerd did not start: " + open(self.err).read())

    @staticmethod
    def filt(n):
        # The same shape every time, so that each reload changes the filter only.
        return f"common_pid == {n + 1} || __syscall_nr == {n + 100000}"

    def reload(self):
        """Seconds from SIGHUP to the end of the reload."""
        self.n += 1
        write_conf(self.conf, self.events, self.filt(self.n))
        t0 = time.monotonic()
        self.p.send_signal(signal.SIGHUP)
        if not wait_for(self.err, "reloaded", self.n, self.p):
            raise RuntimeError("reload did not end: " + open(self.err).read()[-2000:])
        return time.monotonic() - t0

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=900)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", help="a build directory (repeat to compare)")
    ap.add_argument("--events", default="syscalls:*")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reloads", type=int, default=2, help="reloads per start")
    args = ap.parse_args()
    builds = [os.path.abspath(b) for b in (args.build or [f"{ROOT}/build"])]
    times = {b: [] for b in builds}
    # One tracerd at a time: with another attached to the same events, a
    # tracepoint would never lose its last perf event, nor pay for it.
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for i, b in enumerate(builds):
                d = Daemon(b, tmp, f"d{i}", args.events)
                try:
                    for _ in range(args.reloads):
                        times[b].append(d.reload())
                finally:
                    d.stop()
                print(f"round {r + 1}: {b}: " + ", ".join(f"{t:.2f}" for t in times[b][-args.reloads:])
                      + " s", flush=True)
    print(f"\nFilter= reload of Events={args.events} (SIGHUP to `reloaded`), "
          f"{args.rounds} rounds of {args.reloads} reloads, builds interleaved, one tracerd at a time:")
    first = sorted(times[builds[0]])[len(times[builds[0]]) // 2]
    for b in builds:
        med = sorted(times[b])[len(times[b]) // 2]
        print(f"  {b}: median {med:.2f} s (min {min(times[b]):.2f}, max {max(times[b]):.2f}); "
              f"{med / first:.2f}x the first build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
