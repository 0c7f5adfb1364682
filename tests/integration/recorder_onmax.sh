#!/usr/bin/env bash
# onmax($var).snapshot(): a new maximum of the trigger's variable (over all
# its keys) takes a snapshot of the recorder, named after its selection; a
# value that beats nothing asks for none; a new maximum inside
# MinIntervalSec= is counted in the next snapshot's entry. The recorder's
# window holds numbered fcntl_setlk events (tests/tools/fire_setlk); the
# maxima come from fcntl_setlk calls of another comm, whose l_start is the
# value. journald's socket is a stand-in in a mount namespace of this
# test's own (agg_journal.py), as in recorder.sh. GET /metrics counts the
# snapshots, the skipped trigger and the window's records. A 64M ring, as
# recorder.sh's: under ThreadSanitizer the 8M default lost the last of the
# 100000 fired at once (5564 in one run), and the snapshot rightly had no
# number 100000.
. "$(dirname "$0")/../lib.sh"
need_root recorder_onmax
journal_standin recorder_onmax

NUMS=recn$$
MAXC=recm$$
cp "${BUILD:-build}/tests/tools/fire_setlk" "$TMP/$NUMS"
cp "${BUILD:-build}/tests/tools/fire_setlk" "$TMP/$MAXC"
DIR=$TMP/store
PORT=$(free_port)
cat >"$TMP/c.conf" <<CONF
[Daemon]
RingBufferSize=64M
StatsIntervalSec=0
[Metrics]
Listen=127.0.0.1:$PORT
[Store]
Directory=$DIR
[Recorder]
Size=256K
KeepAfterSec=0
MinIntervalSec=3
[Selection]
Name=nums
Events=filelock:fcntl_setlk
Filter=comm == "$NUMS"
Output=recorder
[Selection]
Name=mx
Events=filelock:fcntl_setlk
Filter=comm == "$MAXC"
Aggregate=hist:keys=common_pid:m=fl_start:onmax(\$m).snapshot()
CONF
entries() { grep -aF "'TRACE_SNAPSHOT':" "$TMP/j.txt"; }
field() { python3 -c 'import ast, sys; print(ast.literal_eval(sys.argv[2]).get(sys.argv[1], ""))' "$1" "$2"; }
wait_snapshots() {
	local i
	for ((i = 0; i < 100; i++)); do [ "$(entries | wc -l)" -ge "$1" ] && return 0; sleep 0.05; done
	return 1
}

run_tracerd "$TMP/out" --config "$TMP/c.conf" || { not_ok "tracerd starts with onmax().snapshot()"; exit 0; }
"$TMP/$NUMS" 100000 1 >/dev/null
"$TMP/$MAXC" 1 5 >/dev/null		# a first maximum
wait_snapshots 1
E=$(entries | head -1)
check "a new maximum takes a snapshot named after its selection ($(field TRACE_SNAPSHOT "$E"))" \
	[ "$(field TRACE_SNAPSHOT_REASON "$E")" = mx ] && [ -d "$(field TRACE_SNAPSHOT "$E")" ]
"$TRACERD" --read "$(field TRACE_SNAPSHOT "$E")" >"$TMP/first.txt" 2>&1
n=$(grep -c "fl_start=100000 " "$TMP/first.txt")
note "the first snapshot: $(field TRACE_SNAPSHOT_RECORDS "$E") records, overwritten $(field TRACE_SNAPSHOT_OVERWRITTEN "$E"), lost $(field TRACE_SNAPSHOT_LOST "$E"); its last: $(grep -v '^tracerd' "$TMP/first.txt" | tail -1)"
check "... with the window's records before it" [ "$n" = 1 ]
"$TMP/$MAXC" 1 3 >/dev/null		# no new maximum
"$TMP/$MAXC" 1 7 >/dev/null		# a new one, inside MinIntervalSec=
sleep 3.5
"$TMP/$MAXC" 1 6 >/dev/null		# none
"$TMP/$MAXC" 1 9 >/dev/null		# a new one, past it
wait_snapshots 2
# GET /metrics has the recorder's counts.
curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/m.txt"
metric() { awk -v k="$1" '$1 == k {print $2}' "$TMP/m.txt"; }
E2=$(entries | sed -n 2p)
check "metrics: 2 snapshots, 1 trigger skipped, 100000 records into the window, more overwritten than the last snapshot says ($(metric tracerd_recorder_overwritten_total) >= $(field TRACE_SNAPSHOT_OVERWRITTEN "$E2"))" \
	[ "$(metric tracerd_recorder_snapshots_total)" = 2 ] &&
	[ "$(metric tracerd_recorder_triggers_skipped_total)" = 1 ] &&
	[ "$(metric tracerd_recorder_records_total)" = 100000 ] &&
	[ "$(metric tracerd_recorder_snapshots_failed_total)" = 0 ] &&
	[ "$(metric tracerd_recorder_overwritten_total)" -ge "$(field TRACE_SNAPSHOT_OVERWRITTEN "$E2")" ] &&
	[ "$(metric tracerd_recorder_window_bytes)" -gt 0 ]
stop_tracerd
check "tracerd exits 0" [ $? = 0 ]
check "two snapshots" [ "$(entries | wc -l)" = 2 ] && [ "$(ls "$DIR" | grep -c -- '-mx$')" = 2 ]
check "the maximum inside MinIntervalSec= counted in the next one's entry, nothing else" \
	[ "$(field TRACE_SNAPSHOT_SKIPPED "$E2")" = 1 ]
