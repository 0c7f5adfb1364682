#!/usr/bin/env python3
"""The stages of the data flow, earliest first: a file may include headers of
its own stage and of earlier ones, never of a later one, and no header may
include itself through others (an include circle). Prints TAP lines
("ok - ..." / "not ok - ...") for tests/run.sh; exits 1 on any violation."""
import os
import re
import sys

# Stage folders in the order data flows through them (docs/ARCHITECTURE.md).
STAGES = [
    "include",          # shared helpers, and what BPF and userspace agree on
    "kernel-events",    # tracefs formats, BTF classes, print fmts
    "daemon/config",    # the config file
    "daemon/resolve",   # globs to events: the event registry
    "daemon/filter",    # Filter= to bytecode
    "daemon/render",    # print fmt to text
    "daemon/aggregate", # Aggregate= to BPF maps, and their dumps
    "daemon/attach",    # the BPF loader
    "daemon/consume",   # the ring buffer, slots, the consumer
    "daemon/store",     # the event store's files
    "daemon/sink",      # where records go
    "daemon",           # main, the event loop, apply/commit, reports
]
BPF = "bpf"             # BPF programs: only include/ besides their own
# BPF headers that userspace runs too, at the stage of include/: the filter
# interpreter, which tracerd --read runs on stored records (daemon/store/).
SHARED_BPF = {"bpf/filter.bpf.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def stage_of(path):
    d = os.path.dirname(path)
    best = None
    for i, s in enumerate(STAGES):
        if d == s or d.startswith(s + "/"):
            if best is None or len(s) > len(STAGES[best]):
                best = i
    return best


def resolve(inc, src):
    for base in (os.path.dirname(src), ".", "include", "daemon"):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(p):
            return p
    return None     # generated (skeletons) or a system header


def sources():
    for top in ["include", "kernel-events", "daemon", BPF]:
        for root, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(root, f)


def main():
    bad = []
    graph = {}
    for src in sources():
        text = open(src, encoding="utf-8").read()
        deps = [(inc, resolve(inc, src)) for inc in INCLUDE.findall(text)]
        graph[src] = [p for _, p in deps if p and p.endswith(".h")]
        for inc, p in deps:
            if p is None:
                continue
            if src.startswith(BPF + "/"):
                if not (p.startswith(BPF + "/") or p.startswith("include/")):
                    bad.append(f"{src} (BPF) includes {p}")
                continue
            s, t = stage_of(src), 0 if p in SHARED_BPF else stage_of(p)
            if s is None or t is None:
                bad.append(f"{src} includes {p}: not in a stage folder")
            elif t > s:
                bad.append(f"{src} ({STAGES[s]}) includes {p} from a later stage ({STAGES[t]})")
    # Include circles among headers: depth-first search for a back edge.
    state = {}

    def visit(h, path):
        state[h] = 1
        for n in graph.get(h, []):
            if state.get(n) == 1:
                bad.append("include circle: " + " -> ".join(path[path.index(n):] + [n]
                                                            if n in path else path + [n]))
            elif not state.get(n):
                visit(n, path + [n])
        state[h] = 2
    for h in sorted(graph):
        if h.endswith(".h") and not state.get(h):
            visit(h, [h])
    for b in bad:
        print("not ok - layers: " + b)
    if not bad:
        print(f"ok - layers: {len(graph)} files include only their own or earlier stages; no include circle")
    return 1 if bad else 0


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    sys.exit(main())
