#!/usr/bin/env bash
# Two selections may name the same event (different filters, priorities or
# rate limits): each gets every record it accepts, as its own entry. The
# kernel attaches a program to a tracepoint once, so the shared event uses a
# second copy of the class program: programs grow with the most selections
# that share one event, not with the number of events. A reload that changes
# the Filter= of a shared event is taken, and counts stay exact.
. "$(dirname "$0")/../lib.sh"
need_root duplicate_selections
# The workload under a comm of its own: other suites fire sysfs(2) too.
COMM=dupsel$$
fire_as "$COMM"
N=500

conf() { # FILTER-OF-B
	printf '[Daemon]\nOutput=stdout\nFlushIntervalMSec=10\n' >"$TMP/c.conf"
	printf '[Selection]\nName=a\nEvents=syscalls:sys_enter_sysfs\nFilter=comm == "%s"\n' "${COMM:0:15}" >>"$TMP/c.conf"
	printf '[Selection]\nName=b\nEvents=syscalls:sys_enter_s*\nFilter=%s\n' "$1" >>"$TMP/c.conf"
}
conf 'common_pid != 1'
# The interpreter, so that the shared event needs a copy of the class
# program; with emitted filters each selection attaches its own program.
export TRACERD_TEST_INTERPRET='*'
nb=$("$TRACERD" --list-events 'syscalls:sys_enter_s*' | wc -l)
check "--check-config accepts two selections naming one event" "$TRACERD" --check-config "$TMP/c.conf"
start_tracerd "$TMP/c.conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }
progs=$(bpf_progs_of "$TRACERD_PID")
note "selection b: $nb events; BPF programs: $progs"
# The accept program, and two copies of the class program: the shared
# event takes a program once.
check "three programs for one shared event, not one per event ($nb)" [ "$progs" = 3 ]

read -r pid _ _ < <("$FIRE" $N)
sleep 0.3
lines=$(grep -c -- "-$pid .* sys_sysfs(\|-$pid .* sys_enter_sysfs:" "$TMP/out")
check "each selection writes each record: $((2 * N)) lines for $N events (got $lines)" [ "$lines" = $((2 * N)) ]

# A reload that changes the filter of the shared event: taken, not refused.
conf "common_pid == $$"
kill -HUP "$TRACERD_PID"
# Detaching the old b takes an RCU grace period per event (~4 s for 71).
for ((i = 0; i < 1200; i++)); do grep -q "reloaded" "$TMP/out.err" && break; sleep 0.05; done
check "the reload changing the Filter= of a shared event is taken" grep -q "reloaded" "$TMP/out.err"
check "no reload was refused" bash -c "! grep -q 'reload failed' '$TMP/out.err'"
progs=$(bpf_progs_of "$TRACERD_PID")
# During the swap, sys_enter_sysfs had three attachments (a, b old, b new):
# copies stay bounded by that, whatever the number of events (and the
# accept half).
check "at most four programs after the reload (got $progs)" [ "$progs" -le 4 ]
read -r pid2 _ _ < <("$FIRE" $N)
sleep 0.3
stop_tracerd
l2=$(grep -c -- "-$pid2 .* sys_sysfs(\|-$pid2 .* sys_enter_sysfs:" "$TMP/out")
check "after it, only a's filter accepts the new workload: $N lines (got $l2)" [ "$l2" = $N ]
check "a's summary: every record, nothing lost" grep -Eq "summary: selection a: $((2 * N)) delivered, 0 lost" "$TMP/out.err"

# Emitted filters: each selection attaches its own programs in the class
# program's place, so the shared event needs no copy. Their code differs
# only by layout: b's filter reads no field, and its 71 events have 7 record
# sizes (0-6 arguments); those with user strings (SyscallStrings=) hand their
# records to the accept half, one more. So at most 2 (the accept program,
# a class program) + 1 (a) + 8 (b): programs grow with layouts, not events.
unset TRACERD_TEST_INTERPRET
conf 'common_pid != 1'
start_tracerd "$TMP/c.conf" "$TMP/out2" || { not_ok "tracerd starts (emitted)"; exit 0; }
progs=$(bpf_progs_of "$TRACERD_PID")
check "emitted: no copy of the class program, one program per layout (got $progs, at most 11)" \
	[ "$progs" -le 11 ]
read -r pid3 _ _ < <("$FIRE" $N)
sleep 0.3
stop_tracerd
l3=$(grep -c -- "-$pid3 .* sys_sysfs(\|-$pid3 .* sys_enter_sysfs:" "$TMP/out2")
check "emitted: each selection writes each record: $((2 * N)) lines (got $l3)" [ "$l3" = $((2 * N)) ]
