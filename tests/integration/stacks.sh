#!/usr/bin/env bash
# Stack traces (StackTrace=), with the kernel as the oracle: a tracefs
# instance with the `stacktrace` trigger and tracerd (StackTrace=kernel,
# symbols from the kernel's printf as the service has them) record the same
# events from different subsystems; paired by event, task, CPU and time
# (trace_clock mono), tracerd's frames must be the kernel's from the
# tracepoint's caller on (tests/tools/stack_pair.py). Then: no raw kernel
# address in any stack field as a user without CAP_SYSLOG; a stack cut at
# the depth limit is marked and counted.
. "$(dirname "$0")/../lib.sh"
need_root stacks
HERE=$(cd "$(dirname "$0")/.." && pwd)
MIN_PAIRS=20
WORKLOAD_COMM=tracerd-stackwl	# stack_workload.py's: other processes' events left out

# event, and the filter both sides apply (the kernel's trigger takes it with `if`).
EVENTS=(
	"filelock:fcntl_setlk|"
	"signal:signal_generate|"
	"sched:sched_switch|"
	"sched:sched_wakeup|"
	"timer:hrtimer_expire_entry|"
	"timer:hrtimer_start|"
	"irq:softirq_entry|"
	"irq:softirq_raise|"
	"kmem:kmalloc|bytes_alloc >= 4096"
	"workqueue:workqueue_queue_work|"
)
names=()
for e in "${EVENTS[@]}"; do names+=("${e%%|*}"); done

make_instance "tracerd-stacks-$$" || { not_ok "tracefs instance"; exit 0; }
echo 65536 >"$INSTANCE/buffer_size_kb"
for e in "${EVENTS[@]}"; do
	ev=${e%%|*} filter=${e#*|} dir=$INSTANCE/events/${ev%%:*}/${ev#*:}
	[ -n "$filter" ] && echo "$filter" >"$dir/filter"
	echo "stacktrace${filter:+ if $filter}" >"$dir/trigger" || { not_ok "stacktrace trigger on $ev"; exit 0; }
	# Triggers before the instance goes: rmdir refuses an instance with one.
	on_exit "echo '!stacktrace${filter:+ if $filter}' > $dir/trigger; echo 0 > $dir/enable; echo 0 > $dir/filter"
done

conf() { # conf FILE OUTPUT STACKTRACE: one selection per event (each its own filter)
	printf '[Daemon]\nOutput=%s\nRawPointers=yes\nRingBufferSize=64M\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=%s\n' \
		"$2" "$TMP/store-$3" >"$1"
	local i=0 e
	for e in "${EVENTS[@]}"; do
		printf '[Selection]\nName=s%d\nEvents=%s\nStackTrace=%s\n' $((i++)) "${e%%|*}" "$3" >>"$1"
		[ -n "${e#*|}" ] && printf 'Filter=%s\n' "${e#*|}" >>"$1"
	done
}

# 1. The differential test, to stdout and to the store (then --read: frames
# with the symbols the file carries). tracerd's output on tmpfs: its own writes would fire the events
# it traces.
OUT=$(mktemp -d /dev/shm/tracerd-stacks.XXXXXX)
on_exit "rm -rf $OUT"
differential() { # differential stdout|store
	local mode=$1 ev
	conf "$TMP/$mode.conf" "$mode" kernel
	sed -i "s|^Directory=.*|Directory=$OUT/store|" "$TMP/$mode.conf"
	if [ "$mode" = stdout ]; then
		TRACERD_KALLSYMS=/dev/null start_tracerd "$TMP/$mode.conf" "$OUT/$mode.txt"
	else
		TRACERD_KALLSYMS=/dev/null start_tracerd_store "$TMP/$mode.conf" "$OUT/$mode.txt"
	fi || { not_ok "$mode: tracerd attaches ${#names[@]} events with StackTrace=kernel"; return; }
	ok "$mode: tracerd attaches ${#names[@]} events with StackTrace=kernel"
	for e in "${EVENTS[@]}"; do ev=${e%%|*}; echo 1 >"$INSTANCE/events/${ev%%:*}/${ev#*:}/enable"; done
	: >"$INSTANCE/trace"
	python3 "$HERE/tools/stack_workload.py" 4 "$TMP/lockfile"
	for e in "${EVENTS[@]}"; do ev=${e%%|*}; echo 0 >"$INSTANCE/events/${ev%%:*}/${ev#*:}/enable"; done
	sleep 0.3
	stop_tracerd
	check "$mode: tracerd exits 0 on SIGINT" [ $? = 0 ]
	if [ "$mode" = store ]; then
		"$TRACERD" --read --raw-pointers "$OUT/store" >"$OUT/$mode.read" 2>"$OUT/read.err"
		check "store: --read exits 0" [ $? = 0 ]
		note "store: $(du -sb "$OUT/store" | cut -f1) bytes for $(grep -c '<stack trace>' "$OUT/$mode.read") records with stacks"
		mv "$OUT/$mode.read" "$OUT/$mode.txt"
	fi
	cat "$INSTANCE/trace" >"$TMP/kernel"
	python3 "$HERE/tools/stack_pair.py" "$TMP/kernel" "$OUT/$mode.txt" "$MIN_PAIRS" \
		"${names[@]#*:}" >"$TMP/pairs" 2>&1
	local pair_status=$?
	sed 's/^/# /' "$TMP/pairs" | head -40
	[ -n "${STACKS_KEEP:-}" ] && cp "$TMP/kernel" "$OUT/$mode.txt" "$STACKS_KEEP"/
	for ev in "${names[@]}"; do
		check "$mode: $ev: at least $MIN_PAIRS records paired, every stack the kernel's from the caller on" \
			grep -Eq "^EVENT ${ev#*:} .*paired=([0-9]{3,}|[2-9][0-9]) differing=0 without_stack=0" "$TMP/pairs"
	done
	check "$mode: stack_pair.py finds no difference" [ "$pair_status" = 0 ]
	check "$mode: nothing cut or lost" [ "$(grep -cE 'stack_cut=[1-9]|stack_lost=[1-9]' "$OUT/$mode.txt.err")" = 0 ]
}
differential stdout
differential store

# 2. JSON (the journal's fields): TRACE_STACK= one frame a line, with offsets.
"$TRACERD" --read --json "$OUT/store" 2>"$TMP/json.err" | grep -m1 '"TRACE_EVENT":"filelock:fcntl_setlk"' >"$TMP/json"
check "--read --json: TRACE_STACK= one func+0xoff/0xsize a line, from the caller on" \
	python3 -c 'import json,re,sys; s=json.load(open(sys.argv[1]))["TRACE_STACK"].split("\n"); sys.exit(not (s[0].startswith("fcntl_setlk+0x") and all(re.fullmatch(r"[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+", f) for f in s)))' "$TMP/json"

# 3. Privacy: as a user without CAP_SYSLOG (the unit's capabilities), no raw
# kernel address in any stack field, and the frames are still symbolized
# (through the kernel's printf, %pB).
PRIV=$(mktemp -d /dev/shm/tracerd-stacks-priv.XXXXXX)
on_exit "rm -rf $PRIV"
chown nobody "$PRIV"
printf '[Daemon]\nOutput=stdout\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=%s/store\n' "$PRIV" >"$PRIV/conf"
printf '[Selection]\nName=%s\nEvents=sched:sched_switch irq:softirq_entry timer:hrtimer_expire_entry filelock:fcntl_setlk\nStackTrace=kernel\nOutput=%s\n' \
	out stdout st store >>"$PRIV/conf"
chmod 644 "$PRIV/conf"
CAPS=+bpf,+perfmon,+dac_read_search
BIN=$TRACERD
TRACERD=setpriv TRACERD_POINTER_KEY=$PRIV/key run_tracerd "$PRIV/out" --reuid=nobody --regid=nogroup --clear-groups \
	--inh-caps=$CAPS --ambient-caps=$CAPS "$BIN" --config "$PRIV/conf" ||
	{ not_ok "tracerd runs as nobody with CAP_BPF, CAP_PERFMON, CAP_DAC_READ_SEARCH"; exit 0; }
python3 "$HERE/tools/stack_workload.py" 1 "$TMP/lockfile"
sleep 0.3
stop_tracerd
setpriv --reuid=nobody --regid=nogroup --clear-groups "$TRACERD" --read --json "$PRIV/store" >"$PRIV/json" 2>/dev/null
python3 - "$PRIV/json" >"$PRIV/frames" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    for k in ("TRACE_STACK", "TRACE_USER_STACK"):
        for f in d.get(k, "").split("\n"):
            if f:
                print(f)
PY
text=$(grep -h '^ => ' "$PRIV/out" | wc -l) fields=$(wc -l <"$PRIV/frames")
syms=$(grep -hE '^ => [A-Za-z_]' "$PRIV/out" | wc -l)
note "as nobody: $text frames on stdout ($syms symbolized), $fields in --read --json"
check "as nobody: stack frames recorded ($text on stdout, $fields in JSON)" [ "$text" -ge 100 -a "$fields" -ge 100 ]
check "as nobody: no raw kernel address in a stack (stdout or JSON)" \
	[ "$(cat "$PRIV/frames" <(grep -h '^ => ' "$PRIV/out") | grep -ciE 'ffff[0-9a-f]{12}')" = 0 ]
check "as nobody: the frames are symbolized, not hashes (>= 99%: $syms of $text)" [ $((syms * 100)) -ge $((text * 99)) ]
# --read has neither kallsyms addresses nor the kernel's printf: the
# symbols are the ones the file carries (KSYMS).
jsyms=$(grep -cE '^[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x[0-9a-f]+$' "$PRIV/frames")
check "as nobody: --read --json frames symbolized from the file (>= 99%: $jsyms of $fields)" \
	[ $((jsyms * 100)) -ge $((fields * 99)) ]

# 4. A stack cut at the depth limit says so and is counted, never shown as
# whole (the limit lowered for the test: TRACERD_TEST_STACK_DEPTH).
printf '[Daemon]\nOutput=stdout\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Selection]\nName=cut\nEvents=filelock:fcntl_setlk\nStackTrace=kernel\nFilter=comm == "%s"\n' "$WORKLOAD_COMM" >"$TMP/cut.conf"
TRACERD_TEST_STACK_DEPTH=3 start_tracerd "$TMP/cut.conf" "$OUT/cut" || { not_ok "tracerd starts with depth 3"; exit 0; }
# fcntl_setlk from a syscall: at least 5 frames (fcntl_setlk .. entry_SYSCALL_64_after_hwframe).
python3 "$HERE/tools/stack_workload.py" 0.2 "$TMP/lockfile"
sleep 0.3
stop_tracerd
events=$(grep -c 'fcntl_setlk:' "$OUT/cut") cut=$(grep -c '^ => \.\.\. (cut at 3 frames)$' "$OUT/cut")
counted=$(sed -n 's/.*filelock:fcntl_setlk .* stack_cut=\([0-9]*\).*/\1/p' "$OUT/cut.err")
note "depth 3: $events records, $cut marked cut, stack_cut=$counted"
check "depth 3: every stack marked cut and counted ($events records, $cut marks, stack_cut=$counted)" \
	[ "$events" -ge 10 -a "$cut" = "$events" -a "$counted" = "$events" ]
check "depth 3: at most 3 frames a stack" \
	[ "$(awk '/<stack trace>/{n=0; next} /^ => \.\.\./{next} /^ => /{if (++n > 3) bad=1} END{print bad+0}' "$OUT/cut")" = 0 ]
