#!/usr/bin/env bash
# Inter-event hist triggers (issue 31): wakeup latency, sched_waking to
# sched_switch keyed by pid, against the kernel's own records. This kernel
# has no CONFIG_HIST_TRIGGERS, so the oracle is a tracefs instance recording
# the same events with the same filters (trace_clock mono: the clock of
# bpf_ktime_get_ns), paired by latency_pair.py as the kernel pairs them
# (last waking per pid, read once). A ping-pong over pipes between two
# processes named "latw*" (each wakes the other) runs for 2 s while both are
# on: both see the whole workload, so the pairs must be the same, pid by
# pid, within a few microseconds; the .log2 histogram of the synthetic event
# must be that of tracerd's own records.
. "$(dirname "$0")/../lib.sh"
need_root latency
PAIR=$(dirname "$0")/latency_pair.py
SECS=${LATENCY_SECONDS:-2}

# A copy of the interpreter (the binary, not a pyenv shim): its comm is
# "latwpy", the workload's alone.
cp "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$TMP/latwpy"

F_WAKING='comm ~ "latw*"'
F_SWITCH='next_comm ~ "latw*"'
make_instance "tracerd-lat-$$" || { not_ok "latency: instance"; exit 0; }
# About 40k records a second: room for them all.
echo 65536 >"$INSTANCE/buffer_size_kb"
echo "$F_WAKING" >"$INSTANCE/events/sched/sched_waking/filter"
echo "$F_SWITCH" >"$INSTANCE/events/sched/sched_switch/filter"
echo 1 >"$INSTANCE/events/sched/sched_waking/enable"
echo 1 >"$INSTANCE/events/sched/sched_switch/enable"
on_exit "echo 0 >$INSTANCE/events/enable"

cat >"$TMP/lat.conf" <<EOF
[Daemon]
Output=stdout
[Synthetic]
Event=wakeup_latency u64 lat; pid_t pid; int prio
[Selection]
Name=waking
Events=sched:sched_waking
Aggregate=hist:keys=pid:ts0=common_timestamp.usecs if $F_WAKING
[Selection]
Name=switch
Events=sched:sched_switch
Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-\$ts0:onmatch(sched.sched_waking).wakeup_latency(\$wakeup_lat,next_pid,next_prio) if $F_SWITCH
[Selection]
Name=waking_seen
Events=sched:sched_waking
Filter=$F_WAKING
[Selection]
Name=switch_seen
Events=sched:sched_switch
Filter=$F_SWITCH
[Selection]
Name=latency
Events=synthetic:wakeup_latency
[Selection]
Name=lathist
Events=synthetic:wakeup_latency
Aggregate=hist:keys=lat.log2
AggregateIntervalSec=0
EOF
# waking_seen and switch_seen: the records BPF saw. In some tasks' context
# no BPF program runs while ftrace records (kernel_skips.sh's 'hidden': 4 of
# 43k wakings here, in hardirqs over one task), so the instance may hold a
# waking tracerd could not pair; latency_pair.py pairs what BPF saw.

echo 1 >"$INSTANCE/tracing_on"
start_tracerd "$TMP/lat.conf" "$TMP/out" || {
	not_ok "latency: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }
ok "latency: tracerd starts with the issue's wakeup_latency config"
# tracerd leaves out what fires in its own threads (a switch from one of
# them to a latw task, here); the oracle does too (latency_pair.py --exclude).

# The ping-pong: a byte each way per round, each read blocks until the
# other's write wakes it; then a sleep of 50 us, woken by a timer (from
# interrupt context, often out of idle). Started and waited for while both
# are on.
rounds=$("$TMP/latwpy" -c '
import os, sys, time
a_r, a_w = os.pipe(); b_r, b_w = os.pipe()
pid = os.fork()
if pid == 0:
    while os.read(a_r, 1) == b"p":
        os.write(b_w, b"p")
    os._exit(0)
end, n = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < end:
    os.write(a_w, b"p"); os.read(b_r, 1); n += 1
    time.sleep(0.00005)
os.write(a_w, b"q"); os.waitpid(pid, 0)
print(n)' "$SECS")
check "latency: the ping-pong ran (${rounds:-no} rounds in $SECS s)" [ "${rounds:-0}" -gt 0 ]
sleep 0.3	# tracerd drains its ring within FlushIntervalMSec

# What fired in tracerd's threads, and what the kernel skipped: its
# programs' recursion_misses (a tracepoint program does not run while
# another BPF program runs on the CPU; ftrace records it all the same).
tids=$(ls /proc/"$TRACERD_PID"/task | tr '\n' ' ')
misses=0
for id in $(cat /proc/"$TRACERD_PID"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -u); do
	n=$(bpftool -j prog show id "$id" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("recursion_misses", 0))' 2>/dev/null)
	misses=$((misses + ${n:-0}))
done
stop_tracerd
check "latency: tracerd exits 0 at stop" [ $? = 0 ]
echo 0 >"$INSTANCE/tracing_on"
cat "$INSTANCE/trace" >"$TMP/trace"
overrun=$(awk '/^overrun:/ {n += $2} END {print n + 0}' "$INSTANCE"/per_cpu/cpu*/stats)
check "latency: the instance kept every record (overrun $overrun)" [ "$overrun" = 0 ]
# The kernel's count over the whole run, up to the detach, is in tracerd's summary.
skipped=$(grep -Eo "summary: [0-9]+ skipped by the kernel" "$TMP/out.err" | grep -Eo "[0-9]+" | tail -1)
[ "${skipped:-0}" -gt "$misses" ] && misses=$skipped
grep -E "summary: selection " "$TMP/out.err" | cut -d';' -f1 | sed 's/^/# /'
for s in latency waking_seen switch_seen; do
	check "latency: tracerd lost no record of selection $s" \
		grep -Eq "summary: selection $s: [0-9]+ delivered, 0 lost," "$TMP/out.err"
done

# Wakings on one CPU read on another: the workload runs on every CPU.
across=0
[ "$(nproc)" -ge 2 ] && across=10
python3 "$PAIR" wakeup "$TMP/out" "$TMP/trace" --misses "$misses" --exclude "$tids" --hist lathist --across $across ||
	{ [ -n "${LATENCY_KEEP:-}" ] && cp "$TMP/out" "$TMP/out.err" "$TMP/trace" "$LATENCY_KEEP/"; }
