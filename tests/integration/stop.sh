#!/usr/bin/env bash
# Stopping the service, under a real systemd (a booted container): the
# kernel makes detaching slow (a grace period per event, one after another:
# ~55 ms each, ~2 min for `*:*`), so tracerd writes out everything and its
# final counts before it detaches, and extends the stop timeout meanwhile.
#  1. `syscalls:*` (720 events, a detach of ~40 s against TimeoutStopSec=10s):
#     `systemctl stop` is not killed (Result=success, no stop-sigterm
#     timeout) and nothing is lost: every fired event is in the store, and
#     the final counts say so. (`*:*` would prove no more at three times the
#     wait; breadth.sh attaches and detaches it, extending as here.)
#  2. SIGKILL during the detach loop loses nothing: the store has every
#     record, the final statistics entry and the histogram's final dump
#     were written before it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nspawn.sh"
need_root stop
need_tools stop systemd-nspawn nsenter jq

CONF=/etc/tracerd/tracerd.conf
STORE=/var/lib/private/tracerd	# the dynamic user's StateDirectory=
N=5000
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
jqq() { jq -e "$@" >/dev/null; }

nspawn_start "$PWD" || { not_ok "stop: container boots"; exit 0; }
ct mount -t tracefs nodev /sys/kernel/tracing
check "stop: make install into the container" \
	ct make -s -C /opt/ci -o "$BUILD/tracerd" install BUILD="$BUILD" PREFIX=/usr/local
# A stop timeout shorter than the detach of `syscalls:*`: only extending it
# (as long as events go) keeps the stop from being killed.
TIMEOUT=10
BIG='syscalls:*'
ct mkdir -p /etc/systemd/system/tracerd.service.d
ct sh -c "printf '[Service]\nTimeoutStopSec=${TIMEOUT}s\n' >/etc/systemd/system/tracerd.service.d/50-test.conf"
if grep -q __asan_init "$TRACERD"; then	# as systemd.sh: LeakSanitizer needs ptrace()
	ct sh -c 'printf "[Service]\nSystemCallFilter=ptrace\nEnvironment=LSAN_OPTIONS=suppressions=/opt/ci/tests/lsan.supp\n" >/etc/systemd/system/tracerd.service.d/60-sanitizer.conf'
fi
ct systemctl daemon-reload

# The events of fire_syscall only (its comm), into the store: the filter runs
# on every event, and what it rejects costs no record.
config() { # config EVENTS FLUSH_MS [MORE LINES]
	ct sh -c "cat >$CONF" <<-EOF
	[Daemon]
	Output=store
	FlushIntervalMSec=$2
	StatsIntervalSec=0
	[Selection]
	Name=all
	Events=$1
	Filter=comm == "fire_syscall"
	${3:-}
	EOF
}
# This invocation's journal entries as JSON.
entries() { ct journalctl -o json --no-pager _SYSTEMD_INVOCATION_ID="$INV" "$@" 2>/dev/null; }
# Starts the unit on an empty store; sets INV. Fires N sysfs(2) calls; sets PID.
start_and_fire() {
	ct systemctl reset-failed tracerd 2>/dev/null
	ct sh -c "rm -f $STORE/*.tstore"
	local t=$(date +%s%N)
	check "$1: systemctl start tracerd" ct systemctl start tracerd
	INV=$(ct systemctl show -P InvocationID tracerd)
	note "$1: $(entries | jq -r 'select(.MESSAGE | test("^attached")) | .MESSAGE') ($(ms_since "$t") ms to READY=1)"
	read -r PID _ < <("$FIRE" "$N")
}
# What the store holds: every record (JSON lines), and of them fire_syscall's.
read_store() {
	ct tracerd --read /var/lib/tracerd --json >"$TMP/$1.json" 2>"$TMP/$1.err"
	STORED=$(wc -l <"$TMP/$1.json")
	ENTER=$(jq -r --arg p "$PID" 'select(.TRACE_PID == $p and .TRACE_EVENT == "syscalls:sys_enter_sysfs") | 1' "$TMP/$1.json" | wc -l)
	EXIT=$(jq -r --arg p "$PID" 'select(.TRACE_PID == $p and .TRACE_EVENT == "syscalls:sys_exit_sysfs") | 1' "$TMP/$1.json" | wc -l)
}
# The final statistics entry of selection "all": delivered == stored, nothing lost.
final_counts_ok() {
	entries TRACE_STATS=1 TRACE_STATS_FINAL=1 TRACE_SELECTION=all >"$TMP/$1.final"
	note "$1: final entry: $(jq -r .MESSAGE "$TMP/$1.final")"
	jqq -s --argjson s "$STORED" 'length == 1 and (.[0].TRACE_STATS_DELIVERED | tonumber) == $s and
		.[0].TRACE_STATS_LOST == "0" and .[0].TRACE_STATS_SINK_ERRORS == "0"' "$TMP/$1.final"
}

# ---- 1. `systemctl stop` of `syscalls:*` ----
config "$BIG" 50
start_and_fire "$BIG"
t=$(date +%s%N)
ct systemctl stop tracerd
stop_ms=$(ms_since "$t")
result=$(ct systemctl show -P Result tracerd) status=$(ct systemctl show -P ExecMainStatus tracerd)
note "$BIG: systemctl stop took $stop_ms ms; $(entries | jq -r 'select(.MESSAGE | test("^stopping:")) | .MESSAGE' | xargs -d '\n' | sed 's/ stopping:/;/g')"
check "$BIG: stop is not killed: Result=$result, exit status $status ($stop_ms ms)" \
	[ "$result" = success -a "$status" = 0 ]
killed=$(ct journalctl -u tracerd -o cat --no-pager --since "@$((t / 1000000000 - 1))" | grep -E "timed out|SIGKILL|Killing|[Ww]atchdog" | head -3)
check "$BIG: the journal has no stop-sigterm timeout or SIGKILL" [ -z "$killed" ]
[ -z "$killed" ] || note "$killed"
check "$BIG: the stop outlasted TimeoutStopSec=${TIMEOUT}s: the timeout was extended" \
	[ "$stop_ms" -gt $((TIMEOUT * 1000)) ]
read_store all
note "$BIG: $STORED records in the store, fire_syscall pid $PID: $ENTER sys_enter_sysfs, $EXIT sys_exit_sysfs"
check "$BIG: all $N sysfs calls in the store, entry and exit ($ENTER, $EXIT)" [ "$ENTER" = $N -a "$EXIT" = $N ]
check "$BIG: the final counts equal the store ($STORED delivered), 0 lost, 0 sink errors" final_counts_ok all
# The final counts come before the detach, not after it.
order=$(entries | jq -r 'select(.TRACE_STATS_FINAL == "1" or (.MESSAGE | test("^stopping: detached"))) | if .TRACE_STATS_FINAL then "final" else "detached" end' | xargs)
check "$BIG: the final counts were written before the detach ($order)" [ "$order" = "final detached" ]

# ---- 2. SIGKILL while detaching ----
# sys_enter_* (~360 events): long enough a detach to be killed in, short
# enough an exit (the kernel detaches what is left as the fds close). A
# histogram of sysfs(2) by pid beside it: its final dump must be out too.
# The records wait in the ring when the stop comes (a 10 s flush interval,
# fewer bytes than WakeupBytes=): the stop must drain them before it detaches.
config 'syscalls:sys_enter_*' 10000 '[Selection]
Name=hist
Events=syscalls:sys_enter_sysfs
Aggregate=hist:keys=common_pid:vals=hitcount
AggregateIntervalSec=0'
start_and_fire "kill"
ct systemctl stop --no-block tracerd
# In the detach: its STATUS= says so (sent each second as events go).
for ((i = 0; i < 200; i++)); do
	st=$(ct systemctl show -P StatusText tracerd)
	[[ "$st" == *detach* ]] && break
	sleep 0.05
done
# Events after the stop began are not traced: neither records nor losses.
read -r LPID late _ < <("$FIRE" 1000)
sleep 1
note "kill: STATUS=$st; $late sysfs calls fired since; SIGKILL now"
ct systemctl kill --signal=SIGKILL tracerd
for ((i = 0; i < 1200; i++)); do
	[ "$(ct systemctl is-active tracerd)" = deactivating ] || break
	sleep 0.1
done
note "kill: the unit is $(ct systemctl is-active tracerd), Result=$(ct systemctl show -P Result tracerd)"
detached=$(entries | jq -r 'select(.MESSAGE | test("^stopping: detached")) | .MESSAGE')
# A killed process still waits for the kernel to detach what is left as its
# fds close (a grace period an event): on a loaded machine that can outlast
# the stop timeout, and systemd then says Result=timeout. Either way the
# kill came before tracerd's own detach ended.
result=$(ct systemctl show -P Result tracerd)
killed_in_detach() { [ -z "$detached" ] && [[ "$result" == signal || "$result" == timeout ]]; }
check "kill: SIGKILL came during the detach (no 'detached' message; Result=$result)" killed_in_detach
read_store kill
note "kill: $STORED records in the store, fire_syscall pid $PID: $ENTER sys_enter_sysfs"
LATE=$(jq -r --arg p "$LPID" 'select(.TRACE_PID == $p) | 1' "$TMP/kill.json" | wc -l)
check "kill: all $N sysfs calls in the store ($ENTER), and no record of the $late fired after the stop began ($LATE)" \
	[ "$ENTER" = $N -a -n "$LPID" -a "$LATE" = 0 ]
check "kill: the final statistics entry was written, equal to the store ($STORED)" final_counts_ok kill
hits=$(entries TRACE_HIST=hist TRACE_HIST_DUMP=final | jq -r --arg p "$PID" 'select((.TRACE_COMMON_PID // "" | gsub(" "; "")) == $p) | .TRACE_HITCOUNT')
check "kill: the histogram's final dump was written: pid $PID hitcount ${hits:-none}" [ "$hits" = $N ]
