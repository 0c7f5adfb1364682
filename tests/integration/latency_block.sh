#!/usr/bin/env bash
# Inter-event hist triggers (issue 31): block I/O latency, block_rq_issue to
# block_rq_complete keyed by dev and sector, in nanoseconds (common_timestamp
# without .usecs), against a tracefs instance's records of the same events
# paired as the kernel pairs them (latency_pair.py, as latency.sh does).
# The workload: O_DIRECT reads and writes on a loop device of this test's
# own, so that every request of that dev is the workload's.
. "$(dirname "$0")/../lib.sh"
need_root latency_block
PAIR=$(dirname "$0")/latency_pair.py

truncate -s 64M "$TMP/disk.img"
LOOPDEV=$(losetup -f --show "$TMP/disk.img") || { not_ok "latency_block: losetup"; exit 0; }
on_exit "losetup -d $LOOPDEV"
# udev's probe of the new device reads it: let that end before the window
# opens, or the instance could hold an issue whose completion tracerd sees alone.
udevadm settle 2>/dev/null || sleep 1
read -r MAJ MIN < <(stat -c '%t %T' "$LOOPDEV" | while read -r a b; do echo $((16#$a)) $((16#$b)); done)
DEV_T=$(((MAJ << 20) | MIN))	# the kernel's dev_t: what the events' dev holds
note "$LOOPDEV is $MAJ:$MIN (dev_t $DEV_T)"

make_instance "tracerd-latblk-$$" || { not_ok "latency_block: instance"; exit 0; }
for ev in block_rq_issue block_rq_complete; do
	echo "dev == $DEV_T" >"$INSTANCE/events/block/$ev/filter"
	echo 1 >"$INSTANCE/events/block/$ev/enable"
done
on_exit "echo 0 >$INSTANCE/events/enable"

cat >"$TMP/blk.conf" <<EOF
[Daemon]
Output=stdout
[Synthetic]
Event=io_latency u32 dev; u64 sector; u64 lat
[Selection]
Name=issue
Events=block:block_rq_issue
Aggregate=hist:keys=dev,sector:ts0=common_timestamp:size=8192 if dev == $MAJ:$MIN
[Selection]
Name=complete
Events=block:block_rq_complete
Aggregate=hist:keys=dev,sector:size=8192:lat=common_timestamp-\$ts0:onmatch(block.block_rq_issue).io_latency(dev,sector,\$lat) if dev == $MAJ:$MIN
[Selection]
Name=issue_seen
Events=block:block_rq_issue
Filter=dev == $MAJ:$MIN
[Selection]
Name=complete_seen
Events=block:block_rq_complete
Filter=dev == $MAJ:$MIN
[Selection]
Name=iolat
Events=synthetic:io_latency
[Selection]
Name=iohist
Events=synthetic:io_latency
Aggregate=hist:keys=lat.log2
AggregateIntervalSec=0
EOF
# issue_seen and complete_seen: the records BPF saw (see latency.sh).

echo 1 >"$INSTANCE/tracing_on"
start_tracerd "$TMP/blk.conf" "$TMP/out" || {
	not_ok "latency_block: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }
ok "latency_block: tracerd starts with an io_latency config"
# tracerd leaves out what fires in its own threads (a completion in an
# interrupt over one of them); the oracle does too (latency_pair.py --exclude).
# Two writers on regions of their own, side by side (requests overlap in
# the queue), then a reader over both: 4k and 64k requests, each a pair;
# then the first writer again over its region (a sector's key used again
# after its pair was read).
cp /bin/dd "$TMP/latwdd"
"$TMP/latwdd" if=/dev/zero of="$LOOPDEV" bs=4k count=1000 oflag=direct status=none &
w1=$!
"$TMP/latwdd" if=/dev/zero of="$LOOPDEV" bs=4k count=1000 seek=4096 oflag=direct status=none
wait $w1
w=$?
"$TMP/latwdd" if="$LOOPDEV" of=/dev/null bs=64k count=512 iflag=direct status=none
r=$?
"$TMP/latwdd" if=/dev/zero of="$LOOPDEV" bs=4k count=500 oflag=direct status=none
check "latency_block: the O_DIRECT writes and reads ran" [ "$w$r$?" = 000 ]
sleep 0.3	# tracerd drains its ring within FlushIntervalMSec

lat_collect latency_block
for s in iolat issue_seen complete_seen; do
	check "latency_block: tracerd lost no record of selection $s" \
		grep -Eq "summary: selection $s: [0-9]+ delivered, 0 lost," "$TMP/out.err"
done

python3 "$PAIR" block "$TMP/out" "$TMP/trace" --dev "$DEV_T" --misses "$MISSES" --exclude "$TIDS" --hist iohist ||
	{ [ -n "${LATENCY_KEEP:-}" ] && cp "$TMP/out" "$TMP/out.err" "$TMP/trace" "$LATENCY_KEEP/"; }
