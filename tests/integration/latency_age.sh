#!/usr/bin/env bash
# Starts whose end never comes age out (issue 31, [Daemon]
# VariableMaxAgeSec=): a waking trigger sets $ts0 per pid, the switch's
# trigger reads it but its filter matches nothing, so no start is ever
# read. With VariableMaxAgeSec=1 each start goes once a second has passed
# since it was set (a sweep every second: within 2 s), counted in the
# waking selection's summary as aged out. A variable is kept per key (a
# later start of the pid overwrites the earlier, as in the kernel), so the
# count is the number of pids the trigger saw woken: a plain selection of
# the same event with the same filter shows them. The workload: a process
# of the test's comm forks 20 children, each blocked in read() (most of
# them, by then) until the parent's write wakes it.
# And none younger: with VariableMaxAgeSec=10 (a sweep every second), two
# ping-pongs of 3 s whose starts no end reads (each pid's start set again
# every few dozen microseconds) must see none aged out; the starts set while
# a sweep walks the map are the youngest of all.
. "$(dirname "$0")/../lib.sh"
need_root latency_age
lat_python

cat >"$TMP/age.conf" <<EOF
[Daemon]
Output=stdout
VariableMaxAgeSec=1
[Selection]
Name=waking
Events=sched:sched_waking
Aggregate=hist:keys=pid:ts0=common_timestamp.usecs if $F_WAKING
[Selection]
Name=switch
Events=sched:sched_switch
Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-\$ts0 if next_comm == "no such comm"
[Selection]
Name=waking_seen
Events=sched:sched_waking
Filter=$F_WAKING
EOF
start_tracerd "$TMP/age.conf" "$TMP/out" || {
	not_ok "latency_age: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }

"$LATWPY" -c '
import os
kids = []
for _ in range(20):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(r, 1)
        os._exit(0)
    kids.append((pid, w))
for pid, w in kids:
    os.write(w, b"x")
for pid, w in kids:
    os.waitpid(pid, 0)'
check "latency_age: the workload ran" [ $? = 0 ]
sleep 3	# past VariableMaxAgeSec=1 and the next sweep
stop_tracerd
check "latency_age: tracerd exits 0 at stop" [ $? = 0 ]
grep -E "summary: selection " "$TMP/out.err" | sed 's/^/# /'
check "latency_age: tracerd lost no record of waking_seen" \
	grep -Eq "summary: selection waking_seen: [0-9]+ delivered, 0 lost," "$TMP/out.err"
wakings=$(grep -cE " sched_waking: comm=$LATW pid=" "$TMP/out")
pids=$(grep -oE " sched_waking: comm=$LATW pid=[0-9]+ " "$TMP/out" | sort -u | wc -l)
aged=$(sed -n 's/.*summary: selection waking: .*, \([0-9]*\) starts aged out.*/\1/p' "$TMP/out.err")
# A child not yet blocked in read() when the parent writes is not woken.
check "latency_age: the workload's children were woken ($wakings wakings of $pids pids)" [ "$pids" -ge 5 ]
check "latency_age: waking's summary: ${aged:-no} starts aged out, one per pid woken ($pids)" \
	[ "${aged:-x}" = "$pids" ]
check "latency_age: none counted on the switch's (it read no start)" \
	grep -qE "summary: selection switch: .*(; triggers: 0 unmatched .* 0 starts aged out|cut stack)$" "$TMP/out.err"

# --- None younger than VariableMaxAgeSec=.
sed -i 's/^VariableMaxAgeSec=1$/VariableMaxAgeSec=10/' "$TMP/age.conf"
start_tracerd "$TMP/age.conf" "$TMP/young" || {
	not_ok "latency_age: tracerd starts again"; sed 's/^/# /' "$TMP/young.err"; exit 0; }
lat_pingpong 3 >/dev/null &
p2=$!
on_exit "kill $p2"
lat_pingpong 3 >/dev/null
wait $p2
stop_tracerd
grep -E "summary: selection waking: " "$TMP/young.err" | sed 's/^/# /'
woken=$(grep -cE " sched_waking: comm=$LATW pid=" "$TMP/young")
aged=$(sed -n 's/.*summary: selection waking: .*, \([0-9]*\) starts aged out.*/\1/p' "$TMP/young.err")
check "latency_age: VariableMaxAgeSec=10, 3 s of ping-pong ($woken wakings): ${aged:-0} starts aged out, none" \
	[ "${aged:-0}" = 0 -a "$woken" -gt 1000 ]
