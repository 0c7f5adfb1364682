#!/usr/bin/env bash
# Aggregate=: tracerd's histograms against the kernel's own records. A
# tracefs instance records the same events with the same filters; a
# workload whose processes alone pass the filters (their names start with
# "aggw") runs while both are on, so both see the same window; the
# instance's records grouped by the key must give tracerd's counts and sums,
# key by key: a string and a symbolic key (sched_switch next_comm,
# prev_state), a numeric key with .syscall (raw_syscalls:sys_enter id), a
# log2 and a buckets key with a sum (kmem:kmalloc bytes_req.log2 and
# .buckets=64, bytes_alloc), a
# __data_loc string key (sched_process_exec filename, short and long: the
# small map and the large for one histogram), a __data_loc string and a
# number (sched_process_wait comm,pid: the small map). Then a
# size= overflow with its exact Dropped, a reload that keeps or restarts
# the counts, and bad input with file:line:column.
. "$(dirname "$0")/../lib.sh"
need_root aggregate
CMP=$(dirname "$0")/agg_compare.py

for b in true cat sleep bash; do cp "/bin/$b" "$TMP/aggw$b"; done
cp /bin/true "$TMP/aggwt"
cp /usr/bin/perl "$TMP/aggwperl"	# perl-base: waitpid() of a given pid

# The same filters in the instance and in tracerd.
F_SW='prev_comm ~ "aggw*"'
F_SYS='comm ~ "aggw*"'
F_KM='comm ~ "aggw*"'
F_FN='filename ~ "*aggw*"'
F_WT='comm ~ "aggw*"'
make_instance "tracerd-agg-$$" || { not_ok "aggregate: instance"; exit 0; }
instance_event() { echo "$2" >"$INSTANCE/events/$1/filter" && echo 1 >"$INSTANCE/events/$1/enable"; }
instance_event sched/sched_switch "$F_SW"
instance_event raw_syscalls/sys_enter "$F_SYS"
instance_event kmem/kmalloc "$F_KM"
instance_event sched/sched_process_exec "$F_FN"
instance_event sched/sched_process_wait "$F_WT"
AGG_INSTANCE=$INSTANCE
# sched_process_exec again, filtered by the comm after the exec (fn by a
# middle glob on the filename): both filters emitted, each with the
# filename key counted in the emitted program, short names in the small
# map and long ones in the large.
F_FE='comm ~ "aggw*"'
make_instance "tracerd-aggexe-$$" || { not_ok "aggregate: instance"; exit 0; }
EXE_INSTANCE=$INSTANCE
instance_event sched/sched_process_exec "$F_FE"
INSTANCE=$AGG_INSTANCE

cat >"$TMP/agg.conf" <<EOF
[Daemon]
Output=stdout
[Selection]
Name=sw
Events=sched:sched_switch
Filter=$F_SW
Aggregate=hist:keys=next_comm,prev_state:sort=hitcount.descending
AggregateIntervalSec=0
[Selection]
Name=sys
Events=raw_syscalls:sys_enter
Filter=$F_SYS
Aggregate=hist:keys=id.syscall:vals=hitcount:sort=id
AggregateIntervalSec=0
[Selection]
Name=km
Events=kmem:kmalloc
Filter=$F_KM
Aggregate=hist:keys=bytes_req.log2:vals=bytes_alloc:sort=bytes_req
AggregateIntervalSec=0
[Selection]
Name=kb
Events=kmem:kmalloc
Filter=$F_KM
Aggregate=hist:keys=bytes_req.buckets=64:vals=bytes_alloc:sort=bytes_req
AggregateIntervalSec=0
[Selection]
Name=fn
Events=sched:sched_process_exec
Filter=$F_FN
Aggregate=hist:keys=filename:size=1024
AggregateIntervalSec=0
[Selection]
Name=wt
Events=sched:sched_process_wait
Filter=$F_WT
Aggregate=hist:keys=comm,pid:size=128
AggregateIntervalSec=0
[Selection]
Name=fe
Events=sched:sched_process_exec
Filter=$F_FE
Aggregate=hist:keys=filename:size=512
AggregateIntervalSec=0
[Selection]
Name=execs
Events=sched:sched_process_exec
Filter=filename ~ "*aggwtrue"
Aggregate=hist:keys=common_pid:size=100
AggregateIntervalSec=0
EOF

echo 1 >"$INSTANCE/tracing_on"
echo 1 >"$EXE_INSTANCE/tracing_on"
start_tracerd "$TMP/agg.conf" "$TMP/out" || {
	not_ok "aggregate: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }
# 200 execs of distinct pids (size=100 is 128 entries: 72 Dropped), file
# reads and sleeps: switches, syscalls and kmallocs of "aggw*" tasks.
for ((i = 0; i < 200; i++)); do "$TMP/aggwtrue"; done
for ((i = 0; i < 20; i++)); do "$TMP/aggwcat" /etc/passwd /proc/self/status >/dev/null; "$TMP/aggwsleep" 0.01; done
# Execs by a short path ("./aggwt", 8 bytes: the small map) beside the
# long ones above (the large map), and waits by "aggwbash" (any child: pid
# 0) and "aggwperl" (a given pid).
(cd "$TMP" && for ((i = 0; i < 30; i++)); do ./aggwt; done)
"$TMP/aggwbash" -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; /bin/sleep 0.01 & wait $!; wait'
"$TMP/aggwperl" -e 'for (1 .. 5) { my $p = fork() // die; exit 0 unless $p; waitpid($p, 0) for 1 .. 2 }'
sleep 0.2
stop_tracerd
check "tracerd exits 0 at stop" [ $? = 0 ]
echo 0 >"$INSTANCE/tracing_on"
echo 0 >"$EXE_INSTANCE/tracing_on"
cat "$INSTANCE/trace" >"$TMP/trace"
cat "$EXE_INSTANCE/trace" >"$TMP/exe.trace"
check "aggregated records never reach the ring buffer (no event lines)" \
	[ "$(grep -c -E '^ *\S+-[0-9]+ +\[[0-9]+\]' "$TMP/out")" = 0 ]

# A key of numbers is counted in the emitted program itself (the first event
# of a key in the accept program), also through .log2 and .buckets=N: the
# comparisons below check them against the kernel.
for s in sys km kb; do
	check "$s: filter and histogram emitted" grep -q "selection $s: Filter= and Aggregate= compiled to BPF" "$TMP/out.err"
done
# A __data_loc string key: a short string counted in the small map, a long
# one in the large, both in the emitted program after a key's first event;
# fn's filter is a middle glob, whose stack window the key's room shares.
for s in fe fn; do
	check "$s: filter and __data_loc string histogram emitted" grep -q "selection $s: Filter= and Aggregate= compiled to BPF" "$TMP/out.err"
done
check "wt: filter and comm,pid histogram emitted" grep -q "selection wt: Filter= and Aggregate= compiled to BPF" "$TMP/out.err"
for s in fn fe; do
	check "$s: short and long filenames in one histogram" \
		awk -v s="# selection: $s," -v t="$TMP" 'index($0, s) == 1 {on = 1; next} /^# selection: / {on = 0}
			on && index($0, "filename: ./aggwt ") {a = 1} on && index($0, "filename: " t "/aggwtrue ") {b = 1}
			END {exit !(a && b)}' "$TMP/out"
done
python3 "$CMP" "$TMP/out" "$TMP/trace" sw sched:sched_switch next_comm+prev_state
python3 "$CMP" "$TMP/out" "$TMP/trace" sys raw_syscalls:sys_enter syscall
python3 "$CMP" "$TMP/out" "$TMP/trace" km kmem:kmalloc log2:bytes_req:bytes_alloc
python3 "$CMP" "$TMP/out" "$TMP/trace" kb kmem:kmalloc buckets=64:bytes_req:bytes_alloc
python3 "$CMP" "$TMP/out" "$TMP/trace" fn sched:sched_process_exec filename
python3 "$CMP" "$TMP/out" "$TMP/trace" wt sched:sched_process_wait comm+pid
python3 "$CMP" "$TMP/out" "$TMP/exe.trace" fe sched:sched_process_exec filename

# The overflow: exactly the execs that found no entry are Dropped.
totals=$(awk '/^# selection: execs,/ {on = 1} on && /Hits:|Entries:|Dropped:/ {printf "%s%s ", $1, $2}' "$TMP/out")
check "size=100 (128 entries): 200 execs of distinct pids give Hits 200, Entries 128, Dropped 72 ($totals)" \
	[ "$totals" = "Hits:200 Entries:128 Dropped:72 " ]

# Reload: an unchanged aggregated selection keeps its counts; a changed
# one is dumped as it was and starts fresh.
cat >"$TMP/r.conf" <<EOF
[Daemon]
Output=stdout
[Selection]
Name=keep
Events=sched:sched_process_exec
Filter=filename ~ "*aggwtrue"
Aggregate=hist:keys=comm
AggregateIntervalSec=0
[Selection]
Name=change
Events=sched:sched_process_exec
Filter=filename ~ "*aggwtrue"
Aggregate=hist:keys=comm
AggregateIntervalSec=0
EOF
start_tracerd "$TMP/r.conf" "$TMP/r.out" || {
	not_ok "aggregate: reload start"; sed 's/^/# /' "$TMP/r.out.err"; exit 0; }
for ((i = 0; i < 5; i++)); do "$TMP/aggwtrue"; done
sed -i '$d' "$TMP/r.conf"
sed -i '$d' "$TMP/r.conf"
printf 'Aggregate=hist:keys=comm:size=256\nAggregateIntervalSec=0\n' >>"$TMP/r.conf"
kill -HUP "$TRACERD_PID"
for ((i = 0; i < 200; i++)); do grep -q reloaded "$TMP/r.out.err" && break; sleep 0.05; done
for ((i = 0; i < 3; i++)); do "$TMP/aggwtrue"; done
sleep 0.1
stop_tracerd
hits() { awk -v s="# selection: $1," -v d="$2" 'index($0, s) == 1 && index($0, d) {on = 1; next} /^# selection: / {on = 0} on && /Hits:/ {print $2}' "$TMP/r.out" | tr '\n' ' '; }
check "reload: the unchanged selection keeps its counts (8 at stop: $(hits keep final))" [ "$(hits keep final)" = "8 " ]
check "reload: the changed selection's old counts are dumped ($(hits change replaced))" [ "$(hits change replaced)" = "5 " ]
check "reload: the changed selection starts fresh (3 at stop: $(hits change final))" [ "$(hits change final)" = "3 " ]

# Interval flips under load: a dump every second while a task makes bursts
# of syscalls (a third of the time, so that the instance's buffer holds them
# all), so that events are counting at each flip. The
# interval dumps and the final one, summed per key, must equal the kernel's
# records: no count lost or counted twice across a flip.
cp /bin/dd "$TMP/aggwdd"
make_instance "tracerd-agghot-$$" || { not_ok "aggregate: second instance"; exit 0; }
HOT=$INSTANCE
echo 0 >"$HOT/tracing_on"
echo 65536 >"$HOT/buffer_size_kb"
echo 'comm == "aggwdd"' >"$HOT/events/raw_syscalls/sys_enter/filter"
echo 1 >"$HOT/events/raw_syscalls/sys_enter/enable"
cat >"$TMP/hot.conf" <<EOF
[Daemon]
Output=stdout
[Selection]
Name=hot
Events=raw_syscalls:sys_enter
Filter=comm == "aggwdd"
Aggregate=hist:keys=id.syscall
AggregateIntervalSec=1
EOF
echo 1 >"$HOT/tracing_on"
start_tracerd "$TMP/hot.conf" "$TMP/hot.out" || {
	not_ok "aggregate: tracerd starts (intervals)"; sed 's/^/# /' "$TMP/hot.out.err"; exit 0; }
end=$((SECONDS + 5))
while ((SECONDS < end)); do
	"$TMP/aggwdd" if=/dev/zero of=/dev/null bs=1 count=5000 2>/dev/null
	sleep 0.05
done
stop_tracerd
echo 0 >"$HOT/tracing_on"
cat "$HOT/trace" >"$TMP/hot.trace"
overrun=$(awk '/^overrun:/ {n += $2} END {print n + 0}' "$HOT"/per_cpu/cpu*/stats)
intervals=$(grep -c '^# selection: hot, .*dump: interval' "$TMP/hot.out")
check "intervals: the kernel's instance kept every record (overrun $overrun)" [ "$overrun" = 0 ]
check "intervals: 2 or more interval dumps during the load ($intervals)" [ "$intervals" -ge 2 ]
python3 "$CMP" "$TMP/hot.out" "$TMP/hot.trace" hot raw_syscalls:sys_enter syscall

# Bad input: file:line:column, as for filters.
bad() { bad_selection "$1" "Aggregate=$2" "$3"; }	# NAME AGGREGATE WANT-AFTER-PATH
bad "unknown field" "hist:keys=bytes_rq" ":4:21: unknown field 'bytes_rq' in kmem:kmalloc; its fields are: call_site, ptr, bytes_req, bytes_alloc, gfp_flags, node, common_pid, comm, cpu, common_stacktrace"
bad "unknown modifier" "hist:keys=bytes_req.lg2" ":4:31: unknown modifier '.lg2': expected .hex, .sym, .sym-offset, .execname, .syscall, .log2, .buckets=N or .usecs"
bad "a string with .log2" "hist:keys=comm.log2" ":4:26: comm is a string: .log2 applies to numbers"
bad "size=0" "hist:keys=node:size=0" ":4:31: size=0 is out of range: the kernel takes 65 to 131072 entries (rounded up to a power of two)"

# A key of a __data_loc string and a number may take the small map's
# entries as well as the large one's: size= counts in both. 2 x 32768 small
# keys fill the small map, so the string histogram no longer fits there.
cat >"$TMP/room.conf" <<EOF2
[Daemon]
Output=stdout
[Selection]
Name=small
Events=filelock:fcntl_setlk
Aggregate=hist:keys=type:size=32768
[Selection]
Name=str
Events=sched:sched_process_wait
Aggregate=hist:keys=comm:size=128
EOF2
timeout -s INT 20 $TRACERD --config "$TMP/room.conf" --foreground >/dev/null 2>"$TMP/room.err"
rc=$?
check "room: a string key's histogram counts in the small map too: refused (exit $rc)" \
	grep -q "room.conf:10:11: the histograms' size= .* exceed the 65536 entries of the map for keys of up to 24 bytes" "$TMP/room.err"

# AggregateIntervalSec=: a dump per interval, then cleared; in the journal an
# entry per key (TRACE_HIST=, keys and values as fields) and a totals entry.
# journald's socket is a stand-in in a mount namespace of this test's own.
cat >"$TMP/j.conf" <<EOF2
[Daemon]
Output=journal
[Selection]
Name=jexec
Events=sched:sched_process_exec
Filter=filename ~ "*aggwtrue"
Aggregate=hist:keys=comm,common_pid.execname
AggregateIntervalSec=1
EOF2
JOURNAL=$(dirname "$0")/agg_journal.py
unshare -m bash -c "
	mkdir -p /run/systemd && mount -t tmpfs none /run/systemd && mkdir /run/systemd/journal || exit 1
	python3 $JOURNAL /run/systemd/journal/socket $TMP/j.txt & J=\$!
	for ((i = 0; i < 50; i++)); do [ -S /run/systemd/journal/socket ] && break; sleep 0.02; done
	$TRACERD --config $TMP/j.conf >$TMP/j.err 2>&1 & P=\$!
	for ((i = 0; i < 600; i++)); do grep -q attached $TMP/j.err && break; sleep 0.05; done
	for i in 1 2 3; do $TMP/aggwtrue; done
	sleep 1.6
	for i in 1 2; do $TMP/aggwtrue; done
	sleep 0.2
	kill -INT \$P; wait \$P
	sleep 0.2; kill \$J
"
python3 - "$TMP/j.txt" <<'EOF2'
import ast, sys
ents = [ast.literal_eval(l) for l in open(sys.argv[1]) if "TRACE_HIST" in l]
keys = [e for e in ents if e.get("TRACE_HIST") == "jexec" and "TRACE_HITCOUNT" in e]
tots = [e for e in ents if e.get("TRACE_HIST_TOTALS") == "1"]
def tap(ok, name): print(("ok - " if ok else "not ok - ") + name)
tap(len(keys) == 5 and all(e["TRACE_HITCOUNT"] == "1" and e["TRACE_FIELD_COMM"] == "aggwtrue"
                           and e["TRACE_COMMON_PID"].startswith("aggwtrue [") for e in keys),
    f"journal: one entry per key, keys and hitcount as fields ({len(keys)} of 5)")
hits = [int(e["TRACE_HIST_HITS"]) for e in tots]
tap(sum(hits) == 5 and tots[0]["TRACE_HIST_DUMP"] == "interval" and len(tots) == 2
    and tots[-1]["TRACE_HIST_DUMP"] == "final",
    f"journal: interval dumps clear (Hits per dump {hits}, 5 in all), then a final dump")
EOF2

# Aggregate= without Filter=, emitted: sysfs(2) fired N times by one
# process; its entry (common_pid.execname: the pid and its comm) counts N
# (the first event inserts the key through the accept program, the others
# are counted in the emitted program), and the summary says all were
# aggregated.
cat >"$TMP/nf.conf" <<EOF2
[Daemon]
Output=stdout
[Selection]
Name=nofilter
Events=syscalls:sys_enter_sysfs
Aggregate=hist:keys=common_pid.execname
AggregateIntervalSec=0
EOF2
start_tracerd "$TMP/nf.conf" "$TMP/nf.out" || { not_ok "no filter: tracerd starts"; exit 0; }
read -r fpid _ < <("$FIRE" 3000)
sleep 0.2
stop_tracerd
check "no filter: the histogram is counted in an emitted program" \
	grep -q "selection nofilter: Aggregate= compiled to BPF" "$TMP/nf.out.err"
got=$(grep -E "common_pid: fire_syscall +\[ *$fpid\] +\}" "$TMP/nf.out" | sed 's/.*hitcount: *//')
check "no filter: the workload's pid counts its 3000 events (got ${got:-none})" [ "${got:-0}" = 3000 ]
check "no filter: nothing dropped or lost" grep -Eq "summary: selection nofilter: 0 delivered, 0 lost, .* 0 dropped" "$TMP/nf.out.err"
