#!/usr/bin/env bash
# GET /metrics of Aggregate= histograms (issue 32), checked against a
# workload whose every value is known: sysfs(2) fired N times with arg1 =
# 0..N-1 (tests/tools/fire_syscall.c), twice, under a comm of this run's own,
# with an interval dump (AggregateIntervalSec=1, which clears the maps)
# between and after. From the scrapes:
#   - a .log2 key and a .buckets=100 key: every tracerd_hist_hits_total,
#     every cumulative tracerd_hist_bucket, _count and _sum (vals= of the
#     key's field) equal what the values give, after the dumps as before:
#     the dumps reset nothing, and no counter of any scrape goes down;
#   - keys=common_pid,comm: a series per run of the workload, labelled by
#     its pid and comm, its hits and its vals= sums exact;
#   - keys=arg1 (N keys) under MaxSeries=100: 100 series, the same in every
#     scrape, each key's count exact, the rest in one "other" series, all
#     adding up to the events;
#   - a common_stacktrace key: one series without a key label, the total;
#   - OpenMetrics when asked by Accept: counters' families without
#     "_total", every sample under its own family, "# EOF" last; the text
#     format well formed, and promtool (deps.sh installs it) finds nothing;
#   - a reload that changes a histogram starts its series anew, one that
#     keeps it keeps its counts;
#   - every metric conf/grafana-dashboard.json queries is served.
. "$(dirname "$0")/../lib.sh"
need_root metrics_hist
COMM=mth$$
fire_as "$COMM"
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
N=1000

sel() { # sel NAME AGGREGATE: a selection of the workload's sysfs(2) calls
	printf '[Selection]\nName=%s\nEvents=syscalls:sys_enter_sysfs\nFilter=comm == "%s"\n' "$1" "$COMM"
	printf 'Aggregate=%s\nAggregateIntervalSec=1\n' "$2"
}
{
	printf '[Daemon]\nOutput=stdout\nStatsIntervalSec=0\n'
	printf '[Metrics]\nListen=127.0.0.1:%s\nMaxSeries=100\n' "$PORT"
	sel log2 'hist:keys=arg1.log2:vals=arg1'
	sel buckets 'hist:keys=arg1.buckets=100'
	sel bypid 'hist:keys=common_pid,comm:vals=arg1,option'
	sel many 'hist:keys=arg1'
	sel stack 'hist:keys=common_stacktrace'
} >"$TMP/m.conf"
start_tracerd "$TMP/m.conf" "$TMP/out" || { not_ok "metrics_hist: tracerd starts"; exit 0; }
ok "metrics_hist: tracerd starts"

scrape() { curl -sf --max-time 5 "$URL" >"$TMP/$1"; }
pids=$("$FIRE" $N | cut -d' ' -f1)
sleep 0.3
scrape s1
sleep 2.5	# interval dumps cleared the maps
pids="$pids $("$FIRE" $N | cut -d' ' -f1)"
sleep 0.3
scrape s2
sleep 2.5
scrape s3
curl -sf --max-time 5 -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
	-D "$TMP/om.h" "$URL" >"$TMP/om"

python3 - "$TMP" "$N" "$COMM" $pids <<'EOF'
import collections, re, sys
tmp, n, comm, pids = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')

def parse(name):
    out = {}
    for line in open(f"{tmp}/{name}"):
        m = SAMPLE.match(line.rstrip("\n"))
        if m and not line.startswith("#"):
            out[(m[1], tuple(sorted(LABEL.findall(m[2] or ""))))] = float(m[3])
    return out

def ok(name, cond, detail=""):
    print(("ok - " if cond else "not ok - ") + "metrics_hist: " + name)
    if not cond and detail:
        print("# " + str(detail)[:600])

s1, s2, s3 = parse("s1"), parse("s2"), parse("s3")
values = list(range(n)) * 2          # both runs of the workload
def of(s, metric, sel, **labels):
    return {dict(k[1]).get(next(iter(labels), ""), "") if labels else k[1]: v
            for k, v in s.items() if k[0] == metric and dict(k[1]).get("selection") == sel}

# .log2: bucket k holds v with roundup_pow_of_two(v) = 2^k (0 and 1 in 2^0)
def log2(v):
    return 0 if v <= 1 else (v - 1).bit_length()
for s, name in ((s2, "s2"), (s3, "s3")):
    hits = {dict(k[1])["arg1"]: v for k, v in s.items()
            if k[0] == "tracerd_hist_hits_total" and ("selection", "log2") in k[1]}
    want = collections.Counter(f"~ 2^{log2(v)}" for v in values)
    ok(f"log2: hits per key exact ({name})", hits == want, (hits, want))
    buckets = {dict(k[1])["le"]: v for k, v in s.items()
               if k[0] == "tracerd_hist_bucket" and ("selection", "log2") in k[1]}
    wantb = {str(1 << k): sum(1 for v in values if log2(v) <= k)
             for k in sorted({log2(v) for v in values})}
    wantb["+Inf"] = len(values)
    ok(f"log2: cumulative buckets exact ({name})", buckets == wantb, (buckets, wantb))
    cnt = [v for k, v in s.items() if k[0] == "tracerd_hist_count" and ("selection", "log2") in k[1]]
    sm = [v for k, v in s.items() if k[0] == "tracerd_hist_sum" and ("selection", "log2") in k[1]]
    ok(f"log2: _count and _sum exact ({name})", cnt == [len(values)] and sm == [sum(values)], (cnt, sm))
    bb = {dict(k[1])["le"]: v for k, v in s.items()
          if k[0] == "tracerd_hist_bucket" and ("selection", "buckets") in k[1]}
    wantbb = {str(b + 99): sum(1 for v in values if v <= b + 99) for b in range(0, n, 100)}
    wantbb["+Inf"] = len(values)
    ok(f"buckets=100: cumulative buckets exact, no _sum without vals= ({name})",
       bb == wantbb and not any(k[0] == "tracerd_hist_sum" and ("selection", "buckets") in k[1]
                                for k in s), (bb, wantbb))

bypid = {(dict(k[1])["common_pid"], dict(k[1])["comm"]): v for k, v in s2.items()
         if k[0] == "tracerd_hist_hits_total" and ("selection", "bypid") in k[1]}
sums = {(dict(k[1])["common_pid"], dict(k[1])["field"]): v for k, v in s2.items()
        if k[0] == "tracerd_hist_sum_total" and ("selection", "bypid") in k[1]}
ok("keys=common_pid,comm: a series per run, labelled by pid and comm",
   bypid == {(p, comm): n for p in pids}, bypid)
ok("keys=common_pid,comm: vals= sums exact",
   sums == {**{(p, "arg1"): sum(range(n)) for p in pids}, **{(p, "option"): 3 * n for p in pids}}, sums)

for s, name in ((s1, "s1"), (s2, "s2"), (s3, "s3")):
    many = {dict(k[1])["arg1"]: v for k, v in s.items()
            if k[0] == "tracerd_hist_hits_total" and ("selection", "many") in k[1]}
    other = many.pop("other", None)
    runs = 1 if name == "s1" else 2
    ok(f"MaxSeries=100: 100 series and other, all adding up ({name})",
       len(many) == 100 and other is not None and sum(many.values()) + other == runs * n and
       all(v == runs for v in many.values()), (len(many), other, sum(many.values())))
    if name == "s1":
        first = set(many)
    else:
        ok(f"MaxSeries=100: the same 100 keys in every scrape ({name})", set(many) == first)
    stack = [(k[1], v) for k, v in s.items()
             if k[0] == "tracerd_hist_hits_total" and ("selection", "stack") in k[1]]
    ok(f"a stack key: one series, no key label, the total ({name})",
       len(stack) == 1 and {l for l, _ in stack[0][0]} == {"selection", "event"} and
       stack[0][1] == runs * n, stack)

down = [(k, a[k], b.get(k)) for a, b in ((s1, s2), (s2, s3)) for k in a
        if (k[0].endswith("_total") or k[0].startswith("tracerd_hist_")) and b.get(k, -1) < a[k]]
ok("no counter of a histogram goes down, nor disappears, from scrape to scrape", not down, down[:3])

# OpenMetrics: a sample's family is the TYPE line above it.
om = open(f"{tmp}/om").read().splitlines()
hdr = open(f"{tmp}/om.h").read().lower()
fam, typ, bad, seen = None, None, [], set()
SUFFIX = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_count", "_sum")}
for line in om[:-1]:
    if line.startswith("# TYPE "):
        _, _, fam, typ = line.split(" ")
        bad += [line] if fam in seen or (typ == "counter" and fam.endswith("_total")) else []
        seen.add(fam)
    elif not line.startswith("#"):
        m = SAMPLE.match(line)
        if not m or not fam or m[1] not in (fam + s for s in SUFFIX[typ]):
            bad.append(line)
ok("OpenMetrics when asked: its content type, families and \"# EOF\" last",
   "content-type: application/openmetrics-text; version=1.0.0" in hdr and om and
   om[-1] == "# EOF" and not bad and "tracerd_hist" in seen, bad[:5] or hdr)
EOF
# A reload that changes a histogram (size=) starts its series anew; one that
# keeps a histogram keeps its counts.
sed -i 's/^Aggregate=hist:keys=arg1.log2:vals=arg1$/&:size=4096/' "$TMP/m.conf"
kill -HUP "$TRACERD_PID"
for ((i = 0; i < 600; i++)); do grep -q "reloaded" "$TMP/out.err" && break; sleep 0.05; done
"$FIRE" $N >/dev/null
sleep 0.3
scrape s4
python3 - "$TMP/s4" "$N" <<'EOF2'
import re, sys
text, n = open(sys.argv[1]).read(), int(sys.argv[2])
def total(sel):
    return sum(float(v) for v in re.findall(
        r'^tracerd_hist_hits_total\{selection="%s",[^}]*\} (\S+)$' % sel, text, re.M))
log2, many = total("log2"), total("many")
ok = log2 == n and many == 3 * n
print(("ok - " if ok else "not ok - ") + "metrics_hist: a reload that changes a histogram starts "
      "its series anew, one that keeps it keeps its counts (log2 %d of %d, many %d of %d)"
      % (log2, n, many, 3 * n))
EOF2

# conf/grafana-dashboard.json asks for metrics that a scrape has.
missing=$(grep -oE 'tracerd_[a-z_]+' conf/grafana-dashboard.json | sort -u | while read -r m; do
	grep -qE "^$m[{ ]" "$TMP/s3" || echo "$m"; done)
check "metrics_hist: the Grafana dashboard's metrics are all served${missing:+ (not: $missing)}" [ -z "$missing" ]
if command -v promtool >/dev/null; then
	check "metrics_hist: promtool check metrics finds nothing" \
		sh -c "promtool check metrics <'$TMP/s3' >'$TMP/lint' 2>&1 && ! [ -s '$TMP/lint' ]"
	sed 's/^/# /' "$TMP/lint" | head -5
else
	not_ok "metrics_hist: promtool check metrics: not installed (make deps)"
fi
stop_tracerd
check "metrics_hist: tracerd exits 0 at stop" [ $? = 0 ]
