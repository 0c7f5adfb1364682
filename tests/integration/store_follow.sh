#!/usr/bin/env bash
# --read --follow behind a fast writer whose MaxUse= deletes files before
# the follower reads them (MaxUse=3M, MaxFileSize=1M, a stalled reader):
# every record is either shown or counted in a gap reported on stderr with
# its file, exactly; and the follower holds no deleted file open, so that it
# pins no disk beyond MaxUse= (/proc/PID/fd, "(deleted)"). The workload
# numbers its calls (arg1), so the records shown tell where the gaps are.
# The follower is also stopped while the writer begins, so that the
# writer's first files are deleted before it ever lists them: those are
# reported too (their names are not known, their records are).
. "$(dirname "$0")/../lib.sh"
need_root store_follow
EVENT=syscalls:sys_enter_sysfs
COMM=fire$$
fire_as "$COMM"
DIR=$(mktemp -d /dev/shm/tracerd-store-follow.XXXXXX)
on_exit "rm -rf $DIR"
printf '[Daemon]\nOutput=store\nRingBufferSize=64M\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=%s\nMaxUse=3M\nMaxFileSize=1M\nCompression=none\n[Selection]\nName=st\nEvents=%s\nFilter=comm == "%s"\n' \
	"$DIR/st" "$EVENT" "$COMM" >"$TMP/f.conf"
N=1500000

# deleted_held PID: "files bytes" of deleted files PID holds open
deleted_held() {
	local f n=0 b=0 s
	for f in /proc/"$1"/fd/*; do
		if [[ "$(readlink "$f" 2>/dev/null)" == *"(deleted)" ]]; then
			s=$(stat -L -c %s "$f" 2>/dev/null) || continue
			n=$((n + 1)) b=$((b + s))
		fi
	done
	echo "$n $b"
}

if ! start_tracerd_store "$TMP/f.conf" "$TMP/f.out"; then
	not_ok "tracerd starts with Output=store"
	exit 0
fi
# The follower writes into a pipe that nobody reads for 4 s: it falls
# behind while the writer rotates and deletes.
# (The test holds the pipe open too, so that the follower's open of it does
# not wait for the reading end.)
mkfifo "$TMP/pipe"
exec 3<>"$TMP/pipe"
(sleep 4; exec cat "$TMP/pipe" >"$TMP/shown.txt" 3>&-) &
drain=$!
on_exit "kill $drain"
"$TRACERD" --read --follow "$DIR/st" >"$TMP/pipe" 2>"$TMP/follow.err" 3>&- &
reader=$!
on_exit "kill $reader; kill -CONT $reader"
sleep 0.5
# The follower, which saw the directory empty, is stopped while the writer
# begins: MaxUse= deletes the writer's first files before it looks again
# (as a loaded machine did), and it never learns their names.
kill -STOP "$reader"
"$FIRE" $N 300000 >/dev/null 3>&- &
fire=$!
sleep 1.5
kill -CONT "$reader"
max_n=0 max_b=0 samples=0
while kill -0 "$fire" 2>/dev/null || [ $samples -lt 60 ]; do
	read -r n b < <(deleted_held "$reader")
	[ "$n" -gt "$max_n" ] && max_n=$n
	[ "$b" -gt "$max_b" ] && max_b=$b
	samples=$((samples + 1))
	sleep 0.1
done
stop_tracerd
summary=$(grep -m1 " $EVENT delivered=" "$TMP/f.out.err")
D=$(sed -n 's/.* delivered=\([0-9]*\).*/\1/p' <<<"$summary")
deleted=$(sed -n 's/.*deleted [0-9]* old files, \([0-9]*\) in all.*/\1/p' "$TMP/f.out.err" | tail -1)
# The follower catches up with what is left.
for ((i = 0; i < 150; i++)); do
	shown=$(grep -c 'sys_sysfs(option: 3' "$TMP/shown.txt" 2>/dev/null)
	gaps=$(sed -n 's/.*: \([0-9]*\) records not read, up to .*/\1/p' "$TMP/follow.err" | awk '{s += $1} END {print s + 0}')
	[ $((${shown:-0} + gaps)) -ge "${D:-0}" ] && break
	sleep 0.2
done
sleep 0.5
read -r n_end _ < <(deleted_held "$reader")
kill "$reader"
wait "$reader" 2>/dev/null
exec 3>&-	# the drain's cat sees the end
wait "$drain" 2>/dev/null
shown=$(grep -c 'sys_sysfs(option: 3' "$TMP/shown.txt")
[ -n "${KEEP:-}" ] && cp "$TMP/shown.txt" "$TMP/follow.err" "$KEEP"/
gaps=$(sed -n 's/.*: \([0-9]*\) records not read, up to .*/\1/p' "$TMP/follow.err" | awk '{s += $1} END {print s + 0}')
n_gaps=$(grep -c 'records not read, up to ' "$TMP/follow.err")
note "N=$N delivered=$D files deleted=${deleted:-0}; follower: shown=$shown, $n_gaps gaps of $gaps records; held at most $max_n deleted files ($max_b bytes), $n_end at the end"
head -3 "$TMP/follow.err" | sed 's/^/# /'
check "the writer deleted files while the follower was behind (${deleted:-0})" [ "${deleted:-0}" -gt 3 ]
n_head=$(grep -c "^tracerd: $DIR/st: its writer's first files were deleted before they were read: [0-9]* records not read, up to $DIR/st/tracerd-[0-9a-f-]*\.tstore\$" "$TMP/follow.err")
check "the writer's first files, deleted while the follower was stopped, are reported once ($n_head)" [ "$n_head" = 1 ]
check "the follower reported gaps, each with its file ($n_gaps)" \
	[ "$n_gaps" -gt 1 -a "$(grep -c "^tracerd: $DIR/st/tracerd-[0-9a-f-]*\.tstore: deleted before it was read" "$TMP/follow.err")" = $((n_gaps - n_head)) ]
check "every record is shown or in a reported gap ($shown + $gaps = $D)" [ $((shown + gaps)) = "$D" -a "$D" = $N ]
check "nothing else on stderr" [ "$(grep -vc 'records not read, up to ' "$TMP/follow.err")" = 0 ]
# The records shown skip exactly the reported gaps: arg1 numbers the calls.
check "the records shown are in order, from the first to the last, jumping $gaps in all" python3 -c '
import sys
prev, skipped = -1, 0
for line in open(sys.argv[1]):
    a = line.split("arg1: ")[1].split(",")[0]
    v = int(a, 16) if a.startswith("0x") else int(a)
    if v <= prev: sys.exit("arg1 %d after %d" % (v, prev))
    skipped += v - prev - 1
    prev = v
sys.exit(0 if skipped == int(sys.argv[2]) and prev == int(sys.argv[3]) - 1 else "skipped %d, last %d" % (skipped, prev))
' "$TMP/shown.txt" "$gaps" "$N"
check "the follower never held more than one deleted file ($max_n, $max_b bytes)" [ "$max_n" -le 1 ]
check "and none once it caught up ($n_end)" [ "$n_end" = 0 ]
