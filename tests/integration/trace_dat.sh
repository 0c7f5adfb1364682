#!/usr/bin/env bash
# tracerd --read --trace-dat: a store's records as trace-cmd's trace.dat,
# read by the real tools. trace-cmd report -N (libtraceevent, no plugins)
# gives the same records as tracerd --read: count, CPU, pid, timestamp to the
# nanosecond, event name, and the same text but where libtraceevent does not
# print as the kernel does (listed, with why); --ts-check and --check-events
# are clean; a v7 zstd file made by trace-cmd convert reports the same;
# libkshark loads what the store holds; KernelShark under Xvfb draws it.
. "$(dirname "$0")/../lib.sh"
need_root trace_dat
HERE=$(cd "$(dirname "$0")/.." && pwd)
need_tools trace_dat trace-cmd kernelshark Xvfb import pkg-config

# --- a recording of many classes, in the store ---------------------------
# kmalloc's and the page allocator's millions of records (others' builds
# too) would take minutes to compare: kmalloc goes in, past 2 KiB only.
selected=()
for ev in $(grep -v '^#' "$HERE/tools/render_events.txt"); do
	case $ev in kmem:kfree | kmem:kmalloc | kmem:mm_page_*) continue ;; esac
	[ -d "$TRACEFS/events/${ev%%:*}/${ev#*:}" ] && selected+=("$ev")
done
mount_image ext4 256M -O fast_commit || { not_ok "ext4 image with fast_commit"; exit 0; }
# On tmpfs: the store's own writes on the root file system would feed the
# ext4 and block events back. World-readable: KernelShark runs as nobody.
OUT=$(mktemp -d /dev/shm/tracerd-dat.XXXXXX)
on_exit "rm -rf $OUT"
chmod 755 "$OUT"
printf '[Daemon]\nOutput=store\nRingBufferSize=128M\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Selection]\nName=dat\nEvents=%s\n[Selection]\nName=kmalloc\nEvents=kmem:kmalloc\nFilter=bytes_req >= 2048\n[Store]\nDirectory=%s/store\n' \
	"${selected[*]}" "$OUT" >"$TMP/dat.conf"
start_tracerd_store "$TMP/dat.conf" "$OUT/daemon" || { not_ok "tracerd attaches ${#selected[@]} events"; exit 0; }
timeout 120 bash "$HERE/tools/render_workload.sh" "$TMP/mnt" "$TMP" >/dev/null 2>&1
stop_tracerd
check "tracerd recorded ${#selected[@]} events into the store" [ $? = 0 ]

# --- the round trip --------------------------------------------------------
# round NAME READ-OPTIONS...: exports with those options, and compares
# trace-cmd's report of the export with --read --json of the same options.
round() {
	local name=$1; shift
	local rc
	"$TRACERD" --read "$OUT/store" "$@" --trace-dat "$OUT/$name.dat" 2>"$TMP/$name.err"
	rc=$?
	check "$name: --trace-dat exits 0 ($(cat "$TMP/$name.err"))" [ $rc = 0 ]
	"$TRACERD" --read "$OUT/store" "$@" --json --raw-pointers >"$TMP/$name.json" 2>/dev/null
	trace-cmd report -N -t "$OUT/$name.dat" >"$TMP/$name.report" 2>"$TMP/$name.report.err"
	check "$name: trace-cmd report -N reads it" [ $? = 0 ]
	python3 "$HERE/tools/trace_dat_compare.py" "$TMP/$name.json" "$TMP/$name.report" "$TRACEFS" >"$TMP/$name.cmp"
	grep -E '^(COUNT|MISMATCH)' "$TMP/$name.cmp" | head -10 | sed 's/^/# /'
	SUMMARY=$(grep '^SUMMARY' "$TMP/$name.cmp")
	note "$name: $SUMMARY"
	check "$name: as many records in trace-cmd's report as --read gives ($(get tracerd) = $(get trace_cmd))" \
		[ "$(get tracerd)" = "$(get trace_cmd)" -a "$(get tracerd)" -gt 0 ]
	check "$name: each with the same CPU, pid, timestamp (ns) and event, in order ($(get mismatched) differ)" \
		[ "$(get mismatched)" = 0 -a "$(get compared)" = "$(get tracerd)" ]
	check "$name: text differs only where libtraceevent's differs from the kernel's ($(get unexplained) events unexplained)" \
		[ "$(get unexplained)" = 0 ]
	trace-cmd report --ts-check "$OUT/$name.dat" >/dev/null 2>"$TMP/$name.ts"
	check "$name: trace-cmd report --ts-check: no time goes backwards" bash -c "! grep -q 'went backwards' '$TMP/$name.ts'"
	trace-cmd report --check-events "$OUT/$name.dat" >"$TMP/$name.ce" 2>&1
	check "$name: trace-cmd report --check-events: every format parses ($(tail -1 "$TMP/$name.ce"))" [ $? = 0 ]
}
get() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$SUMMARY"; }

round all
sed -n '/^DIFF/,+2p' "$TMP/all.cmp" | sed 's/^/# /'
check "all: at least 30 events ($(get events)), over 2 CPUs ($(get cpus))" [ "$(get events)" -ge 30 -a "$(get cpus)" -ge 2 ]
check "all: at least 20 events print the same text in both ($(get text_equal_events))" [ "$(get text_equal_events)" -ge 20 ]
# trace-cmd's --debug shows each record's [delta:offset:size]: records past
# 112 bytes (type_len 0 and a length word) were read at their size.
trace-cmd report -N --debug "$OUT/all.dat" >"$TMP/all.debug" 2>/dev/null
big=$(grep -cE '\[[0-9]+:0x[0-9a-f]+:(11[3-9]|1[2-9][0-9]|[2-9][0-9]{2}|[0-9]{4})\]$' "$TMP/all.debug")
check "all: records longer than 112 bytes read back ($big)" [ "$big" -gt 0 ]
check "all: __data_loc strings read back (sched_process_exec filename=)" \
	grep -qE 'sched_process_exec: +filename=/' "$TMP/all.report"

# The selection options pass through: rare events, far apart, so that the
# time between two records of a CPU needs a time-extend event (2^27 ns).
first=$(grep -m1 -oE '\] +[0-9]+\.[0-9]{9}' "$TMP/all.report" | sed 's/^] *//')
round some -e 'sched:sched_process_*' -e 'signal:*' --filter 'common_pid > 1' --since "${first%???}" --until now
n_some=$(wc -l <"$TMP/some.json")
check "some: -e, --filter, --since, --until select as --read does ($n_some records)" [ "$n_some" -gt 0 ]
# --debug marks each page's start: a record 2^27 ns or more after the one
# before it on the same page was reached through a time extend, and its time
# is --read's (compared above).
trace-cmd report -N -t --debug "$OUT/some.dat" 2>/dev/null | python3 -c '
import re, sys
last, n = {}, 0
for line in sys.stdin:
    m = re.match(r"CPU:(\d+) \[SUBBUFFER START\]", line)
    if m:
        last.pop(int(m.group(1)), None)
        continue
    m = re.search(r"\[(\d+)\]\s+(\d+)\.(\d{9}):", line)
    if m:
        cpu, ts = int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3))
        n += cpu in last and ts - last[cpu] >= 1 << 27
        last[cpu] = ts
print(n)' >"$TMP/ext"
check "some: records 2^27 ns or more after the one before on their page, through time extends ($(cat "$TMP/ext"))" \
	[ "$(cat "$TMP/ext")" -gt 0 ]

# --- lost records: where the ring buffer lost them -------------------------
# A 16K ring and a consumer slowed to ~50k records/s against 200k syscalls:
# most are lost; the store marks them where tracerd noticed, per CPU.
printf '[Daemon]\nOutput=store\nRingBufferSize=16K\nFlushIntervalMSec=10\nStatsIntervalSec=0\n[Selection]\nName=loss\nEvents=syscalls:sys_enter_sysfs\n[Store]\nDirectory=%s/loss\n' \
	"$OUT" >"$TMP/loss.conf"
if TRACERD_TEST_CONSUMER_DELAY_US=20 start_tracerd_store "$TMP/loss.conf" "$TMP/lossd"; then
	"$FIRE" 200000 >/dev/null
	stop_tracerd
	lost=$(sed -n 's/.* syscalls:sys_enter_sysfs delivered=[0-9]* lost=\([0-9]*\).*/\1/p' "$TMP/lossd.err")
	"$TRACERD" --read "$OUT/loss" --trace-dat "$OUT/loss.dat" 2>"$TMP/loss.err"
	trace-cmd report -N "$OUT/loss.dat" >"$TMP/loss.report" 2>/dev/null
	marked=$(awk -F'[][ ]' '/^CPU:[0-9]+ \[[0-9]+ EVENTS DROPPED\]$/ {s += $3} END {print s + 0}' "$TMP/loss.report")
	note "loss: the daemon counted $lost lost; $(grep -c 'EVENTS DROPPED' "$TMP/loss.report") marks in trace-cmd's report"
	check "loss: records were lost (${lost:-?})" [ "${lost:-0}" -gt 0 ]
	check "loss: trace-cmd report prints [N EVENTS DROPPED], N summing to the daemon's count ($marked = $lost)" \
		[ "$marked" = "$lost" ]
	check "loss: --trace-dat says so ($(cat "$TMP/loss.err"))" grep -q "$lost lost records marked" "$TMP/loss.err"
	check "loss: and every record that was not lost is there" \
		[ "$(grep -c 'sys_enter_sysfs:' "$TMP/loss.report")" = "$("$TRACERD" --read "$OUT/loss" 2>/dev/null | wc -l)" ]
else
	not_ok "loss: tracerd runs with a 16K ring"
fi

# --- stacks: the kernel's own stack-trace entries ----------------------------
printf '[Daemon]\nOutput=store\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Selection]\nName=stacks\nEvents=sched:sched_process_exec signal:signal_generate\nStackTrace=both\n[Store]\nDirectory=%s/stacks\n' \
	"$OUT" >"$TMP/stacks.conf"
if start_tracerd_store "$TMP/stacks.conf" "$TMP/stacksd"; then
	for i in $(seq 20); do /bin/true; sh -c 'kill -0 $$'; done
	sleep 0.2
	stop_tracerd
	"$TRACERD" --read "$OUT/stacks" >"$TMP/stacks.txt" 2>/dev/null
	"$TRACERD" --read "$OUT/stacks" --trace-dat "$OUT/stacks.dat" 2>"$TMP/stacks.err"
	trace-cmd report "$OUT/stacks.dat" >"$TMP/stacks.report" 2>/dev/null
	# Each kernel stack as a tuple of function names: --read's " => f"
	# lines after "<stack trace>", trace-cmd's "=> f (addr)" after kernel_stack.
	python3 - "$TMP/stacks.txt" "$TMP/stacks.report" >"$TMP/stacks.cmp" <<'PY'
import re, sys
def blocks(path, start, frame):
    out, cur = [], None
    for line in open(path):
        if start in line:
            cur = []
            out.append(cur)
            continue
        m = re.match(frame, line)
        if cur is not None and m:
            cur.append(m.group(1))
        else:
            cur = None
    return sorted(map(tuple, out))
a = blocks(sys.argv[1], "<stack trace>", r"^ => (\S+)$")
b = blocks(sys.argv[2], "kernel_stack:", r"^=> (\S+) \([0-9a-f]+\)$")
print(len(a), len(b), "same" if a == b else "differ")
PY
	read -r n_read n_dat same <"$TMP/stacks.cmp"
	note "stacks: $(cat "$TMP/stacks.err")"
	check "stacks: a kernel_stack entry for each record's kernel stack ($n_dat of $n_read)" \
		[ "$n_read" -gt 0 -a "$n_read" = "$n_dat" ]
	check "stacks: trace-cmd names the same functions in the same order as --read" [ "$same" = same ]
	check "stacks: trace-cmd prints them as <stack trace > blocks" grep -q '<stack trace >' "$TMP/stacks.report"
	check "stacks: a user_stack entry for each user stack" \
		[ "$(grep -c '<user stack trace>' "$TMP/stacks.txt")" = "$(grep -c ' user_stack: ' "$TMP/stacks.report")" ]
else
	not_ok "stacks: tracerd runs with StackTrace=both"
fi

# --- version 7, zstd: trace-cmd's own conversion reads the same ----------
trace-cmd convert --file-version 7 --compression zstd -i "$OUT/all.dat" -o "$OUT/all7.dat" >/dev/null 2>&1
check "trace-cmd convert makes a v7 zstd file" [ -s "$OUT/all7.dat" ]
trace-cmd report -N -t "$OUT/all7.dat" 2>/dev/null | grep -v '^version' >"$TMP/all7.report"
check "the v7 file reports the same records as the v6 file" \
	cmp -s <(grep -v '^version' "$TMP/all.report") "$TMP/all7.report"

# --- libkshark: what KernelShark loads ------------------------------------
cc -Wall -Wextra -Werror -o "$TMP/kshark_load" "$HERE/integration/kshark_load.c" \
	$(pkg-config --cflags --libs libkshark) 2>"$TMP/cc.err"
check "kshark_load builds against libkshark ($(head -c 200 "$TMP/cc.err"))" [ -x "$TMP/kshark_load" ]
"$TMP/kshark_load" "$OUT/all.dat" >"$TMP/kshark" 2>"$TMP/kshark.err"
check "libkshark opens the export" [ $? = 0 ]
n=$(wc -l <"$TMP/all.json")
check "libkshark: as many entries as the store's records ($(sed -n 's/^entries //p' "$TMP/kshark") = $n)" \
	grep -qx "entries $n" "$TMP/kshark"
check "libkshark: the same records per CPU" \
	cmp -s <(grep '^cpu ' "$TMP/kshark") <(jq -r '.TRACE_CPU' "$TMP/all.json" | sort -n | uniq -c | awk '{print "cpu", $2, $1}')
check "libkshark: the same tasks ($(grep -c '^task ' "$TMP/kshark"))" \
	cmp -s <(sed -n 's/^task //p' "$TMP/kshark" | sort -n) <(jq -r '.TRACE_TID' "$TMP/all.json" | sort -nu)

# --- KernelShark under Xvfb ------------------------------------------------
"$TRACERD" --read "$OUT/store" -e sched:sched_switch -e sched:sched_waking --trace-dat "$OUT/sched.dat" 2>/dev/null
chmod 644 "$OUT/sched.dat"
# The tasks that switched most: their plots, beside the CPUs'.
pids=$("$TRACERD" --read "$OUT/store" -e sched:sched_switch --json 2>/dev/null | jq -r .TRACE_TID |
	grep -vx 0 | sort | uniq -c | sort -rn | head -3 | awk '{print $2}' | paste -sd,)
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$TMP/display" 2>"$TMP/xvfb.err" &
xvfb=$!
on_exit "kill $xvfb"
for ((i = 0; i < 100; i++)); do [ -s "$TMP/display" ] && break; sleep 0.05; done
export DISPLAY=:$(cat "$TMP/display")
# As nobody: as root KernelShark opens with a warning dialog first.
mkdir -p "$OUT/home" && chown nobody "$OUT/home"
HOME=$OUT/home XDG_RUNTIME_DIR=$OUT/home setpriv --reuid=nobody --regid=nogroup --clear-groups \
	kernelshark -geometry 1200x760+0+0 -i "$OUT/sched.dat" --pid "$pids" >"$TMP/ks.out" 2>&1 &
ks=$!
on_exit "kill $ks"
for ((i = 0; i < 300; i++)); do
	win=$(xwininfo -root -tree 2>/dev/null | awk -v f="\"Kernel Shark ($OUT/sched.dat)\":" 'index($0, f) {print $1}')
	[ -n "$win" ] && break
	sleep 0.1
done
check "KernelShark opens a window titled with the file ($(tail -1 "$TMP/ks.out"))" [ -n "$win" ]
sleep 3		# loading and drawing
xwininfo -root -tree >"$TMP/windows" 2>/dev/null
others=$(grep '("kernelshark" "kernelshark")' "$TMP/windows" | grep -vc "Kernel Shark (")
check "no other KernelShark window (a dialog: an error, a warning)" [ "$others" = 0 ]
import -window "$win" "$TMP/shot.png" 2>/dev/null
check "a screenshot is taken" [ -s "$TMP/shot.png" ]
# The plots (the window's upper part, below the toolbar): task colours, not
# an empty grey or white area.
sat=$(convert "$TMP/shot.png" -crop 1010x160+150+140 +repage -colorspace HSL -channel G -separate \
	-format '%[fx:mean]' info: 2>/dev/null)
colours=$(convert "$TMP/shot.png" -crop 1010x160+150+140 +repage -format '%k' info: 2>/dev/null)
note "KernelShark's plot area: $colours colours, mean saturation $sat"
check "the plots are drawn: coloured ($sat), in several colours ($colours)" \
	python3 -c "import sys; sys.exit(0 if float('${sat:-0}') > 0.03 and int('${colours:-0}') >= 4 else 1)"
[ -n "${TRACE_DAT_SCREENSHOT:-}" ] && cp "$TMP/shot.png" "$TRACE_DAT_SCREENSHOT"
kill "$ks" 2>/dev/null
wait "$ks" 2>/dev/null || true	# its SIGTERM status is not the test's
