#!/usr/bin/env bash
# The event store under the failures it must survive: tracerd killed with
# SIGKILL in a burst (what was written reads back, no malformed line),
# flipped bytes in a file (that block is reported and skipped, every other
# one read), a full disk (every record counted exactly, tracerd stays up and
# resumes when space returns), rotation and retention (MaxUse= holds,
# nothing but the deleted files' records lost). The workload fires
# syscalls:sys_enter_sysfs with arg1 numbering the calls, so that order and
# gaps show in what is read back.
. "$(dirname "$0")/../lib.sh"
need_root store
HERE=$(cd "$(dirname "$0")/.." && pwd)
EVENT=syscalls:sys_enter_sysfs
COMM=fire$$
fire_as "$COMM"
LINE_RE='^ *[^ ].*-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: sys_sysfs\(option: 3, arg1: (0x[0-9a-f]+|[0-9]), arg2: 0\)$'

# conf NAME DIR [STORE-LINES]
conf() {
	printf '[Daemon]\nOutput=store\nRingBufferSize=64M\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=%s\n%b[Selection]\nName=st\nEvents=%s\nFilter=comm == "%s"\n' \
		"$2" "${3:-}" "$EVENT" "$COMM" >"$TMP/$1.conf"
}
# Sets D L S E from the summary tracerd prints at exit.
summary() {
	local sum
	sum=$(grep -m1 " $EVENT delivered=" "$1")
	D=$(sed -n 's/.* delivered=\([0-9]*\).*/\1/p' <<<"$sum")
	L=$(sed -n 's/.* lost=\([0-9]*\).*/\1/p' <<<"$sum")
	S=$(sed -n 's/.* suppressed=\([0-9]*\).*/\1/p' <<<"$sum")
	E=$(sed -n 's/.* sink_errors=\([0-9]*\).*/\1/p' <<<"$sum")
}
# The arg1 numbers read back are 0..N-1 in order, or a suffix of it ($2: first expected).
in_order() {
	python3 -c '
import sys
want = int(sys.argv[1])
for line in open(sys.argv[2]):
    a = line.split("arg1: ")[1].split(",")[0]
    v = int(a, 16) if a.startswith("0x") else int(a)
    if v != want:
        print("# arg1 %d where %d was due" % (v, want)); sys.exit(1)
    want += 1
' "$2" "$1"
}

# --- a clean run, then flipped bytes in the middle of its file
DIR=$(mktemp -d /dev/shm/tracerd-store.XXXXXX)
on_exit "rm -rf $DIR"
conf clean "$DIR/clean"
N=300000
if start_tracerd_store "$TMP/clean.conf" "$TMP/clean.out"; then
	read -r _ fired _ < <("$FIRE" $N)
	stop_tracerd
	check "clean: tracerd exits 0" [ $? = 0 ]
	summary "$TMP/clean.out.err"
	"$TRACERD" --read "$DIR/clean" >"$TMP/clean.txt" 2>"$TMP/clean.rerr"
	check "clean: --read exits 0" [ $? = 0 ]
	lines=$(wc -l <"$TMP/clean.txt")
	note "clean: fired=$fired delivered=$D lost=$L sink_errors=$E read=$lines, $(du -b "$DIR"/clean/*.tstore | awk '{s += $1} END {print s}') bytes"
	check "clean: every delivered record reads back ($lines of $D)" [ "$lines" = "$D" ]
	check "clean: no ring-buffer loss at this rate" [ "$L" = 0 ]
	check "clean: in the order fired" in_order "$TMP/clean.txt" 0
	check "clean: every line well-formed" [ "$(grep -cEv "$LINE_RE" "$TMP/clean.txt")" = 0 ]
	"$TRACERD" --read "$DIR/clean" --filter 'arg1 < 100 || arg1 >= 299990' >"$TMP/filt.txt"
	check "clean: --filter on read keeps 110 records" [ "$(wc -l <"$TMP/filt.txt")" = 110 ]
	"$TRACERD" --read "$DIR/clean" --events 'sched:*' >"$TMP/none.txt"
	check "clean: --events 'sched:*' keeps none" [ ! -s "$TMP/none.txt" ]
	"$TRACERD" --read "$DIR/clean" --since -1h --until now --events 'syscalls:sys_enter_sys*' >"$TMP/since.txt"
	check "clean: --since -1h --until now keeps all" [ "$(wc -l <"$TMP/since.txt")" = "$lines" ]
	"$TRACERD" --read "$DIR/clean" --since "@$(($(date +%s) + 100))" >"$TMP/future.txt"
	check "clean: --since a time to come keeps none" [ ! -s "$TMP/future.txt" ]
	# --since/--until take the timestamps the lines show (monotonic seconds),
	# the last digit whole: lines 1000 to 2000, and those of the same µs.
	t1=$(sed -n 1000p "$TMP/clean.txt" | grep -oE '[0-9]+\.[0-9]{6}:' | tr -d :)
	t2=$(sed -n 2000p "$TMP/clean.txt" | grep -oE '[0-9]+\.[0-9]{6}:' | tr -d :)
	"$TRACERD" --read "$DIR/clean" --since "$t1" --until "$t2" >"$TMP/mono.txt" 2>"$TMP/mono.err"
	rc=$?
	check "clean: --since $t1 --until $t2 (as printed) exits 0 ($rc: $(head -1 "$TMP/mono.err"))" [ $rc = 0 ]
	awk -v a="$t1" -v b="$t2" '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]:$/) { t = substr($i, 1, length($i) - 1) + 0; if (t >= a + 0 && t <= b + 0) print; break } }' \
		"$TMP/clean.txt" >"$TMP/mono.want"
	check "clean: --since/--until in monotonic seconds keep exactly those lines ($(wc -l <"$TMP/mono.txt") of $(wc -l <"$TMP/mono.want"), >= 1001)" \
		eval 'cmp -s "$TMP/mono.txt" "$TMP/mono.want" && [ "$(wc -l <"$TMP/mono.want")" -ge 1001 ]'
	# A fractional wall-clock time: from record 5000's µs on.
	"$TRACERD" --read "$DIR/clean" --json | python3 -c '
import json, sys
us = [json.loads(l)["TRACE_TIME_REALTIME_USEC"] for l in sys.stdin]
r = int(us[4999])
print(r, sum(1 for u in us if int(u) >= r))' >"$TMP/wall.want"
	read -r r want <"$TMP/wall.want"
	wall=$(date -d "@$((r / 1000000))" '+%Y-%m-%d %H:%M:%S').$(printf %06d $((r % 1000000)))
	"$TRACERD" --read "$DIR/clean" --since "$wall" >"$TMP/wall.txt"
	check "clean: --since '$wall' keeps the records from that µs on ($(wc -l <"$TMP/wall.txt") of $want)" \
		[ "$(wc -l <"$TMP/wall.txt")" = "$want" ]
	"$TRACERD" --read "$DIR/clean" --since "$t2" --until "$t1" >"$TMP/rev.txt" 2>"$TMP/rev.err"
	rc=$?
	check "clean: --until before --since is an error ($rc: $(head -1 "$TMP/rev.err"))" \
		eval '[ $rc = 2 ] && [ ! -s "$TMP/rev.txt" ] && grep -q -- "--until is before --since" "$TMP/rev.err"'
	"$TRACERD" --read "$DIR/clean" --json | head -1 >"$TMP/one.json"
	check "clean: --json: the journal's fields, symbolized arguments" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))
need = {"MESSAGE", "PRIORITY", "TRACE_EVENT", "TRACE_CLASS", "TRACE_SELECTION", "TRACE_CPU", "TRACE_PID",
        "TRACE_TID", "TRACE_COMM", "TRACE_TIMESTAMP_NS", "TRACE_TIME_REALTIME_USEC", "TRACE_OPTION", "TRACE_ARG1"}
sys.exit(0 if need <= set(e) and e["TRACE_EVENT"] == "syscalls:sys_enter_sysfs" and e["TRACE_SELECTION"] == "st" else 1)
' "$TMP/one.json"
	f=$(ls "$DIR"/clean/*.tstore | head -1)
	read -r off n < <(python3 "$HERE/tools/store_chunks.py" flip "$f")
	"$TRACERD" --read "$DIR/clean" >"$TMP/flip.txt" 2>"$TMP/flip.err"
	check "flipped: --read exits 1 (something was skipped)" [ $? = 1 ]
	check "flipped: the block at offset $off is reported" grep -q "$f: offset $off: corrupt chunk" "$TMP/flip.err"
	check "flipped: every other block reads back ($(wc -l <"$TMP/flip.txt") = $lines - $n)" \
		[ "$(wc -l <"$TMP/flip.txt")" = $((lines - n)) ]
	check "flipped: every line well-formed" [ "$(grep -cEv "$LINE_RE" "$TMP/flip.txt")" = 0 ]
else
	not_ok "clean: tracerd starts with Output=store"
fi

# --- --follow: records show up while tracerd writes them
conf follow "$DIR/follow"
if start_tracerd_store "$TMP/follow.conf" "$TMP/follow.out"; then
	"$TRACERD" --read "$DIR/follow" --follow >"$TMP/follow.txt" 2>"$TMP/follow.err" &
	reader=$!
	on_exit "kill $reader"
	"$FIRE" 5000 >/dev/null
	for ((i = 0; i < 50; i++)); do [ "$(wc -l <"$TMP/follow.txt")" -ge 5000 ] && break; sleep 0.1; done
	check "follow: the 5000 records arrive while tracerd runs ($(wc -l <"$TMP/follow.txt"))" \
		[ "$(wc -l <"$TMP/follow.txt")" = 5000 ]
	check "follow: the reader is still waiting for more" kill -0 "$reader"
	kill "$reader"
	stop_tracerd
else
	not_ok "follow: tracerd starts"
fi

# --- SIGKILL in a burst
conf kill "$DIR/kill"
if start_tracerd_store "$TMP/kill.conf" "$TMP/kill.out"; then
	"$FIRE" 3000000 >/dev/null &
	fire=$!
	sleep 1
	kill -KILL "$TRACERD_PID"
	wait "$fire"
	"$TRACERD" --read "$DIR/kill" >"$TMP/kill.txt" 2>"$TMP/kill.err"
	rc=$?
	note "killed: $(wc -l <"$TMP/kill.txt") records read back; --read: rc=$rc $(head -2 "$TMP/kill.err")"
	check "killed: records read back" [ "$(wc -l <"$TMP/kill.txt")" -gt 0 ]
	# Ring losses are reported, not corruption: a slow writer (TSan) loses
	# some of the burst, counted, and --read says how many.
	check "killed: nothing corrupt, at most a torn tail" \
		[ "$(grep -vc -e 'torn chunk' -e 'damaged chunks skipped' \
			-e 'records were lost in the ring buffer while these were written' "$TMP/kill.err")" = 0 ]
	check "killed: every line well-formed" [ "$(grep -cEv "$LINE_RE" "$TMP/kill.txt")" = 0 ]
	check "killed: in the order fired, no gap" in_order "$TMP/kill.txt" 0
else
	not_ok "kill: tracerd starts"
fi

# --- a full disk: 1 MiB of tmpfs, grown to 64 MiB halfway. Uncompressed:
# compressed, these records take less than a byte each.
mkdir -p "$TMP/full"
if mount -t tmpfs -o size=1M tracerd-full "$TMP/full"; then
	on_exit "umount -l $TMP/full"
	conf full "$TMP/full/store" 'MaxUse=0\nCompression=none\n'
	N=600000
	if start_tracerd_store "$TMP/full.conf" "$TMP/full.out"; then
		"$FIRE" $N 200000 >"$TMP/full.fire" &
		fire=$!
		sleep 1.5
		mount -o remount,size=64M "$TMP/full"
		wait "$fire"
		sleep 0.5
		check "full: tracerd still runs" kill -0 "$TRACERD_PID"
		stop_tracerd
		check "full: tracerd exits 0" [ $? = 0 ]
		summary "$TMP/full.out.err"
		"$TRACERD" --read "$TMP/full/store" >"$TMP/full.txt" 2>"$TMP/full.rerr"
		rc=$?
		lines=$(wc -l <"$TMP/full.txt")
		note "full: N=$N delivered=$D lost=$L suppressed=$S sink_errors=$E read=$lines rc=$rc"
		grep -E "store: " "$TMP/full.out.err" | sed 's/^/# /'
		check "full: delivered + lost + sink errors == N" [ $((D + L + S + E)) = $N ]
		check "full: the full disk cost records (sink errors $E)" [ "$E" -gt 0 ]
		check "full: logged once while full" [ "$(grep -c 'store: cannot write' "$TMP/full.out.err")" = 1 ]
		check "full: resumed when space returned" grep -q 'store: writing to .* again' "$TMP/full.out.err"
		check "full: what was delivered reads back, exactly ($lines of $D)" [ "$lines" = "$D" ]
		check "full: --read finds nothing damaged" [ "$rc" = 0 ]
		check "full: every line well-formed" [ "$(grep -cEv "$LINE_RE" "$TMP/full.txt")" = 0 ]
	else
		not_ok "full: tracerd starts"
	fi
else
	not_ok "full: mount a small tmpfs"
fi

# --- rotation and retention under load
conf rot "$DIR/rot" 'MaxUse=3M\nMaxFileSize=1M\nCompression=none\n'
N=1000000
if start_tracerd_store "$TMP/rot.conf" "$TMP/rot.out"; then
	max=0
	"$FIRE" $N 250000 >/dev/null &
	fire=$!
	while kill -0 "$fire" 2>/dev/null; do
		u=$(du -b "$DIR"/rot/*.tstore 2>/dev/null | awk '{s += $1} END {print s + 0}')
		[ "$u" -gt "$max" ] && max=$u
		sleep 0.1
	done
	stop_tracerd
	summary "$TMP/rot.out.err"
	"$TRACERD" --read "$DIR/rot" >"$TMP/rot.txt" 2>"$TMP/rot.rerr"
	rc=$?
	lines=$(wc -l <"$TMP/rot.txt")
	deleted=$(sed -n 's/.*deleted [0-9]* old files, \([0-9]*\) in all.*/\1/p' "$TMP/rot.out.err" | tail -1)
	note "rotation: N=$N delivered=$D lost=$L sink_errors=$E read=$lines files=$(ls "$DIR"/rot | wc -l) deleted=${deleted:-0} largest use=$max"
	check "rotation: MaxUse= holds under load ($max <= 3 MiB)" [ "$max" -le $((3 << 20)) ]
	check "rotation: files were deleted and counted (${deleted:-0})" [ "${deleted:-0}" -gt 0 ]
	check "rotation: nothing lost but the deleted files" [ "$((D + L + S + E))" = "$N" -a "$E" = 0 -a "$L" = 0 ]
	check "rotation: --read exits 0" [ "$rc" = 0 ]
	check "rotation: what is left is the newest records, in order, up to the last" in_order "$TMP/rot.txt" $((N - lines))
else
	not_ok "rotation: tracerd starts"
fi

# --- per-selection Output=: one selection into the store, one to stdout
# ([Daemon] Output=), both of the same event: each gets every record once.
printf '[Daemon]\nOutput=stdout\nStatsIntervalSec=0\n[Store]\nDirectory=%s\n[Selection]\nName=hot\nEvents=%s\nFilter=comm == "%s"\nOutput=store\n[Selection]\nName=low\nEvents=%s\nFilter=comm == "%s"\n' \
	"$DIR/route" "$EVENT" "$COMM" "$EVENT" "$COMM" >"$TMP/route.conf"
N=20000
if start_tracerd_store "$TMP/route.conf" "$TMP/route.out"; then
	read -r pid _ < <("$FIRE" $N)
	stop_tracerd
	check "route: tracerd exits 0" [ $? = 0 ]
	"$TRACERD" --read --json "$DIR/route" >"$TMP/route.json"
	n_store=$(grep -c "\"TRACE_SELECTION\":\"hot\"" "$TMP/route.json")
	n_other=$(grep -c "\"TRACE_SELECTION\":\"low\"" "$TMP/route.json")
	n_out=$(grep -c -- "-$pid *\[[0-9]*\] .*: sys_sysfs(option: 3, " "$TMP/route.out")
	note "route: store has $n_store of selection hot, $n_other of low; stdout has $n_out"
	check "route: Output=store selection: every record in the store, once" [ "$n_store" = $N ]
	check "route: the other selection: every record on stdout, once, none in the store" \
		[ "$n_out" = $N -a "$n_other" = 0 ]
else
	not_ok "route: tracerd starts"
fi

# --- reload: [Store] and [Daemon] Output= apply at once. A new store
# directory gets the records from the reload on, and the running store
# writes out all it was given and closes; a directory that cannot be made
# fails the reload, which keeps the running outputs; Output=stdout sends the
# next records there. No record is lost or written twice on the way.
conf reload "$DIR/reload"
# systemd's side of a reload: RELOADING=1, then READY=1 once it is done.
notify_listen "$TMP/notify" 120 "$TMP/notified"
reload_to() { # N: sends SIGHUP, waits for the Nth READY=1 after the start's
	kill -HUP "$TRACERD_PID"
	for ((i = 0; i < 200; i++)); do
		[ "$(notify_count "$TMP/notified" READY=1)" -gt "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
if NOTIFY_SOCKET=$TMP/notify start_tracerd_store "$TMP/reload.conf" "$TMP/reload.out"; then
	"$FIRE" 1000 >/dev/null
	conf reload "$DIR/reload-new" 'MaxUse=1G\n'
	sed -i 's/^RingBufferSize=64M$/RingBufferSize=32M/' "$TMP/reload.conf"
	check "reload: a new [Store] Directory= is taken" reload_to 1
	"$FIRE" 1000 >/dev/null
	: >"$TMP/not-a-dir"
	conf reload "$TMP/not-a-dir/store"
	check "reload: one that fails completes too" reload_to 2
	"$FIRE" 1000 >/dev/null
	conf reload "$DIR/reload-new" 'MaxUse=1G\n'
	sed -i 's/^Output=store$/Output=stdout/' "$TMP/reload.conf"
	check "reload: [Daemon] Output=stdout is taken" reload_to 3
	"$FIRE" 1000 >/dev/null
	stop_tracerd
	check "reload: tracerd exits 0" [ $? = 0 ]
	summary "$TMP/reload.out.err"
	check "reload: 4000 delivered, 0 lost, 0 sink errors (delivered=$D lost=$L sink_errors=$E)" \
		[ "$D" = 4000 -a "$L" = 0 -a "$E" = 0 ]
	check "reload: a store directory that cannot be made fails the reload, and says why" \
		grep -q "cannot open the store output: $TMP/not-a-dir/store: Not a directory" "$TMP/reload.out.err"
	check "reload: it says RingBufferSize= waits for a restart" \
		grep -q "RingBufferSize= and WakeupBytes= take effect on restart only" "$TMP/reload.out.err"
	"$TRACERD" --read "$DIR/reload" >"$TMP/reload.txt" 2>"$TMP/reload.rerr"
	rc_old=$?
	"$TRACERD" --read "$DIR/reload-new" >"$TMP/reload-new.txt" 2>"$TMP/reload-new.rerr"
	rc_new=$?
	n_old=$(grep -cE "$LINE_RE" "$TMP/reload.txt")
	n_new=$(grep -cE "$LINE_RE" "$TMP/reload-new.txt")
	n_out=$(grep -cE "$LINE_RE" "$TMP/reload.out")
	check "reload: the first store holds the records before the reload, sealed ($n_old of 1000, --read exit $rc_old)" \
		[ "$n_old" = 1000 -a "$rc_old" = 0 ]
	check "reload: the new store holds the next ones, the failed reload's too ($n_new of 2000, --read exit $rc_new)" \
		[ "$n_new" = 2000 -a "$rc_new" = 0 ]
	check "reload: the last records went to stdout ($n_out of 1000)" [ "$n_out" = 1000 ]
	check "reload: nothing was made under the path that failed" [ ! -e "$TMP/not-a-dir/store" ]
else
	not_ok "reload: tracerd starts"
fi

# --- SyncIntervalSec=: written blocks reach the disk within the interval
# after a burst, also when records stop coming, and nothing is synced while
# nothing was written; with 0, only at exit. The kernel is the witness: a
# tracefs instance records tracerd's fdatasync(2) and fsync(2) calls.
make_instance "tracerd-store-$$" || { not_ok "sync: tracefs instance"; exit 0; }
on_exit "echo 0 > $INSTANCE/events/enable"
echo 1 >"$INSTANCE/events/syscalls/sys_enter_fdatasync/enable"
echo 1 >"$INSTANCE/events/syscalls/sys_enter_fsync/enable"
# syncs SYSCALL: how many times tracerd's threads ($TIDS) called it so far
syncs() {
	awk -v call=": $1(" -v tids=" $TIDS " '{
		for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) break
		tid = $(i - 1); sub(/.*-/, "", tid)
		if (index(tids, " " tid " ") && index($0, call)) n++
	} END { print n + 0 }' "$INSTANCE/trace"
}
# sync_run NAME SECONDS: tracerd with SyncIntervalSec=SECONDS, 1000 records,
# 2.5 s for them to be written (and synced); sets TIDS.
sync_run() {
	conf "$1" "$DIR/$1" "SyncIntervalSec=$2\\n"
	start_tracerd_store "$TMP/$1.conf" "$TMP/$1.out" || return 1
	TIDS=$(ls /proc/"$TRACERD_PID"/task | tr '\n' ' ')
	echo >"$INSTANCE/trace"
	"$FIRE" 1000 >/dev/null
	sleep 2.5
}
if sync_run sync 1; then
	a=$(syncs sys_fdatasync) d=$(syncs sys_fsync)
	sleep 2
	b=$(syncs sys_fdatasync)
	"$FIRE" 1000 >/dev/null
	sleep 2.5
	c=$(syncs sys_fdatasync)
	stop_tracerd
	note "sync: fdatasync after the first burst $a, 2 s idle later $b, after the second burst $c; directory fsync $d"
	check "sync: written blocks are synced within SyncIntervalSec=1 once records stop ($a)" [ "$a" -ge 1 ]
	check "sync: the new file's directory is synced ($d)" [ "$d" -ge 1 ]
	check "sync: nothing is synced while nothing was written ($a, then $b)" [ "$b" = "$a" ]
	check "sync: the next burst is synced too ($b, then $c)" [ "$c" -gt "$b" ]
else
	not_ok "sync: tracerd starts"
fi
if sync_run nosync 0; then
	a=$(syncs sys_fdatasync)
	stop_tracerd
	b=$(syncs sys_fdatasync)
	check "sync: SyncIntervalSec=0 syncs nothing while running ($a)" [ "$a" = 0 ]
	check "sync: SyncIntervalSec=0 syncs the file at exit ($b)" [ "$b" -ge 1 ]
else
	not_ok "sync: SyncIntervalSec=0, tracerd starts"
fi
