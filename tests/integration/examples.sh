#!/usr/bin/env bash
# The worked configs of conf/examples/ (issue 31): each passes --check-config
# and, run for a few seconds under a workload that fires its events, dumps a
# latency histogram with entries, its selections losing nothing (0 lost,
# 0 dropped). Each example's histogram is its selection named as the file.
# Not a comparison: latency.sh and latency_block.sh hold the pairs against
# ftrace's records. Runs alone: its programs are on every sched_switch,
# syscall and IRQ of the machine, and it makes a loop device.
. "$(dirname "$0")/../lib.sh"
need_root examples
EXAMPLES=$PWD/conf/examples
SECS=${EXAMPLES_SECS:-2}

confs=("$EXAMPLES"/*.conf)
check "examples: conf/examples/ has the four worked configs" [ ${#confs[@]} -ge 4 ]
for c in "${confs[@]}"; do
	"$TRACERD" --check-config "$c" >"$TMP/check.out" 2>&1
	rc=$?
	check "examples: --check-config ${c##*/}" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || sed 's/^/# /' "$TMP/check.out"
done

# The workloads, each for $SECS seconds.
# for_secs CMD...: CMD until $SECS seconds passed (timeout's 124 is success).
for_secs() { timeout "$SECS" "$@"; [ $? = 124 ]; }
work_wakeup() { for_secs sh -c 'while :; do sleep 0.001; done'; }
work_syscall() { for_secs dd if=/dev/zero of=/dev/null bs=1 status=none; }
# O_DIRECT writes to a loop device of the test's own, then reads.
work_block() {
	truncate -s 32M "$TMP/disk.img"
	LOOPDEV=$(losetup -f --show "$TMP/disk.img") || return 1
	on_exit "losetup -d $LOOPDEV"
	dd if=/dev/zero of="$LOOPDEV" bs=4k count=2000 oflag=direct status=none &&
		dd if="$LOOPDEV" of=/dev/null bs=64k count=256 iflag=direct status=none
}
# Disk interrupts: O_DIRECT writes to a file on a real file system (the
# test's directory, or this tree's), each waited for.
work_irq() {
	local f=$TMP/irq.img
	[ "$(stat -f -c %T "$TMP")" = tmpfs ] && f=$PWD/.examples-irq.$$
	on_exit "rm -f $f"
	timeout "$SECS" dd if=/dev/zero of="$f" bs=64k count=100000 oflag=direct,dsync status=none
	local rc=$?
	rm -f "$f"
	[ "$rc" = 0 ] || [ "$rc" = 124 ]
}
# all_kept ERR: every selection's summary in ERR says 0 lost and 0 dropped.
all_kept() { ! grep -E "summary: selection " "$1" | grep -Evq ' 0 lost, .* 0 dropped \('; }

# hits OUT NAME: Hits of selection NAME's final dump in OUT.
hits() {
	awk -v sel="# selection: $2, event: " '
		index($0, sel) == 1 && /dump: final$/ { on = 1 }
		on && $1 == "Hits:" { print $2; exit }' "$1"
}
# lat_lines OUT NAME: the lines of that dump with a log2 latency bucket.
lat_lines() {
	awk -v sel="# selection: $2, event: " '
		index($0, sel) == 1 && /dump: final$/ { on = 1; next }
		on && /^# selection: / { exit }
		on && /lat: ~ 2\^[0-9]+/ { n++ }
		END { print n + 0 }' "$1"
}

run_example() {
	local name=$1 work=$2 c=$EXAMPLES/$1.conf out=$TMP/$1.out n h irq0 irq1
	[ -e "$c" ] || { not_ok "examples: $name.conf exists"; return; }
	start_tracerd "$c" "$out" || {
		not_ok "examples: $name: tracerd starts"; sed 's/^/# /' "$out.err"; return; }
	irq0=$(awk '$1 ~ /^[0-9]+:$/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts)
	"$work" || not_ok "examples: $name: the workload ran"
	irq1=$(awk '$1 ~ /^[0-9]+:$/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts)
	sleep 0.2
	stop_tracerd
	check "examples: $name: tracerd exits 0 at stop" [ $? = 0 ]
	h=$(hits "$out" "$name")
	n=$(lat_lines "$out" "$name")
	note "$name: $h paired, in $n log2 buckets"
	if [ "$name" = irq-latency ] && [ "$irq1" = "$irq0" ]; then
		# No interrupt of the IRQ core fired at all (no device interrupts:
		# the timer and IPIs are system vectors, which fire none of these).
		ok "examples: $name: no device interrupt fired here, nothing to pair # SKIP"
	else
		check "examples: $name: the latency histogram has entries" [ "${h:-0}" -gt 0 ] && [ "$n" -gt 0 ]
	fi
	grep -E "summary: selection " "$out.err" | cut -d';' -f1 | sed 's/^/# /'
	check "examples: $name: every selection has its summary" \
		[ "$(grep -c 'summary: selection ' "$out.err")" = "$(grep -c '^\[Selection\]' "$c")" ]
	check "examples: $name: no selection lost a record or dropped an event" all_kept "$out.err"
}

run_example wakeup-latency work_wakeup
run_example syscall-latency work_syscall
run_example block-latency work_block
run_example irq-latency work_irq
