#!/usr/bin/env bash
# Inter-event triggers across reloads (issue 31: "Reload keeps variables of
# unchanged triggers, as it keeps counts today"). A start must be made
# before a SIGHUP and its end come after the reload: a task is woken
# (sched_waking: $ts0 set for its pid) while it cannot run, and runs
# (sched_switch: $ts0 read, wakeup_latency fires) only once the reloads are
# done. It cannot run because it is pinned to CPU 1 under SCHED_FIFO 40
# while a SCHED_FIFO 50 spinner holds CPU 1: neither RT throttling nor the
# fair server lets a lower RT task in (a CFS task would get its turn within
# a second, too soon for a reload on a loaded machine); everything else
# (this shell, tracerd, the writer) stays on CPU 0. The spinner ends itself
# after 30 s, should this shell die without killing it.
#  1. The waking's and the switch's triggers unchanged across two reloads,
#     one that adds an unrelated selection, one with the same config: the
#     start made before them still pairs, wakeup_latency fires with the
#     time the task waited.
#  2. A reload that changes the waking's trigger (size=, a new slot): the
#     start made before it is dropped, as the kernel drops a trigger's
#     variables with it. The switch finds no start (unmatched), nothing
#     fires; the start left behind ages out (VariableMaxAgeSec=1 from that
#     reload on) and is counted so, as every start whose end never came.
. "$(dirname "$0")/../lib.sh"
need_root latency_reload
if [ "$(nproc)" -lt 2 ]; then ok "latency_reload: # SKIP needs 2 CPUs (CPU 1 held by a spinner)"; exit 0; fi
READER=$(dirname "$0")/../tools/latw_reader.py
taskset -p -c 0 $$ >/dev/null

lat_python
# conf WAKING_EXTRA OTHER AGE: the wakeup latency config; WAKING_EXTRA
# after the waking trigger's variable; OTHER: with an unrelated selection.
conf() {
	cat <<EOF
[Daemon]
Output=stdout
StatsIntervalSec=0
VariableMaxAgeSec=$3
[Synthetic]
Event=wakeup_latency u64 lat; pid_t pid; int prio
[Selection]
Name=waking
Events=sched:sched_waking
Aggregate=hist:keys=pid:ts0=common_timestamp.usecs$1 if $F_WAKING
[Selection]
Name=switch
Events=sched:sched_switch
Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-\$ts0:onmatch(sched.sched_waking).wakeup_latency(\$wakeup_lat,next_pid,next_prio) if $F_SWITCH
[Selection]
Name=latency
Events=synthetic:wakeup_latency
EOF
	[ -n "$2" ] && printf '[Selection]\nName=other\nEvents=sched:sched_process_exit\nFilter=%s\n' "$F_WAKING"
	return 0
}
reloaded() { grep -c "reloaded $TMP/c.conf" "$TMP/out.err"; }
# reload K: SIGHUP, then waits (20 s at most) for the K-th 'reloaded' line.
reload() {
	local i
	kill -HUP "$TRACERD_PID"
	for ((i = 0; i < 400; i++)); do
		[ "$(reloaded)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
now_us() { echo $(($(date +%s%N) / 1000)); }

# held NAME: starts the reader (pid in RPID, its output in $TMP/NAME) on
# CPU 1, waits until it blocks in read(), then the spinner (SPID) on CPU 1.
held() {
	local i
	taskset -c 1 chrt -f 40 "$LATWPY" "$READER" "$TMP/fifo" >"$TMP/$1" &
	RPID=$!
	on_exit "kill $RPID"
	for ((i = 0; i < 200; i++)); do
		[ -s "$TMP/$1" ] && grep -q '^State:.*S (sleeping)' /proc/$RPID/status && break
		sleep 0.02
	done
	taskset -c 1 chrt -f 50 python3 -c '
import time
end = time.monotonic() + 30
while time.monotonic() < end:
    pass' &
	SPID=$!
	on_exit "kill $SPID"
	for ((i = 0; i < 200; i++)); do
		[ "$(ps -o cls= -p $SPID 2>/dev/null | tr -d ' ')" = FF ] &&
			[ "$(cat /proc/$SPID/comm 2>/dev/null)" = python3 ] && break
		sleep 0.02
	done
	sleep 0.1
	[ "$(head -1 "$TMP/$1")" = "$RPID" ]
}

mkfifo "$TMP/fifo"
conf "" "" 60 >"$TMP/c.conf"
start_tracerd "$TMP/c.conf" "$TMP/out" || {
	not_ok "latency_reload: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }

# --- 1. Unchanged triggers: the start survives.
held reader1 || not_ok "1: the reader blocks on CPU 1 under the spinner"
t0=$(now_us)
echo x >"$TMP/fifo"
t1=$(now_us)
conf "" other 60 >"$TMP/c.conf"
check "1: tracerd reloads, adding a selection (reloaded)" reload 1
check "1: tracerd reloads the same config again (reloaded)" reload 2
t2=$(now_us)
note "woken at +0, reloads done at +$((t2 - t1)) us"
check "1: the woken task has not run yet (reader: $(tr '\n' ' ' <"$TMP/reader1"))" \
	[ "$(wc -l <"$TMP/reader1")" = 1 ]
t3=$(now_us)
kill $SPID
wait $SPID 2>/dev/null
wait $RPID
t4=$(now_us)
check "1: the woken task ran once the spinner ended (reader: $(tr '\n' ' ' <"$TMP/reader1"))" \
	grep -qx read "$TMP/reader1"
# tracerd drains its ring within FlushIntervalMSec; under ThreadSanitizer
# (make test SANITIZE=thread runs the reload tests) it takes longer.
for ((i = 0; i < 100; i++)); do
	grep -qE "sched_process_exit: comm=$LATW pid=$RPID " "$TMP/out" && break
	sleep 0.05
done
rec=$(grep -E "wakeup_latency: lat=[0-9]+ pid=$RPID prio=" "$TMP/out" | tail -1)
note "${rec:-no wakeup_latency record of pid $RPID}"
lat=$(sed -n 's/.* lat=\([0-9]*\) .*/\1/p' <<<"$rec")
# From the write to the switch: at least from after the write to the
# spinner's kill, at most from before the write to after the read.
check "1: the start made before the reloads pairs: wakeup_latency of pid $RPID, lat ${lat:-none} us within [$((t3 - t1)), $((t4 - t0))]" \
	[ "${lat:-0}" -ge $((t3 - t1)) -a "${lat:-0}" -le $((t4 - t0)) -a -n "$lat" ]
check "1: the selection the reload added traces (the reader's exit)" \
	grep -qE "sched_process_exit: comm=$LATW pid=$RPID " "$TMP/out"

# --- 2. The waking's trigger changed: the start is dropped, and ages out.
held reader2 || not_ok "2: the reader blocks on CPU 1 under the spinner"
echo x >"$TMP/fifo"
conf ":size=4096" other 1 >"$TMP/c.conf"
check "2: tracerd reloads with the waking's trigger changed (reloaded)" reload 3
check "2: the woken task has not run yet (reader: $(tr '\n' ' ' <"$TMP/reader2"))" \
	[ "$(wc -l <"$TMP/reader2")" = 1 ]
kill $SPID
wait $SPID 2>/dev/null
wait $RPID
check "2: the woken task ran once the spinner ended" grep -qx read "$TMP/reader2"
# VariableMaxAgeSec=1: swept every second, a start goes within 2 s.
sleep 3
stop_tracerd
check "2: tracerd exits 0 at stop" [ $? = 0 ]
grep -E "summary: selection |^tracerd: +(waking|switch) " "$TMP/out.err" | sed 's/^/# /'
check "2: the start made before the trigger changed does not pair (no wakeup_latency of pid $RPID)" \
	[ "$(grep -cE "wakeup_latency: lat=[0-9]+ pid=$RPID prio=" "$TMP/out")" = 0 ]
check "2: the reader's switch-in is counted unmatched (no start for the key)" \
	grep -qE "summary: selection switch: .*; triggers: [1-9][0-9]* unmatched" "$TMP/out.err"
check "2: the start the reload dropped is counted aged out (waking's summary: 1 starts aged out)" \
	grep -qE "summary: selection waking: .*; triggers: .*, 1 starts aged out" "$TMP/out.err"
check "tracerd logged the three reloads" [ "$(reloaded)" = 3 ]
