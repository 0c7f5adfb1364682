#!/usr/bin/env bash
# sched:sched_process_exec end to end: 200 execs of /bin/true, each reported
# once, matched by pid, with the __data_loc filename intact.
. "$(dirname "$0")/../lib.sh"
need_root exec

N=200
cat >"$TMP/exec.conf" <<CONF
[Daemon]
FlushIntervalMSec=20
[Selection]
Name=exec
Events=sched:sched_process_exec
CONF
start_tracerd "$TMP/exec.conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }
ok "tracerd starts and attaches"

: >"$TMP/pids"
for ((i = 0; i < N; i++)); do
	/bin/true &
	echo $! >>"$TMP/pids"
	wait $!
done
sleep 0.3
stop_tracerd
check "tracerd exits 0 on SIGINT" [ $? = 0 ]

missing=0 dup=0 badname=0
for pid in $(cat "$TMP/pids"); do
	lines=$(grep -c "sched_process_exec: filename=/bin/true pid=$pid old_pid=$pid\$" "$TMP/out")
	all=$(grep -c "sched_process_exec: .* pid=$pid old_pid" "$TMP/out")
	[ "$lines" = 0 ] && missing=$((missing + 1))
	[ "$all" -gt 1 ] && dup=$((dup + 1))
	[ "$all" -gt "$lines" ] && badname=$((badname + 1))
done
note "execs: $N, missing: $missing, duplicated: $dup, wrong filename: $badname"
check "all $N execs reported, once each, filename=/bin/true" [ $missing = 0 -a $dup = 0 -a $badname = 0 ]

# The line layout is the kernel's: "comm-pid [cpu] secs.usecs: event: fields".
first=$(grep -m1 "pid=$(head -1 "$TMP/pids") " "$TMP/out")
note "sample: $first"
check "kernel trace line layout" grep -Eq '^ +true-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: sched_process_exec: filename=' <<<"$first"
check "summary counts $N+ delivered" grep -Eq "sched:sched_process_exec delivered=[0-9]+ lost=0" "$TMP/out.err"
