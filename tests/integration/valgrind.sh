#!/usr/bin/env bash
# Under valgrind: tracerd starts, traces 200 events through the sink queue,
# reloads once, and exits on SIGTERM with zero leaks and zero errors. It
# always runs the plain build (build/tracerd): ASan builds cannot run under
# valgrind.
. "$(dirname "$0")/../lib.sh"
need_root valgrind
BIN=$PWD/build/tracerd
FIRE=$PWD/build/tests/tools/fire_syscall
command -v valgrind >/dev/null || { not_ok "valgrind is installed (scripts/deps.sh)"; exit 0; }
[ -x "$BIN" ] && [ -x "$FIRE" ] || { not_ok "build/tracerd is built (make)"; exit 0; }

# Aggregate= too: its maps read per interval, replaced on reload, dumped at stop.
AGG=$'[Selection]\nName=agg\nEvents=syscalls:sys_enter_sysfs\nAggregate=hist:keys=common_pid.execname,option\nAggregateIntervalSec=1\n'
printf '[Daemon]\nFlushIntervalMSec=10\nRingBufferSize=1M\n[Selection]\nName=vg\nEvents=syscalls:sys_enter_sysfs\n'"$AGG" >"$TMP/c.conf"
valgrind --quiet --suppressions="$PWD/tests/valgrind.supp" --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 ${VG_EXTRA:-} \
	--log-file="$TMP/vg.log" "$BIN" --config "$TMP/c.conf" --foreground >"$TMP/out" 2>"$TMP/err" &
VPID=$!
on_exit "kill -9 $VPID"
for ((i = 0; i < 600; i++)); do grep -q attached "$TMP/err" && break; sleep 0.1; done
check "tracerd attaches under valgrind" grep -q attached "$TMP/err"
read -r pid _ < <("$FIRE" 200)
printf '[Daemon]\nFlushIntervalMSec=10\nRingBufferSize=1M\n[Selection]\nName=vg2\nEvents=syscalls:sys_enter_sysfs\n'"${AGG/option/option:size=256}" >"$TMP/c.conf"
kill -HUP "$VPID"
for ((i = 0; i < 300; i++)); do grep -q reloaded "$TMP/err" && break; sleep 0.1; done
check "reloads under valgrind" grep -q reloaded "$TMP/err"
sleep 0.5
kill -TERM "$VPID"
wait "$VPID"
rc=$?
grep -v "unhandled eBPF command" "$TMP/vg.log" | sed "s/^/#   /" | head -60
check "clean shutdown: exit 0 with no valgrind error or leak (exit $rc)" [ "$rc" = 0 ]
check "valgrind reported nothing (beyond bpf commands it does not model)" [ -z "$(grep -v "unhandled eBPF command" "$TMP/vg.log")" ]
got=$(grep -c -- "-$pid .*: sys_sysfs(option: " "$TMP/out")
check "all 200 events delivered under valgrind (got $got)" [ "$got" = 200 ]
hits=$(awk '/^# selection: agg,/ {on = 1; next} /^# selection/ {on = 0} on && /Hits:/ {s += $2} END {print s + 0}' "$TMP/out")
check "Aggregate= under valgrind: its dumps count the 200 events ($hits)" [ "$hits" -ge 200 ]
