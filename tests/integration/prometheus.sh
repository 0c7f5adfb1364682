#!/usr/bin/env bash
# A real Prometheus server scrapes tracerd (issue 32): Debian's prometheus,
# started here on a free loopback port with a config and storage of its own
# (scrape interval 1 s), and read through its own query API
# (/api/v1/query), as a dashboard would read it. Each workload fires
# syscalls:sys_enter_sysfs under a comm of this run's own, and each check
# waits for a scrape that started after its workload had ended and tracerd
# had drained it (the `up` series' sample time, which one scrape's samples
# share):
#   a) fire_syscall, N calls: the selection's delivered + lost = N
#      (sum(tracerd_events_total{outcome=~"delivered|lost"})), and the
#      records printed = delivered;
#   b) fire_syscall, M calls, arg1 = 0..M-1, into Aggregate=hist:keys=arg1:
#      sum(tracerd_hist_hits_total) = M, in M series, and its outcome
#      aggregated = M;
#   c) a Python workload, arg1 set to 2001 values spread over 18 powers of
#      two, into hist:keys=arg1.log2:vals=arg1 (the Prometheus histogram
#      tracerd_hist_bucket/_count/_sum) and printed by another selection:
#      histogram_quantile(0.5, ...) lies inside the log2 bucket of the median
#      of the printed records' arg1 (Prometheus interpolates inside a
#      bucket), _count and _sum are the calls and their exact sum, each
#      bucket's count the records up to its le; the same for a .buckets=100
#      histogram of the same calls;
#   d) promtool check metrics on a scrape prints nothing and exits 0, and
#      Prometheus's target has no scrape error.
# Prometheus and tracerd are stopped, their files removed, also on failure.
. "$(dirname "$0")/../lib.sh"
need_root prometheus
need_tools prometheus prometheus promtool	# Debian's prometheus
[ "$(uname -m)" = x86_64 ] || { not_ok "prometheus: the Python workload calls sysfs(2) as x86_64 numbers it"; exit 0; }

PORT=$(free_port)
PPORT=$(free_port)
PROM=http://127.0.0.1:$PPORT
# Three comms of this run's own: the counted workload, the aggregated one, the log2 one.
CC=prc$$ CA=pra$$ CL=prl$$
cp "$FIRE" "$TMP/$CC"
cp "$FIRE" "$TMP/$CA"
cp "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$TMP/$CL"

# Prometheus first: its first scrape comes about 5 s after it is ready (its
# discovery's first update), meanwhile tracerd attaches.
mkdir "$TMP/prom"
cat >"$TMP/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: tracerd
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom/log" 2>&1 &
PROM_PID=$!
# Stopped before $TMP goes, SIGKILL if it has not gone in 10 s.
# (A function: a loop variable in the text would be cleanup()'s own i.)
stop_prometheus() {
	local t
	kill "$PROM_PID" 2>/dev/null
	for ((t = 0; t < 100; t++)); do kill -0 "$PROM_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$PROM_PID" 2>/dev/null
	wait "$PROM_PID" 2>/dev/null
}
on_exit stop_prometheus
ready=no
for ((i = 0; i < 300; i++)); do
	curl -sf --max-time 1 "$PROM/-/ready" >/dev/null && ready=yes && break
	kill -0 $PROM_PID 2>/dev/null || break
	sleep 0.1
done
check "prometheus: the server is ready on 127.0.0.1:$PPORT" [ $ready = yes ]
[ $ready = yes ] || { tail -5 "$TMP/prom/log" | sed 's/^/# /'; exit 0; }

cat >"$TMP/t.conf" <<EOF
[Daemon]
Output=stdout
StatsIntervalSec=0
[Metrics]
Listen=127.0.0.1:$PORT
[Selection]
Name=count
Events=syscalls:sys_enter_sysfs
Filter=comm == "$CC"
[Selection]
Name=agg
Events=syscalls:sys_enter_sysfs
Filter=comm == "$CA"
Aggregate=hist:keys=arg1
[Selection]
Name=lat
Events=syscalls:sys_enter_sysfs
Filter=comm == "$CL"
Aggregate=hist:keys=arg1.log2:vals=arg1
[Selection]
Name=lin
Events=syscalls:sys_enter_sysfs
Filter=comm == "$CL"
Aggregate=hist:keys=arg1.buckets=100:vals=arg1
[Selection]
Name=latrec
Events=syscalls:sys_enter_sysfs
Filter=comm == "$CL"
EOF
start_tracerd "$TMP/t.conf" "$TMP/out" || { not_ok "prometheus: tracerd starts"; exit 0; }
ok "prometheus: tracerd starts with [Metrics] Listen=127.0.0.1:$PORT"

# query EXPR: the value of the first sample of an instant query, empty if none.
query() {
	curl -sf --max-time 5 --data-urlencode "query=$1" "$PROM/api/v1/query" |
		jq -r '.data.result[0].value[1] // empty'
}
# scraped_after T: waits (up to 30 s) until Prometheus holds a scrape of
# tracerd that started after T (seconds since the epoch) and succeeded.
scraped_after() {
	local i ts
	for ((i = 0; i < 300; i++)); do
		# the sample's own time: timestamp() of a bare selector (of an
		# expression, such as up == 1, it is the query's time)
		ts=$(query 'timestamp(up{job="tracerd"})')
		[ -n "$ts" ] && [ "$(query 'up{job="tracerd"}')" = 1 ] &&
			python3 -c "import sys; sys.exit(not $ts > $1)" && return 0
		sleep 0.1
	done
	return 1
}
now() { date +%s.%N; }
# direct NAME LABELS: one series' value in a scrape of tracerd's own.
direct() {
	curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" | awk -v k="$1${2:+{$2\}}" '$1 == k {print $2}'
}
# drained SELECTION: waits (up to 10 s) until its delivered + lost stays the
# same for 0.5 s in tracerd's own scrapes: the ring drained.
drained() {
	local i last=x v L="selection=\"$1\",event=\"syscalls:sys_enter_sysfs\"" same=0
	for ((i = 0; i < 100; i++)); do
		v=$(($(direct tracerd_events_total "$L,outcome=\"delivered\"") + $(direct tracerd_events_total "$L,outcome=\"lost\"")))
		if [ "$v" = "$last" ]; then ((++same >= 5)) && return 0; else same=0; fi
		last=$v
		sleep 0.1
	done
	return 1
}
# When a count is off: did the kernel skip events (another BPF program on the CPU)?
skipped() { note "tracerd_kernel_skipped_total $(direct tracerd_kernel_skipped_total)"; }

# Each workload waits for tracerd to be up in Prometheus, so that the counts
# start from 0 in a series Prometheus already has.
check "prometheus: tracerd's target is up" scraped_after 0

# a) N calls from one process.
N=2500
read -r pid n secs < <("$TMP/$CC" $N)
note "fired $n sysfs(2) calls from pid $pid ($CC) in ${secs}s"
drained count
scraped_after "$(now)" || not_ok "prometheus: a scrape after the workload"
S='selection="count",event="syscalls:sys_enter_sysfs"'
got=$(query "sum(tracerd_events_total{$S,outcome=~\"delivered|lost\"})")
lost=$(query "tracerd_events_total{$S,outcome=\"lost\"}")
delivered=$(query "tracerd_events_total{$S,outcome=\"delivered\"}")
records=$(grep -c "^ *$CC-$pid .* sys_sysfs(" "$TMP/out")
note "in Prometheus: delivered $delivered + lost $lost = $got; records printed: $records"
check "prometheus: (a) delivered + lost = the $N calls fired ($got)" [ "$got" = $N ]
check "prometheus: (a) delivered = the records printed ($records)" [ "$delivered" = "$records" ]
[ "$got" = $N ] || skipped

# b) M calls, each with its own arg1, into hist:keys=arg1.
M=700
read -r pid n secs < <("$TMP/$CA" $M)
note "fired $n sysfs(2) calls from pid $pid ($CA), arg1 = 0..$((M - 1))"
scraped_after "$(now)" || not_ok "prometheus: a scrape after the aggregated workload"
S='selection="agg",event="syscalls:sys_enter_sysfs"'
hits=$(query "sum(tracerd_hist_hits_total{$S})")
series=$(query "count(tracerd_hist_hits_total{$S})")
aggregated=$(query "tracerd_events_total{$S,outcome=\"aggregated\"}")
note "in Prometheus: hits $hits in $series series; aggregated $aggregated (tracerd: $(direct tracerd_events_total "$S,outcome=\"aggregated\""))"
check "prometheus: (b) sum(tracerd_hist_hits_total) = the $M calls fired ($hits)" [ "$hits" = $M ]
check "prometheus: (b) one series per arg1 ($series of $M)" [ "$series" = $M ]
check "prometheus: (b) the selection's outcome aggregated = the $M calls ($aggregated)" [ "$aggregated" = $M ]
check "prometheus: (b) a key's label is its field: arg1=\"$((M - 1))\" has 1 hit" \
	[ "$(query "tracerd_hist_hits_total{$S,arg1=\"$((M - 1))\"}")" = 1 ]
[ "$hits" = $M ] || skipped

# c) 2001 values, log-uniform over [1, 100000] (a seed of this run's), as arg1.
python3 - $$ >"$TMP/values" <<'EOF'
import random, sys
r = random.Random(int(sys.argv[1]))
for _ in range(2001):
    print(max(1, round(10 ** r.uniform(0, 5))))
EOF
"$TMP/$CL" - "$TMP/values" <<'EOF'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
for line in open(sys.argv[1]):
    # sysfs(2) option 3, the number of filesystem types: arg1 ignored
    libc.syscall(ctypes.c_long(139), ctypes.c_long(3), ctypes.c_ulong(int(line)), ctypes.c_long(0))
EOF
drained latrec
scraped_after "$(now)" || not_ok "prometheus: a scrape after the log2 workload"
# The printed records' arg1 (the syscall's line prints it in hex).
grep -oP "^ *$CL-\d+ .* sys_sysfs\(option: [^,]*, arg1: \K[0-9a-fx]+" "$TMP/out" >"$TMP/rec_arg1"
# buckets SELECTION: "le count" per bucket of its histogram, as Prometheus has them.
buckets() {
	curl -sf --max-time 5 --data-urlencode \
		"query=tracerd_hist_bucket{selection=\"$1\",event=\"syscalls:sys_enter_sysfs\",field=\"arg1\"}" \
		"$PROM/api/v1/query" | jq -r '.data.result[] | "\(.metric.le) \(.value[1])"'
}
buckets lat >"$TMP/lat.buckets"
buckets lin >"$TMP/lin.buckets"
S='selection="lat",event="syscalls:sys_enter_sysfs"'
q=$(query "histogram_quantile(0.5, sum by (le) (tracerd_hist_bucket{$S,field=\"arg1\"}))")
count=$(query "tracerd_hist_count{$S,field=\"arg1\"}")
sum=$(query "tracerd_hist_sum{$S,field=\"arg1\"}")
S='selection="lin",event="syscalls:sys_enter_sysfs"'
qlin=$(query "histogram_quantile(0.5, sum by (le) (tracerd_hist_bucket{$S,field=\"arg1\"}))")
python3 - "$TMP/values" "$TMP/rec_arg1" "$q" "$count" "$sum" "$qlin" "$TMP" >"$TMP/lat.txt" <<'EOF'
import sys
fired = [int(l) for l in open(sys.argv[1])]
recs = sorted(int(l, 0) for l in open(sys.argv[2]))
q, count, total, qlin, tmp = sys.argv[3:8]
# Every bucket Prometheus has: its cumulative count = the records <= le.
for name in ("lat", "lin"):
    b = [l.split() for l in open(f"{tmp}/{name}.buckets")]
    bad = [(le, n) for le, n in b if float(n) != sum(1 for v in recs if v <= float(le))]
    print(f"# {name}: {len(b)} buckets in Prometheus, {len(bad)} not the records' count {bad[:3]}")
    print(name + "_buckets", int(len(b) > 1 and not bad and ["+Inf", str(len(recs))] in b))
median = recs[len(recs) // 2] if recs else 0
# The kernel's .log2 key: ilog2(roundup_pow_of_two(v)); its bucket holds
# (2^(k-1), 2^k], which Prometheus reads as le="2^k".
hi = 1 << (median - 1).bit_length() if median else 0
# .buckets=100: bucket b*100 holds b*100..b*100+99, le="b*100+99"; the one
# below ends at b*100-1, where Prometheus starts interpolating.
lo_lin, hi_lin = median // 100 * 100 - 1, median // 100 * 100 + 99
print(f"# {len(recs)} records of {len(fired)} fired; median arg1 {median}, "
      f"its log2 bucket ({hi // 2}, {hi}]; histogram_quantile(0.5) {q}; _count {count}; "
      f"_sum {total} (fired {sum(fired)}); .buckets=100: ({lo_lin}, {hi_lin}], {qlin}")
print("records", int(sorted(fired) == recs))
print("inside", int(bool(q) and hi // 2 <= float(q) <= hi))
print("linear", int(bool(qlin) and lo_lin <= float(qlin) <= hi_lin))
print("count", int(bool(count) and float(count) == len(fired)))
print("sum", int(bool(total) and float(total) == sum(fired)))
EOF
grep '^#' "$TMP/lat.txt"
res() { grep -q "^$1 1$" "$TMP/lat.txt"; }
check "prometheus: (c) the records printed are the 2001 values fired" res records
check "prometheus: (c) histogram_quantile(0.5) lies in the log2 bucket of the records' median" res inside
check "prometheus: (c) and in its .buckets=100 bucket, of a histogram of the same calls" res linear
check "prometheus: (c) every log2 bucket's count in Prometheus = the records up to its le" res lat_buckets
check "prometheus: (c) every .buckets=100 bucket's count in Prometheus = the records up to its le" res lin_buckets
check "prometheus: (c) tracerd_hist_count = the 2001 calls" res count
check "prometheus: (c) tracerd_hist_sum = the values' exact sum" res sum

# d) promtool on what tracerd serves (every kind of series there now), and
# Prometheus's own word on its scrapes.
curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/m.txt"
promtool check metrics <"$TMP/m.txt" >"$TMP/promtool.out" 2>&1
rc=$?
sed 's/^/# promtool: /' "$TMP/promtool.out" | head -20
check "prometheus: (d) promtool check metrics finds nothing ($(grep -vc '^#' "$TMP/m.txt") series, rc $rc)" \
	[ $rc = 0 -a ! -s "$TMP/promtool.out" ]
errs=$(curl -sf --max-time 5 "$PROM/api/v1/targets" | jq -r '.data.activeTargets[] | select(.labels.job == "tracerd") | .lastError')
check "prometheus: (d) its last scrape of tracerd has no error${errs:+ ($errs)}" [ -z "$errs" ]

stop_tracerd
check "prometheus: tracerd exits 0 at stop" [ $? = 0 ]
