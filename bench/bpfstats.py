"""The kernel's BPF run-time statistics, shared by the bench scripts."""
import os
import re


def prog_stats(pid):
    """(run_time_ns, run_cnt) summed over the BPF programs process pid holds,
    from /proc/PID/fdinfo (counted while kernel.bpf_stats_enabled is on)."""
    t = n = 0
    seen = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            info = open(f"/proc/{pid}/fdinfo/{fd}").read()
        except OSError:
            continue
        m = re.search(r"prog_id:\s+(\d+)", info)
        if not m or m.group(1) in seen:
            continue
        seen.add(m.group(1))
        rt = re.search(r"run_time_ns:\s+(\d+)", info)
        rc = re.search(r"run_cnt:\s+(\d+)", info)
        if rt and rc:
            t, n = t + int(rt.group(1)), n + int(rc.group(1))
    return t, n


STATS = "/proc/sys/kernel/bpf_stats_enabled"


def ns_per_run(pids, work):
    """ns per run of the BPF programs that each process of pids holds, over
    work() with kernel.bpf_stats_enabled on (it adds its own two clock reads
    to every run of every program on the machine, so it is on only then);
    None for a process whose programs did not run."""
    old = open(STATS).read()
    open(STATS, "w").write("1\n")
    try:
        before = [prog_stats(p) for p in pids]
        work()
        after = [prog_stats(p) for p in pids]
    finally:
        open(STATS, "w").write(old)
    return [(t1 - t0) / (n1 - n0) if n1 > n0 else None for (t0, n0), (t1, n1) in zip(before, after)]
