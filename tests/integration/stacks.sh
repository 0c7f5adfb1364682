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
	echo 1 >"$dir/enable"
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

# 1. The differential test. tracerd's output on tmpfs: its own writes would
# fire the events it traces.
OUT=$(mktemp -d /dev/shm/tracerd-stacks.XXXXXX)
on_exit "rm -rf $OUT"
conf "$TMP/diff.conf" stdout kernel
TRACERD_KALLSYMS=/dev/null start_tracerd "$TMP/diff.conf" "$OUT/out" ||
	{ not_ok "tracerd attaches ${#names[@]} events with StackTrace=kernel"; exit 0; }
ok "tracerd attaches ${#names[@]} events with StackTrace=kernel"
: >"$INSTANCE/trace"
python3 "$HERE/tools/stack_workload.py" 4 "$TMP/lockfile"
for e in "${EVENTS[@]}"; do ev=${e%%|*}; echo 0 >"$INSTANCE/events/${ev%%:*}/${ev#*:}/enable"; done
sleep 0.3
stop_tracerd
check "tracerd exits 0 on SIGINT" [ $? = 0 ]
cat "$INSTANCE/trace" >"$TMP/kernel"
python3 "$HERE/tools/stack_pair.py" "$TMP/kernel" "$OUT/out" "$MIN_PAIRS" \
	"${names[@]#*:}" >"$TMP/pairs" 2>&1
pair_status=$?
sed 's/^/# /' "$TMP/pairs" | head -40
[ -n "${STACKS_KEEP:-}" ] && cp "$TMP/kernel" "$OUT/out" "$STACKS_KEEP"/
for ev in "${names[@]}"; do
	check "$ev: at least $MIN_PAIRS records paired, every stack the kernel's from the caller on" \
		grep -Eq "^EVENT ${ev#*:} .*paired=([0-9]{3,}|[2-9][0-9]) differing=0 without_stack=0" "$TMP/pairs"
done
check "stack_pair.py finds no difference" [ "$pair_status" = 0 ]
check "nothing cut or lost in the differential run" \
	[ "$(grep -cE 'stack_cut=[1-9]|stack_lost=[1-9]' "$OUT/out.err")" = 0 ]
