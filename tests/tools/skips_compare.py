#!/usr/bin/env python3
"""Compares, per event, the records of a tracefs instance (the kernel) with
tracerd's over bpf_beside's window, and attributes what tracerd lacks.

    skips_compare.py KERNEL_TRACE TRACERD_STDOUT BESIDE_OUTPUT OWN_TIDS

OWN_TIDS: tracerd's threads (space-separated), left out of the kernel's side
as tracerd leaves them out. Per (event, thread) the kernel's count minus
tracerd's is a deficit; a deficit in a thread whose thread group no BPF
observer firing ever ran in is 'hidden' (no BPF program runs in that task's
context here: the kernel's own counters do not see it either). Prints one
line per event, then TOTAL:
    EVENT kernel= tracerd= missing= observed= perf_busy= bpf_busy= hidden= unexplained=
and HIDDEN lines naming the tasks. oracle_lacks: per thread, records tracerd
has beyond the instance's (the oracle misses some too); unexplained counts
them back in."""
import collections
import re
import sys

LINE = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S{4,5}\s+)?(\d+)\.(\d{6}): (\w+): ')


def load(path, t0, t1, skip):
    counts = collections.Counter()
    comms = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            us = int(m.group(4)) * 1000000 + int(m.group(5))
            if not t0 <= us < t1 or m.group(2) in skip:
                continue
            counts[(m.group(6), m.group(2))] += 1
            comms[m.group(2)] = m.group(1).strip()
    return counts, comms


def tgid_of(tid):
    try:
        with open(f'/proc/{tid}/status') as f:
            for line in f:
                if line.startswith('Tgid:'):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    kernel, out, beside, own = sys.argv[1:5]
    skip = set(own.split())
    text = open(beside, errors='replace').read().splitlines()
    t0, t1 = (int(x) // 1000 for x in next(l for l in text if l.startswith('window ')).split()[1:3])
    seen_tgids = {int(l.split()[1]) for l in text if l.startswith('tgid ')}
    obs = {}
    for l in text:
        if l.startswith('event '):
            w = l.split()
            kv = dict(zip(w[2::2], w[3::2]))
            obs[w[1].split(':')[1]] = {k: int(v) for k, v in kv.items() if v.isdigit()}
    K, comms = load(kernel, t0, t1, skip)
    T, _ = load(out, t0, t1, skip)
    total = collections.Counter()
    hidden_tasks = collections.Counter()
    for ev, o in obs.items():
        k = sum(v for (e, _), v in K.items() if e == ev)
        t = sum(v for (e, _), v in T.items() if e == ev)
        hidden = 0
        for (e, tid), v in K.items():
            if e != ev:
                continue
            d = v - T.get((e, tid), 0)
            g = tgid_of(tid)
            if d > 0 and g is not None and g not in seen_tgids:
                hidden += d
                hidden_tasks[(comms.get(tid, '?'), tid, g)] += d
        # Records tracerd has and the oracle lacks, per thread: the oracle
        # misses some too (here: task-time events of the VM agent's fresh
        # children, which ftrace does not record and BPF does).
        oracle_lacks = sum(max(0, v - K.get((e, tid), 0)) for (e, tid), v in T.items() if e == ev)
        row = {
            'kernel': k, 'tracerd': t, 'missing': k - t,
            'observed': o['fired'] - o['self_fired'],
            'perf_busy': o['perf_busy'] - o['self_perf_busy'],
            'bpf_busy': o['bpf_busy'] - o['self_bpf_busy'],
            'bpf_busy_all': o['bpf_busy'],
            'hidden': hidden,
            'oracle_lacks': oracle_lacks,
        }
        row['unexplained'] = (row['missing'] + oracle_lacks - row['perf_busy'] - row['bpf_busy']
                              - hidden)
        total.update(row)
        print(ev, ' '.join(f'{k}={v}' for k, v in row.items()))
    print('TOTAL', ' '.join(f'{k}={v}' for k, v in total.items()))
    for (comm, tid, g), n in hidden_tasks.most_common():
        print(f'HIDDEN {comm} tid={tid} tgid={g} records={n}')


if __name__ == '__main__':
    main()
