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

# The workload's interpreter: its comm is $LATW, the workload's alone.
lat_python

lat_instance "tracerd-lat-$$" "$F_WAKING" "$F_SWITCH" || { not_ok "latency: instance"; exit 0; }

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

# The ping-pong (tests/tools/pingpong.py), started and waited for while
# both are on.
rounds=$(lat_pingpong "$SECS")
check "latency: the ping-pong ran (${rounds:-no} rounds in $SECS s)" [ "${rounds:-0}" -gt 0 ]
sleep 0.3	# tracerd drains its ring within FlushIntervalMSec

# What fired in tracerd's threads, and what the kernel skipped: its
# programs' recursion_misses (a tracepoint program does not run while
# another BPF program runs on the CPU; ftrace records it all the same).
lat_collect latency
for s in latency waking_seen switch_seen; do
	check "latency: tracerd lost no record of selection $s" \
		grep -Eq "summary: selection $s: [0-9]+ delivered, 0 lost," "$TMP/out.err"
done

# Wakings on one CPU read on another: the workload runs on every CPU.
across=0
[ "$(nproc)" -ge 2 ] && across=3
python3 "$PAIR" wakeup "$TMP/out" "$TMP/trace" --misses "$MISSES" --exclude "$TIDS" --hist lathist --across $across ||
	{ [ -n "${LATENCY_KEEP:-}" ] && cp "$TMP/out" "$TMP/out.err" "$TMP/trace" "$LATENCY_KEEP/"; }
