#!/usr/bin/env bash
# The flight recorder (Output=recorder, [Recorder]): a workload fires
# numbered events (filelock:fcntl_setlk, l_start = 1, 2, ...) into a window
# smaller than it, so that it wraps; then a Trigger=snapshot event, and more
# numbered events within KeepAfterSec=. The snapshot, read back by --read
# (and by trace-cmd, exported by --trace-dat),
# holds every number from its first to the last fired within KeepAfterSec=,
# none missing or repeated, and its first is the count overwritten + 1, as
# its journal entry says; nothing was on disk before the trigger. Then:
# triggers inside MinIntervalSec= (counted, no snapshot; the next snapshot's
# entry says how many), a full disk (reported, the window kept, the next
# trigger succeeds), a SIGKILL while a snapshot is written (the next
# start reports the torn one), and MaxSnapshots= (the oldest past it
# deleted once a snapshot is written, the torn one among them, nothing
# else; said, counted in GET /metrics; 0: all kept). journald's socket is a
# stand-in in a mount namespace of this test's own (agg_journal.py), as is
# the full disk.
. "$(dirname "$0")/../lib.sh"
need_root recorder
journal_standin recorder

NUMS=recn$$
TRIG=rect$$
cp "${BUILD:-build}/tests/tools/fire_setlk" "$TMP/$NUMS"
fire_as "$TRIG"
DIR=$TMP/store

# conf NAME SIZE KEEP MIN [MAXSNAPSHOTS [METRICS-PORT]]
conf() {
	cat >"$TMP/$1.conf" <<CONF
[Daemon]
RingBufferSize=64M
StatsIntervalSec=0
[Store]
Directory=$DIR
[Recorder]
Size=$2
KeepAfterSec=$3
MinIntervalSec=$4
[Selection]
Name=nums
Events=filelock:fcntl_setlk
Filter=comm == "$NUMS"
Output=recorder
[Selection]
Name=trig
Events=syscalls:sys_enter_sysfs
Filter=comm == "$TRIG"
Trigger=snapshot
Output=recorder
CONF
	[ -n "${5:-}" ] && printf '[Recorder]\nMaxSnapshots=%s\n' "$5" >>"$TMP/$1.conf"
	[ -n "${6:-}" ] && printf '[Metrics]\nListen=127.0.0.1:%s\n' "$6" >>"$TMP/$1.conf"
	return 0
}
# The journal entries with field $1 (the stand-in's lines) since the last mark.
SINCE=0
mark() { SINCE=$(wc -l <"$TMP/j.txt"); }
entries() { tail -n +$((SINCE + 1)) "$TMP/j.txt" | grep -aF "'$1':"; }
# The final statistics of selection $1: delivered and lost.
final() { entries TRACE_STATS_FINAL | grep -aF "'TRACE_SELECTION': '$1'" | tail -1; }
# field KEY LINE: a field of a stand-in line.
field() { python3 -c 'import ast, sys; print(ast.literal_eval(sys.argv[2]).get(sys.argv[1], ""))' "$1" "$2"; }
# Waits up to $2 s for $1 snapshot entries.
wait_snapshots() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ "$(entries TRACE_SNAPSHOT | wc -l)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# numbers FILE: checks the fl_start numbers of FILE's fcntl_setlk lines run
# from $2 to $3, each once, in order; prints what is wrong.
numbers() {
	python3 - "$@" <<'PY'
import re, sys
want, last = int(sys.argv[2]), int(sys.argv[3])
got = [int(m.group(1)) for m in (re.search(r"fcntl_setlk: .* fl_start=(\d+) ", l) for l in open(sys.argv[1])) if m]
if not got: print("# no number"); sys.exit(1)
for v in got:
    if v != want: print("# %d where %d was due" % (v, want)); sys.exit(1)
    want += 1
if want - 1 != last: print("# the last is %d, not %d" % (want - 1, last)); sys.exit(1)
PY
}

# --- the window wraps, a trigger, KeepAfterSec=
conf wrap 256K 2 30
run_tracerd "$TMP/wrap.out" --config "$TMP/wrap.conf" || { not_ok "recorder: tracerd starts"; exit 0; }
"$TMP/$NUMS" 400000 1 >/dev/null
sleep 0.3
check "nothing on disk before a trigger" [ ! -e "$DIR" ]
"$FIRE" 1 >/dev/null
"$TMP/$NUMS" 1000 400001 >/dev/null
wait_snapshots 1 20
check "one journal entry for the snapshot" [ "$(entries TRACE_SNAPSHOT | wc -l)" = 1 ]
E=$(entries TRACE_SNAPSHOT | head -1)
SNAP=$(field TRACE_SNAPSHOT "$E")
OVER=$(field TRACE_SNAPSHOT_OVERWRITTEN "$E")
note "snapshot: $SNAP: $(field MESSAGE "$E")"
check "named after its trigger (trig)" [ "$(field TRACE_SNAPSHOT_REASON "$E")" = trig ] && [[ $SNAP == "$DIR"/snapshot-*-trig ]]
check "the snapshot is a directory, no temporary one left" [ -d "$SNAP" ] && [ -z "$(ls -A "$DIR" | grep '^\.tmp-')" ]
"$TMP/$NUMS" 1000 500001 >/dev/null
"$TRACERD" --snapshot="$TRACERD_PID" >"$TMP/ask.out" 2>&1
rc=$?
check "tracerd --snapshot=PID asks ($rc: $(cat "$TMP/ask.out"))" [ $rc = 0 ]
for ((i = 0; i < 200; i++)); do grep -aq "snapshot trigger (request) inside" "$TMP/j.txt" && break; sleep 0.05; done
check "a trigger inside MinIntervalSec=: said, counted" grep -aq "snapshot trigger (request) inside \[Recorder\] MinIntervalSec=: counted" "$TMP/j.txt"
check "... and no snapshot" [ "$(ls "$DIR" | wc -l)" = 1 ]
stop_tracerd
check "tracerd exits 0" [ $? = 0 ]
check "... and says the trigger took no snapshot" grep -aq "1 snapshot triggers since the last snapshot took none" "$TMP/j.txt"
check "at stop: what the window was given (402001 records) and dropped, said" \
	grep -aqE "recorder: 402001 records into the window, [1-9][0-9]* overwritten \(with 0 ring buffer losses" "$TMP/j.txt"
"$TRACERD" --read "$SNAP" >"$TMP/wrap.txt" 2>"$TMP/wrap.err"
rc=$?
check "--read reads the snapshot, exit 0 ($rc$(head -1 "$TMP/wrap.err" | sed 's/^/: /'))" [ $rc = 0 ]
check "the window wrapped: overwritten $OVER > 0" [ "${OVER:-0}" -gt 0 ]
check "its numbers run from overwritten + 1 to the last fired within KeepAfterSec=, each once" \
	numbers "$TMP/wrap.txt" $((OVER + 1)) 401000
check "the trigger's record is in it" [ "$(grep -c "sys_sysfs(" "$TMP/wrap.txt")" = 1 ]
lines=$(wc -l <"$TMP/wrap.txt")
check "its entry's records ($(field TRACE_SNAPSHOT_RECORDS "$E")) are the lines read ($lines)" \
	[ "$(field TRACE_SNAPSHOT_RECORDS "$E")" = "$lines" ]
check "its first and last timestamps are the lines'" \
	[ "$(field TRACE_SNAPSHOT_FIRST "$E")" = "$(head -1 "$TMP/wrap.txt" | grep -oE '[0-9]+\.[0-9]{6}:' | tr -d :)" ] && \
	[ "$(field TRACE_SNAPSHOT_LAST "$E")" = "$(tail -1 "$TMP/wrap.txt" | grep -oE '[0-9]+\.[0-9]{6}:' | tr -d :)" ]
check "no loss in it" [ "$(field TRACE_SNAPSHOT_LOST "$E")" = 0 ]
# A snapshot is a store like any: exported to trace.dat, trace-cmd reads
# the same records.
"$TRACERD" --read "$SNAP" --trace-dat "$TMP/snap.dat" 2>"$TMP/dat.err"
n=$(trace-cmd report -N -t "$TMP/snap.dat" 2>/dev/null | grep -c "fcntl_setlk:\|sys_enter_sysfs:")
check "--trace-dat of the snapshot: trace-cmd report reads its $lines records ($n)" [ "$n" = "$lines" ]
F=$(final nums)
check "every number delivered to the window ($(field TRACE_STATS_DELIVERED "$F")), none lost ($(field TRACE_STATS_LOST "$F"))" \
	[ "$(field TRACE_STATS_DELIVERED "$F")" = 402000 ] && [ "$(field TRACE_STATS_LOST "$F")" = 0 ]

runuser -u nobody -- "$TRACERD" --snapshot=1 >"$TMP/nobody.out" 2>&1
rc=$?
check "tracerd --snapshot as a user: refused, exit 77 ($rc: $(cat "$TMP/nobody.out"))" [ $rc = 77 ]
"$TRACERD" --snapshot=$$ >"$TMP/notd.out" 2>&1
rc=$?
check "tracerd --snapshot=PID of another program: refused, exit 69 ($rc: $(cat "$TMP/notd.out"))" [ $rc = 69 ]

# --- two triggers inside MinIntervalSec=: one snapshot, the other counted in
# the next one's entry; a full disk: reported, the window kept, and the
# next trigger writes it
rm -rf "$DIR"; mkdir "$DIR"
mount -t tmpfs -o size=64k none "$DIR" || not_ok "a small file system for the store"
mark
conf min 256K 0 2
run_tracerd "$TMP/min.out" --config "$TMP/min.conf" || { not_ok "recorder: tracerd starts"; exit 0; }
"$TMP/$NUMS" 300000 1 >/dev/null
kill -USR1 "$TRACERD_PID"
wait_snapshots 1 20
E=$(entries TRACE_SNAPSHOT | tail -1)
check "a full disk: the snapshot is reported not written ($(field MESSAGE "$E"))" \
	grep -q "snapshot (signal) could not be written to .*: No space left on device; the window is kept" <<<"$(field MESSAGE "$E")"
check "... and leaves nothing behind" [ -z "$(ls -A "$DIR")" ]
mount -o remount,size=64m "$DIR"
"$TRACERD" --snapshot="$TRACERD_PID" >/dev/null
sleep 0.3
kill -USR1 "$TRACERD_PID"
sleep 2.2
kill -USR1 "$TRACERD_PID"
wait_snapshots 3 20
stop_tracerd
check "tracerd exits 0" [ $? = 0 ]
check "two snapshots of three triggers after the failed one (--snapshot's named request)" \
	[ "$(ls "$DIR" | grep -c '^snapshot-.*-signal$')" = 1 ] && [ "$(ls "$DIR" | grep -c '^snapshot-.*-request$')" = 1 ]
E2=$(entries TRACE_SNAPSHOT | sed -n 2p)
E3=$(entries TRACE_SNAPSHOT | sed -n 3p)
check "the window kept: the one after the full disk holds the numbers up to 300000" \
	numbers <("$TRACERD" --read "$(field TRACE_SNAPSHOT "$E2")") $(($(field TRACE_SNAPSHOT_OVERWRITTEN "$E2") + 1)) 300000
check "the second trigger was counted in the third's entry" [ "$(field TRACE_SNAPSHOT_SKIPPED "$E3")" = 1 ] && \
	[ "$(field TRACE_SNAPSHOT_SKIPPED "$E2")" = 0 ]
umount "$DIR"

# --- SIGKILL while a snapshot is written (KeepAfterSec=: the snapshot is
# open until then): the next start reports it torn, and it reads back with
# what was written
rm -rf "$DIR"
mark
conf torn 256K 30 0
run_tracerd "$TMP/torn.out" --config "$TMP/torn.conf" || { not_ok "recorder: tracerd starts"; exit 0; }
"$TMP/$NUMS" 100000 1 >/dev/null
kill -USR1 "$TRACERD_PID"
# killed once the window is written, while KeepAfterSec= keeps it open
for ((i = 0; i < 200; i++)); do
	"$TRACERD" --read "$DIR"/.tmp-snapshot-* 2>/dev/null | grep -q "fl_start=100000 " && break
	sleep 0.05
done
kill -KILL "$TRACERD_PID"; wait "$TRACERD_PID" 2>/dev/null
tmp=$(ls -d "$DIR"/.tmp-snapshot-* 2>/dev/null)
check "a SIGKILL leaves the snapshot under its temporary name" [ -n "$tmp" ] && [ -z "$(ls "$DIR" | grep '^snapshot-')" ]
run_tracerd "$TMP/torn2.out" --config "$TMP/torn.conf" || { not_ok "recorder: tracerd starts again"; exit 0; }
stop_tracerd
torn=$DIR/${tmp##*/.tmp-}.torn
check "the next start reports it torn" grep -aq "${tmp##*/}: a snapshot torn by a stop during its write" "$TMP/j.txt"
check "... renamed ${torn##*/}" [ -d "$torn" ] && [ ! -e "$tmp" ]
"$TRACERD" --read "$torn" >"$TMP/torn.txt" 2>"$TMP/torn.err"
first=$(head -1 "$TMP/torn.txt" | grep -oE 'fl_start=[0-9]+' | cut -d= -f2)
check "what it holds reads back: numbers $first to 100000" numbers "$TMP/torn.txt" "${first:-0}" 100000


# --- MaxSnapshots=2, MinIntervalSec=0: three snapshots beside the torn one
# above, an old one that cannot be deleted (it holds a directory: not
# tracerd's) and entries that are no snapshot. Each written snapshot deletes
# the oldest past 2, the torn one first; the one that cannot be deleted is
# said each time and stops nothing; the newest two are left, and nothing
# else is touched.
mark
stuck=$DIR/snapshot-20000101-000000.000-stuck
mkdir -p "$stuck/inner" "$DIR/snapshot-mine" "$TMP/linked"
touch "$DIR/notes.txt" "$DIR/snapshot-mine/file"
ln -s "$TMP/linked" "$DIR/snapshot-19990101-000000.000-link"
PORT=$(free_port)
conf max 256K 0 0 2 "$PORT"
run_tracerd "$TMP/max.out" --config "$TMP/max.conf" || { not_ok "recorder: tracerd starts with MaxSnapshots=2"; exit 0; }
for k in 1 2 3; do
	"$TMP/$NUMS" 1000 $((k * 1000)) >/dev/null
	kill -USR1 "$TRACERD_PID"
	wait_snapshots $k 20
	sleep 0.1
done
SNAPS=()
for k in 1 2 3; do SNAPS+=("$(field TRACE_SNAPSHOT "$(entries TRACE_SNAPSHOT | sed -n ${k}p)")"); done
for ((i = 0; i < 100; i++)); do
	curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/m.txt"
	[ "$(awk '$1 == "tracerd_recorder_snapshots_deleted_total" {print $2}' "$TMP/m.txt")" = 2 ] && break
	sleep 0.05
done
metric() { awk -v k="$1" '$1 == k {print $2}' "$TMP/m.txt"; }
check "metrics: 3 snapshots written, 2 deleted ($(metric tracerd_recorder_snapshots_total), $(metric tracerd_recorder_snapshots_deleted_total))" \
	[ "$(metric tracerd_recorder_snapshots_total)" = 3 ] && [ "$(metric tracerd_recorder_snapshots_deleted_total)" = 2 ]
stop_tracerd
check "tracerd exits 0" [ $? = 0 ]
check "three snapshots written" [ "$(entries TRACE_SNAPSHOT | wc -l)" = 3 ] && [ -n "${SNAPS[2]}" ]
left=$(cd "$DIR" && LC_ALL=C ls -d snapshot-[0-9]* | tr '\n' ' ')
check "the newest two are left, and the one that cannot be deleted ($left)" \
	[ "$left" = "snapshot-19990101-000000.000-link ${stuck##*/} ${SNAPS[1]##*/} ${SNAPS[2]##*/} " ]
check "the first snapshot and the torn one deleted" [ ! -e "${SNAPS[0]}" ] && [ ! -e "$torn" ]
check "nothing else touched: a file, a directory and a symlink not a snapshot's, its target" \
	[ -f "$DIR/notes.txt" ] && [ -f "$DIR/snapshot-mine/file" ] && [ -L "$DIR/snapshot-19990101-000000.000-link" ] && [ -d "$TMP/linked" ]
check "each deletion said once: the torn one, 1 in all" \
	[ "$(grep -c "recorder: deleted the old snapshot $torn, 1 in all, to keep \[Recorder\] MaxSnapshots=2" "$TMP/max.out.err")" = 1 ]
check "... the first snapshot, 2 in all" \
	[ "$(grep -c "recorder: deleted the old snapshot ${SNAPS[0]}, 2 in all, to keep \[Recorder\] MaxSnapshots=2" "$TMP/max.out.err")" = 1 ]
check "... and no other" [ "$(grep -c "recorder: deleted the old snapshot" "$TMP/max.out.err")" = 2 ]
check "the one that cannot be deleted: said with why, after each snapshot" \
	[ "$(grep -c "recorder: cannot delete the old snapshot $stuck to keep \[Recorder\] MaxSnapshots=2: Directory not empty" "$TMP/max.out.err")" = 3 ]
check "at stop: 3 snapshots written, 2 old ones deleted, said" \
	grep -aq "3 snapshots written, 0 failed, 2 old ones deleted (\[Recorder\] MaxSnapshots=2)" "$TMP/j.txt"
"$TRACERD" --read "${SNAPS[2]}" >"$TMP/max.txt" 2>/dev/null
check "the newest reads back" grep -q "fl_start=3000 " "$TMP/max.txt"

# --- MaxSnapshots=0: no limit, every snapshot kept
mark
conf all 256K 0 0 0
run_tracerd "$TMP/all.out" --config "$TMP/all.conf" || { not_ok "recorder: tracerd starts with MaxSnapshots=0"; exit 0; }
before=$(ls -d "$DIR"/snapshot-[0-9]* | wc -l)
for k in 1 2 3; do
	kill -USR1 "$TRACERD_PID"
	wait_snapshots $k 20
	sleep 0.1
done
stop_tracerd
check "tracerd exits 0" [ $? = 0 ]
after=$(ls -d "$DIR"/snapshot-[0-9]* | wc -l)
check "MaxSnapshots=0: every snapshot kept ($before and 3: $after)" [ "$after" = $((before + 3)) ]
check "... none deleted, said at stop" [ "$(grep -c "deleted the old snapshot" "$TMP/all.out.err")" = 0 ] && \
	grep -aq "3 snapshots written, 0 failed, 0 old ones deleted (\[Recorder\] MaxSnapshots=0)" "$TMP/j.txt"
