#!/usr/bin/env bash
# Records MaxUse= deletes before they are read, across a writer restart
# (tracerd stopped and started again on the same store): a writer that
# takes a directory over numbers its records on from where the directory's
# last file ends (stream=, first_record=, first_record_cpus=), so that
#   - --read counts a gap that spans the restart exactly (it said "how many
#     records it held is not known" before), and
#   - --trace-dat marks the deleted records on their CPUs, as trace-cmd and
#     KernelShark show missed events: CPU:N [n EVENTS DROPPED].
# The workload fires syscalls:sys_enter_sysfs under a comm of its own, from
# two processes pinned to CPUs 0 and 1; it numbers its calls (arg1).
. "$(dirname "$0")/../lib.sh"
need_root store_restart
EVENT=syscalls:sys_enter_sysfs
COMM=srs$$
cp "${FIRE:-$PWD/${BUILD:-build}/tests/tools/fire_syscall}" "$TMP/$COMM"
FIRE=$TMP/$COMM
DIR=$(mktemp -d /dev/shm/tracerd-store-restart.XXXXXX)
on_exit "rm -rf $DIR"
ncpu=$(nproc)
conf() { # conf DIR MAXUSE
	printf '[Daemon]\nOutput=store\nRingBufferSize=64M\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=%s\nMaxUse=%s\nMaxFileSize=1M\nCompression=none\n[Selection]\nName=st\nEvents=%s\nFilter=comm == "%s"\n' \
		"$1" "$2" "$EVENT" "$COMM" >"$TMP/c.conf"
}
# fire N: N calls, split between CPU 0 and the last CPU.
fire() {
	taskset -c 0 "$FIRE" $(($1 / 2)) >/dev/null &
	taskset -c $((ncpu - 1)) "$FIRE" $(($1 - $1 / 2)) >/dev/null
	wait $!
}
# run N [FIRE]: a tracerd that records N calls (fire), then stops; its
# delivered count in DELIVERED.
run() {
	DELIVERED=
	start_tracerd_store "$TMP/c.conf" "$TMP/run" || return 1
	${2:-fire} "$1"
	stop_tracerd
	DELIVERED=$(sed -n "s/.* $EVENT delivered=\([0-9]*\).*/\1/p" "$TMP/run.err" | head -1)
}
fire1() { "$FIRE" "$1" >/dev/null; }	# one process: arg1 numbers all
run1() { run "$1" fire1; }
stream_of() { grep -a -o -m1 'stream=[0-9a-f]*' "$1" | head -1; }

# --- --trace-dat: a gap across the restart, marked per CPU -----------------
# Two runs; then the last file of the first run is removed, as MaxUse=
# removes a file a reader listed but had not read yet (MaxUse= deletes the
# oldest first: a reader meets such a gap when its writer deletes what it
# listed; removed here, the gap is there at once, and the removed file is
# the oracle: its records per CPU, read before it goes).
conf "$DIR/dat" 1G
N1=120000 N2=60000
run $N1; d1=$DELIVERED
files1=$(ls "$DIR"/dat/*.tstore | wc -l)
run $N2; d2=$DELIVERED
ls "$DIR"/dat/*.tstore >"$TMP/files"
last1=$(sed -n "${files1}p" "$TMP/files")
first2=$(sed -n "$((files1 + 1))p" "$TMP/files")
note "run 1: $d1 delivered in $files1 files; run 2: $d2; $(wc -l <"$TMP/files") files"
check "both runs delivered every call ($d1 = $N1, $d2 = $N2)" [ "$d1" = $N1 -a "$d2" = $N2 ]
check "the second run's files go on with the first run's stream ($(stream_of "$last1"), $(stream_of "$first2"))" \
	[ -n "$(stream_of "$last1")" -a "$(stream_of "$last1")" = "$(stream_of "$first2")" ]
check "the first run has more than one file ($files1)" [ "$files1" -gt 1 ]
"$TRACERD" --read "$last1" | grep -oE '\[[0-9]{3}\]' | tr -d '[]' | sort -n | uniq -c |
	awk '{ printf "%d %d\n", $2, $1 }' >"$TMP/want"
gone=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/want")
note "removed $(basename "$last1"): $gone records, per CPU: $(tr '\n' ';' <"$TMP/want")"
rm "$last1"
"$TRACERD" --read "$DIR/dat" --trace-dat "$TMP/gap.dat" 2>"$TMP/dat.err"
rc=$?
[ -n "${KEEP:-}" ] && cp "$TMP/gap.dat" "$TMP/dat.err" "$KEEP/"
sed 's/^/# /' "$TMP/dat.err"
check "--trace-dat exits 1: records were not read ($rc)" [ "$rc" = 1 ]
check "--trace-dat reports the gap across the restart exactly ($gone records, up to the second run's first file)" \
	grep -q "the files after it were deleted before they were read: $gone records not read, up to $first2\$" "$TMP/dat.err"
check "and says it marked them ($gone)" grep -q ", $gone records deleted (MaxUse=) before they were read marked where they were" "$TMP/dat.err"
trace-cmd report -N "$TMP/gap.dat" >"$TMP/gap.report" 2>/dev/null
grep -E '^CPU:[0-9]+ \[[0-9]+ EVENTS DROPPED\]$' "$TMP/gap.report" |
	sed -E 's/^CPU:([0-9]+) \[([0-9]+) .*/\1 \2/' | sort -n >"$TMP/got"
note "trace-cmd report: $(tr '\n' ';' <"$TMP/got")"
check "trace-cmd report marks them on their CPUs, CPU:N [n EVENTS DROPPED], n as the removed file held" \
	diff "$TMP/want" "$TMP/got"
shown=$(grep -c 'sys_enter_sysfs:' "$TMP/gap.report")
check "every other record is in the trace.dat ($shown + $gone = $((N1 + N2)))" [ $((shown + gone)) = $((N1 + N2)) ]
# The marks stand where the records were: on each CPU, after the first
# run's last record there and before the second run's first.
t2=$("$TRACERD" --read "$first2" | head -1 | grep -oE ' [0-9]+\.[0-9]+:' | tr -d ' :')
python3 - "$TMP/gap.report" "$t2" <<'PY' >"$TMP/order"
import re, sys
t2 = float(sys.argv[2])
prev, pending, ok, bad = {}, {}, 0, 0
for line in open(sys.argv[1]):
    m = re.match(r"CPU:(\d+) \[\d+ EVENTS DROPPED\]", line)
    if m:
        pending[int(m.group(1))] = prev.get(int(m.group(1)), 0.0)
        continue
    m = re.search(r"\[(\d+)\]\s+(\d+\.\d+):", line)
    if m:
        cpu, ts = int(m.group(1)), float(m.group(2))
        if cpu in pending:
            if pending.pop(cpu) < t2 <= ts: ok += 1
            else: bad += 1
        prev[cpu] = ts
print(ok, bad + len(pending))
PY
read -r mk_ok mk_bad <"$TMP/order"
check "each mark stands between the runs on its CPU ($mk_ok marks so, $mk_bad not; the second run from $t2)" \
	[ "$mk_ok" = "$(wc -l <"$TMP/want")" -a "$mk_bad" = 0 ]

# --- --read: a gap across the restart, counted -----------------------------
# The reader lists the files while the second run writes, then stalls (its
# output is a pipe nobody reads) while MaxUse= deletes the first run's files
# and more; then it reads on. The first run's last file is gone, and the
# next file of the stream is the second run's: the gap is counted exactly.
conf "$DIR/rd" 3M
N1=150000 N2=300000
run1 $N1; d1=$DELIVERED
start_tracerd_store "$TMP/c.conf" "$TMP/run2" || { not_ok "tracerd starts again"; exit 0; }
"$FIRE" 1000 >/dev/null
sleep 0.3	# the second run's first file is there when the reader lists
mkfifo "$TMP/pipe"
exec 3<>"$TMP/pipe"
"$TRACERD" --read "$DIR/rd" >"$TMP/pipe" 2>"$TMP/rd.err" 3>&- &
reader=$!
on_exit "kill $reader"
sleep 0.5
ls "$DIR"/rd/*.tstore >"$TMP/listed"	# as the reader listed them: the writer is idle
"$FIRE" $((N2 - 1000)) >/dev/null
stop_tracerd
d2=$(sed -n "s/.* $EVENT delivered=\([0-9]*\).*/\1/p" "$TMP/run2.err" | head -1)
deleted=$(sed -n 's/.*deleted [0-9]* old files, \([0-9]*\) in all.*/\1/p' "$TMP/run2.err" | tail -1)
# The reading end opened here, before the reader may end: a cat that
# opened the fifo after every writer was gone would wait for one forever.
exec 4<"$TMP/pipe"
cat <&4 >"$TMP/shown.txt" 3>&- 4>&- &
cat_pid=$!
exec 4<&-
wait "$reader"
rc=$?
exec 3>&-
wait "$cat_pid"
sed 's/^/# /' "$TMP/rd.err" | head -8
shown=$(grep -c 'sys_sysfs(option: 3' "$TMP/shown.txt")
gaps=$(sed -n 's/.*: \([0-9]*\) records not read, up to .*/\1/p' "$TMP/rd.err" | awk '{s += $1} END {print s + 0}')
# The reader's first record: where its count begins (what MaxUse= deleted
# before it listed the directory is not its to count).
first_arg=$(head -1 "$TMP/shown.txt" | sed -n 's/.*arg1: \([0-9a-fx]*\).*/\1/p')
first_arg=$((first_arg))	# one process numbers run 1's calls
# What the second run wrote into files the reader never listed (not its to read):
ls "$DIR"/rd/*.tstore | grep -vxF -f "$TMP/listed" >"$TMP/unlisted"
late=$(xargs -r "$TRACERD" --read <"$TMP/unlisted" 2>/dev/null | grep -c 'sys_sysfs(option: 3')
note "run 1: $d1, run 2: $d2 delivered; files deleted: ${deleted:-0}; reader: rc $rc, from call $first_arg, $shown shown, gaps $gaps; $late in $(wc -l <"$TMP/unlisted") files made after it listed"
check "MaxUse= deleted files the reader had listed (${deleted:-0})" [ "${deleted:-0}" -gt 2 ]
check "no gap of a count not known" bash -c "! grep -q 'not known' '$TMP/rd.err'"
check "every record from the reader's first to the files made after it listed is shown or in a reported gap ($shown + $gaps = $((d1 - first_arg + d2 - late)))" \
	[ $((shown + gaps)) = $((d1 - first_arg + d2 - late)) -a "$d1" = $N1 -a "$d2" = $N2 -a "$late" -gt 0 ]
check "--read exits 1: records were not read ($rc)" [ "$rc" = 1 ]
