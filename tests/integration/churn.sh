#!/usr/bin/env bash
# Attach/detach churn: 200 reloads (SIGHUP) cycling through selections that
# add, drop and change events leave nothing behind: the same number of
# file descriptors, BPF programs, links and maps as before, by tracerd's
# /proc/PID/fd and fdinfo and by bpftool's list of links to its program;
# and it still delivers every event afterwards.
. "$(dirname "$0")/../lib.sh"
need_root churn
CYCLES=${CHURN_CYCLES:-200}

A=$'[Daemon]\nFlushIntervalMSec=10\nStatsIntervalSec=0\n[Selection]\nName=base\nEvents=syscalls:sys_enter_sysfs\n'
# Each step adds, drops, changes or renames a selection of one or two
# events: a changed or renamed selection is attached anew and the old one
# detached. (Detaching a tracepoint costs the kernel an RCU grace period,
# about 0.1 s on a busy 2-core machine: small steps keep this test short.)
configs=(
	"$A"
	"$A"$'[Selection]\nName=x\nEvents=syscalls:sys_exit_sysfs\n'
	"$A"$'[Selection]\nName=x\nEvents=syscalls:sys_exit_sysfs\nPriority=debug\n'
	"$A"$'[Selection]\nName=y\nEvents=sched:sched_wakeup_new\nRateLimit=10\n'
	$'[Daemon]\nFlushIntervalMSec=10\nStatsIntervalSec=0\n[Selection]\nName=renamed\nEvents=syscalls:sys_enter_sysfs\n'
)
printf '%s' "$A" >"$TMP/c.conf"
start_tracerd "$TMP/c.conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }

counts() { # fds progs links maps links-by-bpftool (to any of tracerd's programs)
	local pid=$TRACERD_PID progs
	progs=$(cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -u | paste -sd,)
	echo "$(ls /proc/"$pid"/fd | wc -l) $(bpf_ids_of "$pid" prog_id) $(bpf_ids_of "$pid" link_id)" \
		"$(bpf_ids_of "$pid" map_id)" \
		"$(bpftool -j link show 2>/dev/null | python3 -c "import json,sys; p={int(x) for x in sys.argv[1].split(',') if x}; print(sum(1 for l in json.load(sys.stdin) if l.get('prog_id') in p))" "$progs")"
}
before=$(counts)
note "before: fds progs links maps bpftool-links = $before"

reloads() { grep -c "reloaded" "$TMP/out.err"; }
done_ok=0
t0=$(date +%s)
for ((c = 1; c <= CYCLES; c++)); do
	printf '%s' "${configs[c % ${#configs[@]}]}" >"$TMP/c.conf"
	want=$c
	kill -HUP "$TRACERD_PID"
	for ((i = 0; i < 3000; i++)); do
		[ "$(reloads)" -ge "$want" ] && break
		sleep 0.01
	done
	[ "$(reloads)" -ge "$want" ] && done_ok=$((done_ok + 1))
done
note "$done_ok of $CYCLES reloads answered in $(( $(date +%s) - t0 )) s"
check "$CYCLES reloads with changing selections all succeed" [ "$done_ok" = "$CYCLES" ]
check "no reload failed" [ "$(grep -c 'reload failed' "$TMP/out.err")" = 0 ]

# Back to the first config; everything else must be gone.
printf '%s' "$A" >"$TMP/c.conf"
kill -HUP "$TRACERD_PID"
for ((i = 0; i < 3000; i++)); do [ "$(reloads)" -gt "$CYCLES" ] && break; sleep 0.01; done
after=$(counts)
note "after:  fds progs links maps bpftool-links = $after"
check "same fds, programs, links, maps (and bpftool links) after $CYCLES reloads" [ "$before" = "$after" ]
read -r b_fds b_progs b_links b_maps b_tool <<<"$before"
# The accept program (where emitted programs send what they do not write)
# and the event's emitted program; no class program (no event runs it);
# one link.
check "two BPF programs (the accept program, the emitted one), one link for the one event" \
	[ "$b_progs" = 2 -a "$b_links" = 1 -a "$b_tool" = 1 ]

read -r pid _ < <("$FIRE" 500)
sleep 0.1
stop_tracerd
got=$(grep -c -- "-$pid .*: sys_sysfs(option: " "$TMP/out")
check "after the churn every event is still delivered (500 of 500, got $got)" [ "$got" = 500 ]
