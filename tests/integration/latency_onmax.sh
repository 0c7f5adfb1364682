#!/usr/bin/env bash
# onmax($var).save(fields) and onchange($var).save(fields) (issue 31: "the
# saved fields are those of the event that set the maximum") against the
# kernel's own records, as latency.sh does: a tracefs instance records
# sched_waking and sched_switch with the triggers' filters (trace_clock
# mono) while two latw* ping-pongs run; latency_track.py pairs its records by
# the kernel's rules (latency_pair.py: what BPF saw, tracerd's threads left
# out) and computes per key (next_pid) what ontrack_action() keeps: the max
# wakeup latency (usecs, ns2usecs() per timestamp, then subtracted) and the
# switch's next_comm, prev_pid, prev_prio, prev_comm with it; the last
# latency that changed the tracked one and its prev_pid. tracerd's hist dump
# must give them per key: the value within latency_pair.py's clock tolerance,
# the fields those of an oracle pair within it (ftrace's and BPF's clock
# reads differ per record, so two near-equal pairs may swap order), and the
# entries' hitcounts the number of pairs (the switch's histogram counts only
# the events whose $ts0 resolved). Each trigger also fires a synthetic event
# with its value and fields (onmatch in the same trigger, the same read):
# the dump must be exactly what the rule gives over those. (A start the
# VariableMaxAgeSec= sweep deletes before its time, latency_age.sh, shows
# here as a key's hitcount one below its number of kernel pairs.)
. "$(dirname "$0")/../lib.sh"
need_root latency_onmax
TRACK=$(dirname "$0")/latency_track.py
SECS=${LATENCY_SECONDS:-2}

lat_python
lat_instance "tracerd-latmax-$$" "$F_WAKING" "$F_SWITCH" || { not_ok "latency_onmax: instance"; exit 0; }

# Two variables of the waking: each trigger reads its own, once (a second
# trigger reading $ts0 would find it consumed by the first, as in the kernel).
cat >"$TMP/max.conf" <<EOF
[Daemon]
Output=stdout
RingBufferSize=64M
[Synthetic]
Event=wakeup_max u64 lat; pid_t pid; char next_comm[16]; pid_t prev_pid; int prev_prio; char prev_comm[16]
Event=wakeup_chg u64 lat; pid_t pid; pid_t prev_pid
[Selection]
Name=waking
Events=sched:sched_waking
Aggregate=hist:keys=pid:ts0=common_timestamp.usecs,ts1=common_timestamp.usecs if $F_WAKING
[Selection]
Name=onmax
Events=sched:sched_switch
Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-\$ts0:onmax(\$wakeup_lat).save(next_comm,prev_pid,prev_prio,prev_comm):onmatch(sched.sched_waking).wakeup_max(\$wakeup_lat,next_pid,next_comm,prev_pid,prev_prio,prev_comm) if $F_SWITCH
AggregateIntervalSec=0
[Selection]
Name=onchange
Events=sched:sched_switch
Aggregate=hist:keys=next_pid:chg_lat=common_timestamp.usecs-\$ts1:onchange(\$chg_lat).save(prev_pid):onmatch(sched.sched_waking).wakeup_chg(\$chg_lat,next_pid,prev_pid) if $F_SWITCH
AggregateIntervalSec=0
[Selection]
Name=waking_seen
Events=sched:sched_waking
Filter=$F_WAKING
[Selection]
Name=switch_seen
Events=sched:sched_switch
Filter=$F_SWITCH
[Selection]
Name=pairs
Events=synthetic:wakeup_*
EOF
# waking_seen and switch_seen: the records BPF saw (latency_pair.py's as_bpf_saw).
# Four records a pair, 60k pairs in 2 s: a ring with room for them all,
# should the daemon fall behind on a loaded machine (8M lost some).

echo 1 >"$INSTANCE/tracing_on"
start_tracerd "$TMP/max.conf" "$TMP/out" || {
	not_ok "latency_onmax: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }
ok "latency_onmax: tracerd starts with onmax() and onchange() triggers"

# Two ping-pongs side by side: four keys, and other tasks' switches (each
# other's, idle's) before a latw task's, which the saved fields tell apart.
lat_pingpong "$SECS" >"$TMP/rounds2" &
p2=$!
on_exit "kill $p2"
rounds=$(lat_pingpong "$SECS")
wait $p2
rounds2=$(cat "$TMP/rounds2")
check "latency_onmax: the ping-pongs ran (${rounds:-no} and ${rounds2:-no} rounds in $SECS s)" \
	[ "${rounds:-0}" -gt 0 -a "${rounds2:-0}" -gt 0 ]
sleep 0.3	# tracerd drains its ring within FlushIntervalMSec

lat_collect latency_onmax
for s in pairs waking_seen switch_seen; do
	check "latency_onmax: tracerd lost no record of selection $s" \
		grep -Eq "summary: selection $s: [0-9]+ delivered, 0 lost," "$TMP/out.err"
done
for s in onmax onchange; do
	check "latency_onmax: selection $s dropped nothing" \
		grep -Eq "summary: selection $s: .* [0-9]+ aggregated, 0 dropped" "$TMP/out.err"
done
grep -A2 -E '^\{ next_pid' "$TMP/out" | sed 's/^/# /'

python3 "$TRACK" "$TMP/out" "$TMP/trace" --misses "$MISSES" --exclude "$TIDS" \
	--onmax onmax=wakeup_max --onchange onchange=wakeup_chg ||
	{ [ -n "${LATENCY_KEEP:-}" ] && echo "$TIDS" >"$TMP/tids" &&
		cp "$TMP/out" "$TMP/out.err" "$TMP/trace" "$TMP/tids" "$LATENCY_KEEP/"; }
