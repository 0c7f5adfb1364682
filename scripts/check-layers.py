#!/usr/bin/env python3
"""The stages of the data flow, earliest first: a file may include headers of
its own stage and of earlier ones, never of a later one, and no header may
include itself through others (an include circle). On the built objects
($BUILD/<source>.o, nm): no file calls a function of a later stage, and no
files call each other in a circle. Prints TAP lines ("ok - ..." /
"not ok - ...") for tests/run.sh; exits 1 on any violation."""
import os
import re
import subprocess
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
    "daemon/export",    # stored records out to other tools' formats (trace.dat)
    "daemon/sink",      # where records go
    "daemon/tracer",    # a config applied: selections attached, units, reports
    "daemon/read",      # tracerd --read: the store read back, filtered, exported
    "daemon/metrics",   # GET /metrics: the counts in the Prometheus format, served on sd-event
    "daemon",           # main, the event loop, --list/--check-config
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


def objects(build):
    """Each C source of a stage folder with its object, $BUILD/<source>.o."""
    for src in sources():
        if src.endswith(".c") and not src.startswith(BPF + "/") and not src.endswith(".bpf.c"):
            yield src, os.path.join(build, src[:-2] + ".o")


def symbols(obj):
    """The global symbols an object defines, and those it needs from others."""
    out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] == "U":
            needed.add(f[0])
        elif f[1] in "TDBRGSVWCI":   # upper case: global; lower case is static
            defined.add(f[0])
    return defined, needed


def sccs(nodes, edges):
    """Tarjan's strongly connected components, each a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in index:
            connect(v)
    return out


def circle(comp, edges):
    """The longest simple circle through the component's first file (so that
    a small component is named whole), or the shortest when it is large."""
    start, inside = comp[0], set(comp)
    best = []

    def walk(path):
        nonlocal best
        for w in sorted(edges.get(path[-1], {})):
            if w == start and len(path) > len(best):
                best = list(path)
            elif w in inside and w not in path and len(comp) <= 8:
                walk(path + [w])
    if len(comp) <= 8:
        walk([start])
    if not best:    # breadth-first: the shortest way back to the start
        prev, todo = {start: None}, [start]
        while todo and not best:
            v = todo.pop(0)
            for w in sorted(edges.get(v, {})):
                if w == start:
                    best = [v]
                    while prev[best[0]] is not None:
                        best.insert(0, prev[best[0]])
                    break
                if w in inside and w not in prev:
                    prev[w] = v
                    todo.append(w)
    return best + [start]


def calls(bad):
    """Calls (and address uses) between the files' objects: none to a later
    stage, none in a circle. Returns how many files were checked, None when
    no object is built."""
    build = os.environ.get("BUILD", "build")
    pairs = list(objects(build))
    if not any(os.path.exists(o) for _, o in pairs):
        return None
    owner, needs = {}, {}
    for src, obj in pairs:
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
            bad.append(f"{obj} missing or older than {src} (run make)")
            continue
        defined, needs[src] = symbols(obj)
        for sym in defined:
            owner.setdefault(sym, []).append(src)
    # edges[a][b]: the functions (or data) of b that a uses.
    edges = {}
    for src, needed in needs.items():
        for sym in needed:
            for dst in owner.get(sym, []):
                if dst != src:
                    edges.setdefault(src, {}).setdefault(dst, set()).add(sym)
    for src in sorted(edges):
        for dst in sorted(edges[src]):
            s, t = stage_of(src), stage_of(dst)
            if s is not None and t is not None and t > s:
                bad.append(f"{src} ({STAGES[s]}) calls {', '.join(sorted(edges[src][dst]))} "
                           f"in {dst} from a later stage ({STAGES[t]})")
    for comp in sccs(needs, edges):
        if len(comp) < 2:
            continue
        ring = circle(comp, edges)
        on_ring = set(zip(ring, ring[1:]))
        # Within one folder, the edges name files without it.
        short = (os.path.basename if len({os.path.dirname(f) for f in comp}) == 1
                 else (lambda f: f))

        def edge(a, b):
            return f"{short(a)} -> {short(b)}: {', '.join(sorted(edges[a][b]))}"
        said = [edge(a, b) for a, b in zip(ring, ring[1:])]
        also = [edge(a, b) for a in comp for b in sorted(edges.get(a, {}))
                if b in comp and (a, b) not in on_ring]
        bad.append("call circle: " + " -> ".join(ring) + " (" + "; ".join(said)
                   + ("; also " + "; ".join(also) if also else "") + ")")
    return len(needs)


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
    # Calls, from the objects: a stage could still call a later one through
    # a declaration of its own, and files call each other in a circle
    # without any include circle.
    bad_calls = []
    checked = calls(bad_calls)
    for b in bad_calls:
        print("not ok - layers: " + b)
    if checked is None:
        print(f"ok - layers: call circles not checked # SKIP no objects in "
              f"{os.environ.get('BUILD', 'build')}/ (run make first)")
    elif not bad_calls:
        print(f"ok - layers: {checked} objects call only their own or earlier stages; no call circle")
    return 1 if bad or bad_calls else 0


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    sys.exit(main())
