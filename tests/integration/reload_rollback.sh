#!/usr/bin/env bash
# A reload that fails after attaching many new events: the new config's
# selection big (Events=syscalls:sys_*_[a-c]*, 94 events, filtered out in BPF) is
# attached, then the kernel refuses the next selection's event (played by
# TRACERD_TEST_REFUSE), so the reload fails and the running config stays.
# Detaching what big attached takes the kernel a grace period per event:
# seconds. The selection that stays fires on meanwhile into a ring buffer
# that fills in under 0.5 s without a drain: the rollback must drain it while
# it detaches, as a successful reload's detach does (reload_drain.sh). The
# workload fires syscalls:sys_enter_sysfs under a comm of its own, in chunks
# of known size, before, during and after the rollback; its own count is
# the oracle:
#   - the reload failed, naming the refused event at its file:line:column;
#   - kept's summary: every call delivered, 0 lost; one stdout line each;
#   - after the rollback tracerd holds the kept selection's link only.
. "$(dirname "$0")/../lib.sh"
need_root reload_rollback
EVENT=syscalls:sys_enter_sysfs
REFUSED=syscalls:sys_exit_sysfs
COMM=rrb$$
cp "${FIRE:-$PWD/${BUILD:-build}/tests/tools/fire_syscall}" "$TMP/$COMM"
FIRE=$TMP/$COMM
CHUNK=150 RATE=1500	# 0.1 s a chunk; a record is 104 bytes: 64 KiB hold 0.42 s

conf() { # conf WITH_NEW
	printf '[Daemon]\nRingBufferSize=64K\nFlushIntervalMSec=10\nStatsIntervalSec=0\n' >"$TMP/c.conf"
	printf '[Selection]\nName=kept\nEvents=%s\nFilter=comm == "%s"\n' "$EVENT" "$COMM" >>"$TMP/c.conf"
	[ "$1" = 1 ] || return 0
	printf '[Selection]\nName=big\nEvents=syscalls:sys_*_[a-c]*\nFilter=comm == "nomatch%s"\n' $$ >>"$TMP/c.conf"
	# line 15, column 8
	printf '[Selection]\nName=refused\nEvents=%s\n' "$REFUSED" >>"$TMP/c.conf"
}

conf 0
export TRACERD_TEST_REFUSE=$REFUSED
start_tracerd "$TMP/c.conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }
E=$TMP/out.err
failed() { grep -c "reload failed" "$E"; }

# fire: one chunk.
fire() { "$FIRE" $CHUNK $RATE >/dev/null; }
n=0
for ((i = 0; i < 5; i++)); do fire; n=$((n + CHUNK)); done
conf 1
hup=$(date +%s%N)
kill -HUP "$TRACERD_PID"
# Fire until the reload has failed and rolled back (at most 120 s).
for ((i = 0; i < 1200; i++)); do
	[ "$(failed)" -ge 1 ] && break
	fire; n=$((n + CHUNK))
done
note "the failed reload took $(( ($(date +%s%N) - hup) / 1000000 )) ms; $n calls so far"
check "the reload fails on the refused event, at its file:line:column" \
	grep -q "c.conf:15:8: the kernel refused to attach to $REFUSED: Operation not permitted" "$E"
grep "reload failed" "$E" | sed 's/^/# /'
for ((i = 0; i < 5; i++)); do fire; n=$((n + CHUNK)); done
links=$(bpf_ids_of "$TRACERD_PID" link_id)
check "after the rollback tracerd holds one link, the kept selection's ($links)" [ "$links" = 1 ]
stop_tracerd
rc=$?
check "tracerd exits 0 ($rc)" [ "$rc" = 0 ]
note "$(grep -E 'summary: selection' "$E" | tr '\n' ';')"
check "kept: every call delivered, 0 lost ($n calls)" grep -q "summary: selection kept: $n delivered, 0 lost" "$E"
lines=$(grep -c -- "^ *$COMM-[0-9]* .*: sys_sysfs(option: " "$TMP/out")
check "kept: one stdout line per call ($lines == $n)" [ "$lines" = "$n" ]
check "the failed config's selections have no summary" bash -c "! grep -qE 'summary: selection (big|refused)' '$E'"
