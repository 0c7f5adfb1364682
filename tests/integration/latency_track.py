#!/usr/bin/env python3
"""onmax($var).save(fields) and onchange($var).save(fields) (issue 31)
against the kernel's own records (latency_onmax.sh): the pairs of a tracefs
instance's sched_waking and sched_switch records, as latency_pair.py pairs
them by the kernel's rules (what BPF saw, tracerd's threads left out), give
per key (next_pid) what the kernel's ontrack_action() would keep:
  - onmax: a latency strictly above the key's max so far (from 0) becomes
    the max, and the switch record's fields are saved with it;
  - onchange: a latency other than the tracked one (from 0) becomes the
    tracked one, the fields saved with it. At the end it holds the key's
    last latency; the saved fields are those of the last pair whose latency
    differed from the one tracked before it.
tracerd's dump of each trigger prints them after the entry's line, as
track_data_print() does ('\\tmax: %10llu' or '\\tchanged: %10llu', then
'  NAME: %10llu' or '  NAME: %-32s' per saved field).

Each trigger also fires a synthetic event with its latency and the saved
fields (onmatch in the same trigger: the same value, read once): tracerd's
own pairs, in order. Three comparisons per key:
  - exact: the dump's tracked value and saved fields are what the rule gives
    over tracerd's own pairs, and the entry's hitcount is their number;
  - with the kernel's pairs: the hitcount is the number of pairs; the max
    (or last) latency is the oracle's within the clock tolerance of
    latency_pair.py (TOL), and the saved fields are those of an oracle pair
    whose latency lies within it of tracerd's value. The clock reads of
    ftrace and BPF differ per record (latency_pair.py): two pairs of nearly
    equal latency may swap order, so the pair that set tracerd's max may not
    be the oracle's. A key whose pair lies beyond the tolerance (a clock
    outlier, as latency_pair.py allows two per mille of) is told apart:
  - same event: the saved fields equal those of the oracle pair that is the
    partner (in order, key by key: latency_pair.align) of tracerd's pair
    that set them, whatever the clocks read.

  latency_track.py OUT TRACE --misses N [--exclude TIDS] [--tol US]
                   [--onmax SEL=SYNTH] [--onchange SEL=SYNTH]

SEL: the trigger's selection (its dump in OUT); SYNTH: the synthetic event
its onmatch fires, whose fields after lat and pid are the saved fields of
the trigger, in order, under the same names. Prints TAP lines; exits 1 on a
difference."""
import argparse
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from latency_pair import TOL, align, as_bpf_saw, kernel_pairs, records, tap  # noqa: E402

# sched_switch as the trace prints it (a comm may hold spaces).
SWITCH = re.compile(r"prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=\S+ ==> "
                    r"next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)$")
U64 = 1 << 64


def switch_fields(body):
    """A sched_switch record's fields by name, numbers as ints."""
    m = SWITCH.match(body)
    return {"prev_comm": m.group(1), "prev_pid": int(m.group(2)), "prev_prio": int(m.group(3)),
            "next_comm": m.group(4), "next_pid": int(m.group(5)), "next_prio": int(m.group(6))}


def norm(v):
    """A saved value as the dump prints it: a number as u64 (%llu), a string."""
    return v % U64 if isinstance(v, int) else v


def track_dump(path, selection):
    """SELECTION's dumps in tracerd's output: (handler, saved field names,
    {key: (hitcount, value, {name: value})}); value None where the entry
    has no tracked line."""
    handler, names, entries, cur, last = None, [], {}, False, None
    line_re = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("# selection: "):
            cur = line.startswith(f"# selection: {selection}, ")
            continue
        if not cur:
            continue
        m = re.search(r"# trigger info: .*:on(max|change)\(\$\w+\)\.save\(([^)]*)\)", line)
        if m:
            handler, names = m.group(1), m.group(2).split(",")
            word = "max" if handler == "max" else "changed"
            # '  NAME: %10llu' or '  NAME: %-32s', in the order of save().
            line_re = re.compile(rf"^\t{word}: +(\d+)" + "".join(
                rf"  {re.escape(n)}: (.*?)" for n in names) + r"\s*$")
            continue
        m = re.match(r"\{ \w+: +(-?\d+) \} hitcount: +(\d+)\s*$", line)
        if m:
            last = int(m.group(1))
            entries[last] = (int(m.group(2)), None, {})
            continue
        if line.startswith("\t") and line_re and last is not None:
            m = line_re.match(line)
            if not m:
                entries[last] = (entries[last][0], "unparsed: " + line, {})
                continue
            saved = {}
            for n, v in zip(names, m.groups()[1:]):
                v = v.strip()
                saved[n] = int(v) if re.fullmatch(r"\d+", v) else v
            entries[last] = (entries[last][0], int(m.group(1)), saved)
    return handler, names, entries


def synth_pairs(recs, event, names):
    """tracerd's records of synthetic EVENT, fields lat pid NAMES...: key ->
    [(ts, cpu, pid, lat, {name: value})]; and the records that do not parse."""
    # The last field may hold spaces (a comm); the others do not.
    rx = re.compile(r"lat=(\d+) pid=(-?\d+)" + "".join(
        rf" {re.escape(n)}=(.*)" if i == len(names) - 1 else rf" {re.escape(n)}=(\S*)"
        for i, n in enumerate(names)) + "$")
    pairs, bad = defaultdict(list), []
    for ts, cpu, pid, ev, body in recs:
        if ev != event:
            continue
        m = rx.match(body)
        if not m:
            bad.append(body)
            continue
        saved = {n: (int(v) if re.fullmatch(r"-?\d+", v) else v) for n, v in zip(names, m.groups()[2:])}
        pairs[int(m.group(2))].append((ts, cpu, pid, int(m.group(1)), saved))
    return pairs, bad


def track(lats, handler):
    """The kernel's rule over one key's latencies in order: (tracked value,
    index of the pair whose fields are saved); (0, None) if none set it."""
    val, at = 0, None
    for i, lat in enumerate(lats):
        if (lat > val) if handler == "max" else (lat != val):
            val, at = lat, i
    return val, at


def check_trigger(handler, sel, synth, out, trecs, kern, tol, allowed):
    """The comparisons of one trigger's dump (see the module's text)."""
    word = "max" if handler == "max" else "changed"
    got_handler, names, dump = track_dump(out, sel)
    good = tap(bool(got_handler == handler and names and dump),
               f"{sel}: the dump shows on{handler}()'s saved fields ({','.join(names)}) "
               f"for {len(dump)} keys")
    if not good:
        return False
    ours, bad = synth_pairs(trecs, synth, names)
    good &= tap(not bad and bool(ours), f"{sel}: tracerd's {synth} records parse ({sum(map(len, ours.values()))}; "
                f"{len(bad)} do not)")
    for b in bad[:5]:
        print(f"#   {b!r}")
    keys = sorted(set(dump) | set(ours) | set(kern))
    # Exact: the rule over tracerd's own pairs.
    own_bad, hit_own_bad = [], []
    for key in keys:
        hit, val, saved = dump.get(key, (0, None, {}))
        evs = ours.get(key, [])
        if hit != len(evs):
            hit_own_bad.append((key, hit, len(evs)))
        want, at = track([e[3] for e in evs], handler)
        want_saved = {n: norm(v) for n, v in evs[at][4].items()} if at is not None else {}
        # No pair above 0 (onmax) or other than 0 (onchange): nothing set.
        if (val, saved) != (want, want_saved) and not (at is None and val in (None, 0)):
            own_bad.append((key, val, saved, want, want_saved))
    for key, hit, n in hit_own_bad[:5]:
        print(f"#   {key}: hitcount {hit}, {n} {synth} records")
    good &= tap(not hit_own_bad, f"{sel}: each entry's hitcount is the number of its key's pairs "
                f"tracerd fired {synth} for ({len(hit_own_bad)} of {len(keys)} keys differ)")
    for key, val, saved, want, want_saved in own_bad[:5]:
        print(f"#   {key}: dump {word} {val} {saved}; the rule over tracerd's pairs: {want} {want_saved}")
    good &= tap(not own_bad, f"{sel}: each key's '{word}:' and saved fields are what on{handler}'s rule "
                f"gives over tracerd's own pairs, exactly ({len(own_bad)} of {len(keys)} keys differ)")

    # With the kernel's pairs.
    hit_bad, val_bad, near_bad, same_bad, tells = 0, [], [], [], 0
    for key in keys:
        hit, val, saved = dump.get(key, (0, None, {}))
        ks, evs = kern.get(key, []), ours.get(key, [])
        hit_bad += abs(hit - len(ks))
        if not ks or val is None or isinstance(val, str):
            if ks or val is not None:
                val_bad.append((key, val, None, "no pairs" if not ks else "no tracked line"))
            continue
        fields = [{n: norm(switch_fields(k[7])[n]) for n in names} for k in ks]
        if len({tuple(sorted(f.items())) for f in fields}) > 1:
            tells += 1
        kval, kat = track([k[3] for k in ks], handler)
        matched, _ = align(ks, evs)
        partner = {id(t): k for k, t in matched}
        _, at = track([e[3] for e in evs], handler)
        # The oracle pair of tracerd's pair that set the value, and whether
        # the clocks read it beyond the tolerance; the same of the oracle's.
        mine = partner.get(id(evs[at])) if at is not None else None
        clock = (mine is not None and abs(mine[3] - evs[at][3]) > tol)
        theirs = next((t for k, t in matched if k is ks[kat]), None) if kat is not None else None
        clock |= theirs is not None and abs(theirs[3] - ks[kat][3]) > tol
        print(f"#   {key}: {word} {val} (the kernel's record of that pair: "
              f"{mine[3] if mine else 'none'}), the kernel's pairs give {kval}; {len(ks)} pairs")
        if abs(val - kval) > tol:
            val_bad.append((key, val, kval, "a clock outlier" if clock else ""))
        # Within the tolerance of tracerd's value: the pairs whose fields may
        # be saved. onchange: only the last pairs, those after the last one
        # beyond it (each of them set the tracked value, or kept it).
        if handler == "max":
            cands = [f for k, f in zip(ks, fields) if abs(k[3] - val) <= tol]
        else:
            i = len(ks)
            while i > 0 and abs(ks[i - 1][3] - val) <= tol:
                i -= 1
            cands = fields[i:]
        if saved not in cands:
            near_bad.append((key, val, saved, len(cands), clock))
        if mine is None or {n: norm(switch_fields(mine[7])[n]) for n in names} != saved:
            same_bad.append((key, saved, switch_fields(mine[7]) if mine else None))
    nk = sum(map(len, kern.values()))
    good &= tap(hit_bad <= allowed, f"{sel}: each entry's hitcount is the number of the kernel's pairs of "
                f"its key ({nk} pairs over {len(kern)} keys; {hit_bad} differ, allowed {allowed})")
    for key, val, kval, why in val_bad[:5]:
        print(f"#   {key}: tracerd {word} {val}, the kernel's pairs give {kval} {why}")
    n_clock = sum(1 for v in val_bad if v[3] == "a clock outlier")
    good &= tap(len(val_bad) - n_clock <= allowed,
                f"{sel}: each key's '{word}:' is the kernel's pairs' {'max' if handler == 'max' else 'last'} "
                f"latency within {tol} us ({len(val_bad)} of {len(keys)} keys beyond, {n_clock} of them where "
                f"the pair in question is a clock outlier; allowed {allowed} more)")
    for key, val, saved, n, clock in near_bad[:5]:
        print(f"#   {key}: saved {saved} at {val}: no oracle pair within {tol} us has them ({n} pairs do)"
              + (" (a clock outlier)" if clock else ""))
    good &= tap(len([b for b in near_bad if not b[4]]) <= allowed,
                f"{sel}: each key's saved fields are those of an oracle pair whose latency lies within "
                f"{tol} us of tracerd's {word} value ({len(near_bad)} of {len(keys)} keys not, "
                f"{sum(b[4] for b in near_bad)} of them a clock outlier)")
    for key, saved, fields in same_bad[:5]:
        print(f"#   {key}: saved {saved}; the oracle's partner of the pair that set it: {fields}")
    good &= tap(len(same_bad) <= allowed,
                f"{sel}: each key's saved fields are those of the kernel's record of the switch that set "
                f"the value ({len(same_bad)} of {len(keys)} keys differ; allowed {allowed})")
    # The comparison means something only where a key's pairs differ in
    # what they would save.
    good &= tap(tells == len(kern) and tells > 0,
                f"{sel}: every key's pairs differ in the saved fields ({tells} of {len(kern)} keys)")
    return good


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("trace")
    ap.add_argument("--misses", type=int, required=True)
    ap.add_argument("--exclude", default="")
    ap.add_argument("--tol", type=int)
    ap.add_argument("--onmax", action="append", default=[])
    ap.add_argument("--onchange", action="append", default=[])
    a = ap.parse_args()
    tol = a.tol or TOL["wakeup"]
    exclude = frozenset(int(t) for t in a.exclude.replace(",", " ").split())
    trecs = records(a.out)
    krecs, unseen, extra = as_bpf_saw(records(a.trace, exclude), trecs, "wakeup", 0)
    kern = kernel_pairs(krecs, "wakeup", 0, 1)
    nk = sum(map(len, kern.values()))
    print(f"# {nk} kernel pairs over {len(kern)} keys; {unseen} instance start/end records BPF did not "
          f"see, {extra} the instance lacks; {a.misses} skipped by the kernel (recursion_misses)")
    # Each skip of the kernel's may cost two pairs (latency_pair.py).
    allowed = 2 * a.misses
    good = tap(nk >= 200, f"at least 200 pairs ({nk})")
    # As latency_pair.py allows: a few, and those the kernel skipped.
    few = max(20, len(trecs) // 1000)
    good &= tap(unseen + extra <= few + a.misses,
                f"BPF saw the instance's start and end records, but for a few ({unseen} unseen, "
                f"{extra} the instance lacks; allowed {few} and the {a.misses} the kernel skipped)")
    for spec in a.onmax:
        good &= check_trigger("max", *spec.split("="), a.out, trecs, kern, tol, allowed)
    for spec in a.onchange:
        good &= check_trigger("change", *spec.split("="), a.out, trecs, kern, tol, allowed)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
