#!/usr/bin/env bash
# tracerd as a systemd service, under a real systemd (PID 1 of a container
# booted from the host's /usr) and a real journald: `make install`, start
# (Type=notify), the structured journal entries of known events (exec, a TCP
# connection on loopback, signals), the rate limit's "suppressed" entries,
# reload (changed, broken, and unchanged under load: nothing lost), the
# watchdog, and a clean stop that leaves no BPF program or link behind.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nspawn.sh"
need_root systemd
need_tools systemd systemd-nspawn nsenter jq bpftool python3

RUN=$RANDOM$RANDOM
PROBE=trp-$RUN		# comms (at most 15 characters) this run's workloads carry
SLEEPER=trs-$RUN
COUNTER=trc-$RUN
OPENER=tro-$RUN		# opens known paths (tests/tools/open_paths)
CONF=/etc/tracerd/tracerd.conf
DROPINS=/etc/tracerd/tracerd.conf.d

t0=$(date +%s%N)
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

nspawn_start "$PWD" || { not_ok "container boots"; exit 0; }
ok "container boots with systemd as PID 1 ($(ms_since "$t0") ms)"

# /sys/kernel/tracing is not mounted in here (--private-network hides a bind).
ct mount -t tracefs nodev /sys/kernel/tracing
# `make test` built everything: install only, rebuild nothing.
check "make install into the container" \
	ct make -s -C /opt/ci -o "$BUILD/tracerd" install BUILD="$BUILD" PREFIX=/usr/local
UNIT=/etc/systemd/system/tracerd.service
check "systemd-analyze verify passes on the unit" ct systemd-analyze verify "$UNIT"
check "the shipped config is installed in $CONF" ct cmp /opt/ci/conf/tracerd.conf "$CONF"

# The test config: three selections with their own priorities, one rate
# limited, one counted across reloads.
ct sh -c "cat >$CONF" <<EOF
[Daemon]
FlushIntervalMSec=50
StatsIntervalSec=1

[Selection]
Name=proc
Events=sched:sched_process_exec sched:sched_process_exit sched:sched_process_fork

[Selection]
Name=tcp
Events=sock:inet_sock_set_state
Priority=notice

[Selection]
Name=signals
Events=signal:signal_generate
Priority=warning

[Selection]
Name=limited
Events=syscalls:sys_enter_getpgid
RateLimit=20
RateLimitBurst=20

[Selection]
Name=counted
Events=syscalls:sys_enter_getppid

# Syscall string arguments (SyscallStrings=, default yes).
[Selection]
Name=open
Events=syscalls:sys_enter_openat
Filter=comm == "$OPENER"

# Every context switch on the machine: a sample of 50/s for prev_state.
[Selection]
Name=switch
Events=sched:sched_switch
Priority=debug
RateLimit=50
RateLimitBurst=50
EOF
# A selection the reloads under load change (its Priority).
changed() { ct sh -c "printf '[Selection]\nName=changed\nEvents=syscalls:sys_enter_geteuid\nPriority=$1\n' >$DROPINS/40-changed.conf"; }
ct mkdir -p $DROPINS
changed info
# A watchdog that fires during the test unless the loop pings it.
ct mkdir -p /etc/systemd/system/tracerd.service.d
ct sh -c 'printf "[Service]\nWatchdogSec=2s\n" >/etc/systemd/system/tracerd.service.d/50-test.conf'
# Under ASan (make test SANITIZE=1), LeakSanitizer stops the process's
# threads with ptrace() at exit, which the unit's system call filter denies.
if grep -q __asan_init "$TRACERD"; then
	note "sanitizer build: the unit also allows ptrace() for LeakSanitizer"
	# and it takes tests/lsan.supp, as tests/run.sh gives it to the other tests.
	ct sh -c 'printf "[Service]\nSystemCallFilter=ptrace\nEnvironment=LSAN_OPTIONS=suppressions=/opt/ci/tests/lsan.supp\n" >/etc/systemd/system/tracerd.service.d/60-sanitizer.conf'
fi
ct systemctl daemon-reload

note "systemd-analyze security: $(ct systemd-analyze security tracerd.service 2>&1 | grep 'Overall exposure')"

t=$(date +%s%N)
check "systemctl start tracerd (Type=notify: returns on READY=1)" ct systemctl start tracerd
note "start took $(ms_since "$t") ms"
MAINPID=$(ct systemctl show -P MainPID tracerd)

# Fire the known events right away: READY=1 came after every attachment.
ct cp /usr/bin/true /run/$PROBE
ct cp /usr/bin/sleep /run/$SLEEPER
ct sh -c "for i in 1 2 3 4 5; do /run/$PROBE; done"
PORT=$((20000 + RANDOM % 20000))
CPORT=$(ct python3 -c "
import socket
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('127.0.0.1', $PORT)); l.listen(1)
c = socket.create_connection(('127.0.0.1', $PORT)); a, _ = l.accept()
print(c.getsockname()[1]); c.close(); a.close(); l.close()")
ct sh -c "/run/$SLEEPER 30 & p=\$!; sleep 0.2; kill -WINCH \$p; kill -USR1 \$p; wait \$p; exit 0" 2>/dev/null
ct cp "/opt/ci/$BUILD/tests/tools/open_paths" "/run/$OPENER"
ct "/run/$OPENER" /etc/hostname "/run/$OPENER-no such file" -unmapped >/dev/null

jqq() { jq -e "$@" >/dev/null; }
# Entries as JSON, one per line, for journalctl matches $@.
entries() { ct journalctl -o json --no-pager "$@" 2>/dev/null; }
# Waits until journalctl matches $2... give at least $1 entries, then once
# more to see duplicates; prints the count.
wait_count() {
	local want=$1 n i; shift
	for ((i = 0; i < 100; i++)); do
		n=$(entries "$@" | wc -l)
		[ "$n" -ge "$want" ] && break
		sleep 0.1
	done
	sleep 0.3
	entries "$@" | wc -l
}

# A syscall's user strings: TRACE_FILENAME_STR= beside the pointer, the
# MESSAGE showing it after the pointer; the unmapped address unreadable.
n=$(wait_count 3 TRACE_SELECTION=open TRACE_EVENT=syscalls:sys_enter_openat)
entries TRACE_SELECTION=open TRACE_EVENT=syscalls:sys_enter_openat >"$TMP/open.json"
note "openat entries: $n; $(grep -v -e ld.so.cache -e '/lib/' "$TMP/open.json" | jq -c '{MESSAGE, TRACE_FILENAME, TRACE_FILENAME_STR, TRACE_FILENAME_STR_UNREADABLE}' | tr '\n' ' ')"
check "journal: TRACE_FILENAME_STR= each path opened, in order, the unmapped one TRACE_FILENAME_STR_UNREADABLE=EFAULT" \
	jqq -s --arg p "/run/$OPENER-no such file" '[.[] | select(.TRACE_FILENAME_STR != "/etc/ld.so.cache" and
		(.TRACE_FILENAME_STR // "" | startswith("/lib") | not))] |
	map(.TRACE_FILENAME_STR // ("unreadable " + .TRACE_FILENAME_STR_UNREADABLE)) ==
		["/etc/hostname", $p, "unreadable EFAULT"]' "$TMP/open.json"
check "journal: MESSAGE shows the string after the pointer, or (unreadable)" \
	jqq -s '[.[] | .MESSAGE] | any(test("filename: 0x[0-9a-f]+ \"/etc/hostname\", flags")) and
		any(test("filename: 0x[0-9a-f]+ \\(unreadable\\), flags"))' "$TMP/open.json"

# Execs: one exec, one exit and one fork each, matched by pid.
n=$(wait_count 5 TRACE_EVENT=sched:sched_process_exec TRACE_FILENAME=/run/$PROBE)
check "5 execs of /run/$PROBE: 5 exec entries (got $n)" [ "$n" = 5 ]
pids=$(entries TRACE_EVENT=sched:sched_process_exec TRACE_FILENAME=/run/$PROBE | jq -r .TRACE_FIELD_PID | sort -u)
bad=0
for p in $pids; do
	e=$(entries TRACE_EVENT=sched:sched_process_exit TRACE_FIELD_PID=$p TRACE_COMM=$PROBE | wc -l)
	f=$(entries TRACE_EVENT=sched:sched_process_fork TRACE_CHILD_PID=$p | wc -l)
	[ "$e" = 1 ] && [ "$f" = 1 ] || { bad=$((bad + 1)); note "pid $p: $e exits, $f forks"; }
done
check "5 distinct pids, each with exactly one fork and one exit entry" \
	[ "$(wc -w <<<"$pids")" = 5 -a "$bad" = 0 ]

# The structured fields of one exec entry.
entries TRACE_EVENT=sched:sched_process_exec TRACE_FILENAME=/run/$PROBE | head -1 >"$TMP/exec.json"
note "exec entry: $(jq -c 'with_entries(select(.key | test("^(MESSAGE|PRIORITY|SYSLOG_IDENTIFIER|TRACE_.*)$")))' "$TMP/exec.json")"
check "exec entry: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, TRACE_* header fields" jqq --arg c "$PROBE" '
	(.MESSAGE | startswith("sched_process_exec: ")) and .PRIORITY == "6" and
	.SYSLOG_IDENTIFIER == "tracerd" and .TRACE_CLASS == "sched_process_exec" and
	.TRACE_SELECTION == "proc" and .TRACE_COMM == $c and
	(.TRACE_CPU | test("^[0-9]+$")) and .TRACE_PID == .TRACE_FIELD_PID and
	.TRACE_TID == .TRACE_PID and .TRACE_OLD_PID == .TRACE_PID and
	(.TRACE_TIMESTAMP_NS | test("^[0-9]+$")) and
	((.TRACE_TIME_REALTIME_USEC | tonumber) - (.__REALTIME_TIMESTAMP | tonumber) | fabs) < 5000000 and
	(has("CODE_FILE") | not)' "$TMP/exec.json" >/dev/null

# TCP on loopback: the client's SYN_SENT (before connect() picks the source
# port, so sport 0) and ESTABLISHED, the server's ESTABLISHED, each once.
tcp() { entries TRACE_EVENT=sock:inet_sock_set_state TRACE_SPORT=$1 TRACE_DPORT=$2 | jq -c "$3"; }
wait_count 3 TRACE_EVENT=sock:inet_sock_set_state TRACE_DPORT=$PORT >/dev/null
{ tcp 0 "$PORT" .; tcp "$CPORT" "$PORT" .; } >"$TMP/client.json"
tcp "$PORT" "$CPORT" . >"$TMP/server.json"
note "tcp $CPORT -> $PORT: client $(jq -r .TRACE_NEWSTATE "$TMP/client.json" | xargs), server $(jq -r .TRACE_NEWSTATE "$TMP/server.json" | xargs)"
# The field values are the kernel's symbols, the number beside them as _RAW
# (TRACE_NEWSTATE=TCP_ESTABLISHED, TRACE_NEWSTATE_RAW=1), in MESSAGE too.
est='.TRACE_NEWSTATE == "TCP_ESTABLISHED" and .TRACE_NEWSTATE_RAW == "1"'
syn='.TRACE_NEWSTATE == "TCP_SYN_SENT" and .TRACE_NEWSTATE_RAW == "2"'
fam='.TRACE_FAMILY == "AF_INET" and .TRACE_FAMILY_RAW == "2" and .TRACE_PROTOCOL == "IPPROTO_TCP" and .TRACE_PROTOCOL_RAW == "6"'
check "tcp: MESSAGE shows the states symbolized (newstate=TCP_...)" \
	jqq -s 'length > 0 and all(.[]; .MESSAGE | test("newstate=TCP_[A-Z_]+"))' "$TMP/client.json"
one() { [ "$(jq -c "select($2)" "$1" | wc -l)" = 1 ]; }
check "tcp: client SYN_SENT once" one "$TMP/client.json" "$syn"
check "tcp: client ESTABLISHED once" one "$TMP/client.json" "$est"
check "tcp: server ESTABLISHED once" one "$TMP/server.json" "$est"
check "tcp: family and protocol fields, priority notice" \
	jqq -s "all(.[]; $fam and .PRIORITY == \"5\" and .TRACE_SELECTION == \"tcp\")" "$TMP/client.json"
# sched_switch's prev_state is a flag field: TRACE_PREV_STATE=S beside
# TRACE_PREV_STATE_RAW=1 (sleeping), and always what MESSAGE shows, also
# where the print fmt's ternaries make it: R for a running task (0), R+ for
# a preempted one (256, TASK_REPORT_MAX), D+ and so on.
entries TRACE_EVENT=sched:sched_switch >"$TMP/switch.json"
note "sched_switch prev_state (count value raw): $(jq -r '"\(.TRACE_PREV_STATE) \(.TRACE_PREV_STATE_RAW)"' "$TMP/switch.json" | sort | uniq -c | sort -rn | head -6 | xargs)"
check "sched_switch: TRACE_PREV_STATE=S beside TRACE_PREV_STATE_RAW=1" \
	jqq -s 'map(select(.TRACE_PREV_STATE_RAW == "1")) | length > 0 and all(.[]; .TRACE_PREV_STATE == "S")' "$TMP/switch.json"
mism=$(jq -r '[(.MESSAGE | capture("prev_state=(?<s>[^ ]*) ").s), .TRACE_PREV_STATE, .TRACE_PREV_STATE_RAW] | select(.[0] != .[1]) | join("/")' "$TMP/switch.json" | sort | uniq -c | xargs)
[ -z "$mism" ] || note "prev_state mismatches with MESSAGE (count MESSAGE/field/raw): $mism"
check "sched_switch: TRACE_PREV_STATE is what MESSAGE shows as prev_state= in all $(wc -l <"$TMP/switch.json") entries" \
	jqq -s 'length > 0 and all(.[]; (.MESSAGE | capture("prev_state=(?<s>[^ ]*) ").s) == .TRACE_PREV_STATE)' "$TMP/switch.json"
check "sched_switch: running tasks are R (raw 0) or R+ (raw 256), never empty" \
	jqq -s 'all(.[] | select(.TRACE_PREV_STATE_RAW == "0" or .TRACE_PREV_STATE_RAW == "256");
		.TRACE_PREV_STATE == (if .TRACE_PREV_STATE_RAW == "0" then "R" else "R+" end))' "$TMP/switch.json"

# Signals to the sleeper: SIGWINCH (ignored: result 1), SIGUSR1 (delivered).
sig() { entries TRACE_EVENT=signal:signal_generate TRACE_FIELD_COMM=$SLEEPER TRACE_SIG=$1; }
wait_count 1 TRACE_EVENT=signal:signal_generate TRACE_FIELD_COMM=$SLEEPER TRACE_SIG=10 >/dev/null
check "signal: SIGWINCH once, ignored, priority warning" \
	jqq -s 'length == 1 and .[0].TRACE_RESULT == "1" and .[0].PRIORITY == "4"' <<<"$(sig 28)"
check "signal: SIGUSR1 once, delivered" jqq -s 'length == 1 and .[0].TRACE_RESULT == "0"' <<<"$(sig 10)"

# The rate limit: 2000 getpgid calls against 20/s with a burst of 20.
ct python3 -c 'import os
for _ in range(2000): os.getpgid(0)'
# journalctl cannot match on a field being present: select with jq.
suppressed() { entries TRACE_SELECTION=limited | jq -c 'select(.TRACE_SUPPRESSED)'; }
for ((i = 0; i < 50; i++)); do [ -n "$(suppressed)" ] && break; sleep 0.1; done
suppressed | head -1 | jq -r .MESSAGE >"$TMP/supp"
note "rate limit: $(cat "$TMP/supp")"
check "a 'suppressed N events of E' entry" grep -Eq "suppressed [0-9]+ events of [0-9]+" "$TMP/supp"
# Syscall events: MESSAGE is the kernel's line, with no "event_name: " before
# it; the fields are as for any event ("pid" is TRACE_FIELD_PID: TRACE_PID is
# the header's).
check "syscall entries: MESSAGE 'sys_getpgid(pid: 0)', TRACE_FIELD_PID=0" \
	jqq -s 'length > 0 and all(.[]; .MESSAGE | startswith("sys_getpgid(pid: ")) and
		any(.[]; .MESSAGE == "sys_getpgid(pid: 0)" and .TRACE_FIELD_PID == "0")' \
	<<<"$(entries TRACE_SELECTION=limited TRACE_EVENT=syscalls:sys_enter_getpgid)"

# Reload with a changed config: a new selection takes effect.
reload_wait() { # reload_wait SEQ: waits for the reload entry SEQ; prints TRACE_RELOAD
	local i
	for ((i = 0; i < 100; i++)); do
		entries TRACE_RELOAD_SEQ="$1" | jq -r .TRACE_RELOAD | grep . && return 0
		sleep 0.1
	done
	return 1
}
ct sh -c "printf '[Selection]\nName=added\nEvents=signal:signal_deliver\n' >$DROPINS/50-added.conf"
ct systemctl reload tracerd
check "reload 1: a 'reloaded' entry (TRACE_RELOAD=ok)" [ "$(reload_wait 1)" = ok ]
ct sh -c "/run/$SLEEPER 30 & p=\$!; sleep 0.2; kill -USR2 \$p; wait \$p; exit 0" 2>/dev/null
# A fatal signal is delivered as SIGKILL once the group exits: match any.
n=$(wait_count 1 TRACE_SELECTION=added TRACE_COMM=$SLEEPER)
check "reload 1: the added selection traces (signal_deliver to the sleeper: $n)" [ "$n" = 1 ]
status=$(ct systemctl show -P StatusText tracerd)
note "STATUS=$status"
# Every figure of the accounting that is not zero, or "0 lost" when all are.
check "STATUS= shows events/s, delivered, its losses, 9 selections" \
	grep -Eq "events/s, [0-9]+ delivered(, 0 lost|(, [0-9]+ [a-z]+[a-z ()]*)+), 9 selections" <<<"$status"
# The journal takes the daemon's entries: no fallback to stderr (no_journal.sh).
check "STATUS= does not say the journal is unavailable" \
	bash -c '! grep -q "journal unavailable" <<<"$1"' _ "$status"

# Reload with a broken drop-in: logged with file:line:column, nothing changes.
ct sh -c "printf '[Selection]\nName=bad\nEvents=sched:sched_process_exec\nPriority=loud\n' >$DROPINS/60-broken.conf"
ct systemctl reload tracerd
check "reload 2 (broken config): TRACE_RELOAD=failed" [ "$(reload_wait 2)" = failed ]
msg=$(entries TRACE_RELOAD_SEQ=2 | jq -r .MESSAGE)
note "$msg"
check "reload 2: the error names $DROPINS/60-broken.conf:4:10" \
	grep -q "$DROPINS/60-broken.conf:4:10: expected a syslog priority" <<<"$msg"
check "reload 2: still active, same main pid" \
	[ "$(ct systemctl is-active tracerd)" = active -a "$(ct systemctl show -P MainPID tracerd)" = "$MAINPID" ]
ct sh -c "/run/$SLEEPER 30 & p=\$!; sleep 0.2; kill -USR2 \$p; wait \$p; exit 0" 2>/dev/null
n=$(wait_count 2 TRACE_SELECTION=added TRACE_COMM=$SLEEPER)
check "reload 2: the running config still traces ($n signal_deliver entries)" [ "$n" = 2 ]
ct rm -f $DROPINS/60-broken.conf

# Reloads under load: a workload calls getppid and geteuid continuously for
# 4 s while the config is reloaded 4 times. The unchanged selection
# "counted" (getppid) must deliver every call exactly once; so must
# "changed" (geteuid), whose Priority changes each time: it keeps its
# attachment, and the new priority shows. "added" comes and goes.
ids_of() { ct sh -c "cat /proc/$1/fdinfo/* 2>/dev/null" | awk -v k="$2:" '$1 == k {print $2}' | sort -u; }
ids_of "$MAINPID" link_id >"$TMP/links.before"
ct python3 -c "
import os, time
open('/proc/self/comm', 'w').write('$COUNTER')
n, end = 0, time.monotonic() + 4
while time.monotonic() < end:
    for _ in range(100): os.getppid(); os.geteuid()
    n += 100
    time.sleep(0.06)
print(n)" >"$TMP/fired" &
fire=$!
for seq in 3 4 5 6; do
	sleep 0.5
	if [ $((seq % 2)) = 1 ]; then ct rm -f $DROPINS/50-added.conf; changed notice; else
		ct sh -c "printf '[Selection]\nName=added\nEvents=signal:signal_deliver\n' >$DROPINS/50-added.conf"
		changed info
	fi
	ct systemctl reload tracerd
	[ "$(reload_wait $seq)" = ok ] || not_ok "reload $seq under load"
done
wait $fire
fired=$(cat "$TMP/fired")
got=$(wait_count "$fired" TRACE_SELECTION=counted TRACE_COMM=$COUNTER)
note "getppid calls: $fired, journal entries: $got, over 4 reloads"
check "reload under load: every event of an unchanged selection arrives once ($got of $fired)" \
	[ "$got" = "$fired" -a "$fired" -gt 1000 ]
ch=$(wait_count "$fired" TRACE_SELECTION=changed TRACE_COMM=$COUNTER)
prios=$(entries TRACE_SELECTION=changed TRACE_COMM=$COUNTER | jq -r .PRIORITY | sort | uniq -c | xargs)
note "changed selection: $ch entries of $fired geteuid calls; by priority (count priority): $prios"
check "reload under load: a changed Priority= loses none, duplicates none ($ch of $fired)" [ "$ch" = "$fired" ]
check "reload under load: the changed Priority= takes effect (notice 5 and info 6 seen)" \
	grep -Eq "^[0-9]+ 5 [0-9]+ 6$" <<<"$prios"
ids_of "$MAINPID" link_id >"$TMP/links.after"
kept=$(comm -12 "$TMP/links.before" "$TMP/links.after" | wc -l)
note "BPF links before the reloads: $(wc -l <"$TMP/links.before"), after: $(wc -l <"$TMP/links.after"), the same: $kept"
check "reloads kept every link but the added selection's" \
	[ "$kept" = $(($(wc -l <"$TMP/links.before") - 1)) -a "$(wc -l <"$TMP/links.after")" = "$(wc -l <"$TMP/links.before")" ]

# The watchdog (2 s here) would have killed a loop that does not ping.
check "watchdog: never fired, no restart, same main pid" \
	[ "$(ct systemctl show -P NRestarts tracerd)" = 0 -a "$(ct systemctl show -P MainPID tracerd)" = "$MAINPID" ]
check "periodic TRACE_STATS entries" [ "$(entries TRACE_STATS=1 TRACE_STATS_FINAL=0 | wc -l)" -gt 0 ]

# Stop: exit 0 promptly, a summary per selection, no BPF left.
progs=$(ids_of "$MAINPID" prog_id)
links=$(ids_of "$MAINPID" link_id)
note "tracerd (pid $MAINPID in the container) holds BPF programs $(echo $progs), $(wc -w <<<"$links") links"
t=$(date +%s%N)
ct systemctl stop tracerd
stop_ms=$(ms_since "$t")
status=$(ct systemctl show -P ExecMainStatus tracerd) result=$(ct systemctl show -P Result tracerd)
check "stop: exit status 0, result success ($stop_ms ms)" [ "$status" = 0 -a "$result" = success ]
[ "$status" = 0 ] || ct journalctl -u tracerd -o cat --no-pager | grep -vE '^(sched|signal|inet|sys)_' | tail -25 | sed 's/^/#   /'
# Not a speed limit (tests beside this one detach too, and each detach
# waits its turn under the kernel's event_mutex): a stop that waits for
# nothing but its own detach ends long before the timeout.
check "stop: well inside TimeoutStopSec=90s ($stop_ms ms < 30000)" [ "$stop_ms" -lt 30000 ]
n=$(entries TRACE_STATS=1 TRACE_STATS_FINAL=1 | jq -r .TRACE_SELECTION | sort -u | wc -l)
check "stop: a final summary entry for each of the 9 selections ($n)" [ "$n" = 9 ]
# The kernel's skips are the daemon's figure (one shared program): the same in
# every selection's final entry, and in the daemon-wide summary line.
skips=$(entries TRACE_STATS=1 TRACE_STATS_FINAL=1 | jq -r '.TRACE_STATS_SKIPPED // "none"' | sort -u)
daemon_skips=$(entries TRACE_STATS_SKIPPED="$skips" | jq -r 'select(.TRACE_STATS == null) | .MESSAGE' | grep -c "^summary: $skips skipped by the kernel")
note "skipped by the kernel: $skips (final entries), $daemon_skips daemon-wide summary line(s)"
skips_ok() { [ "$(wc -l <<<"$skips")" = 1 ] && [[ "$skips" =~ ^[0-9]+$ ]] && [ "$daemon_skips" -ge 1 ]; }
check "stop: TRACE_STATS_SKIPPED= in every final entry, one figure, and a summary line saying it" skips_ok
entries TRACE_STATS_FINAL=1 TRACE_SELECTION=limited >"$TMP/limited.json"
supp_reported=$(suppressed | jq -s 'map(.TRACE_SUPPRESSED | tonumber) | add')
delivered=$(entries TRACE_SELECTION=limited TRACE_EVENT=syscalls:sys_enter_getpgid | wc -l)
note "limited: summary $(jq -r .MESSAGE "$TMP/limited.json"); 'suppressed' entries add up to $supp_reported; $delivered events in the journal"
check "rate limit: suppressed entries add up to the summary's count" \
	jqq --argjson s "${supp_reported:-0}" --argjson d "$delivered" \
	'(.TRACE_STATS_SUPPRESSED | tonumber) == $s and (.TRACE_STATS_DELIVERED | tonumber) == $d and $s >= 1900' \
	"$TMP/limited.json"
gone() {
	local i id left
	[ -n "$progs" ] || return 1
	for ((i = 0; i < 50; i++)); do
		left=0
		for id in $progs; do bpftool prog show id "$id" >/dev/null 2>&1 && left=$((left + 1)); done
		for id in $links; do bpftool link show id "$id" >/dev/null 2>&1 && left=$((left + 1)); done
		[ $left = 0 ] && return 0
		sleep 0.1
	done
	note "$left BPF programs or links of tracerd left"
	return 1
}
check "stop: none of tracerd's BPF programs and links is left" gone

# Start with a broken config: the error at err priority with its
# file:line:column, exit status 78 (EX_CONFIG), and no restart loop.
ct sh -c "printf '[Daemon]\nRingBufferSize=3M\n[Selection]\nName=x\nEvents=sched:sched_process_exec\n' >$CONF"
fails() { ! "$@"; }
check "start with a broken config fails" fails ct systemctl start tracerd
sleep 2.5	# RestartSec=2s: long enough for a restart to show
msg=$(entries _SYSTEMD_UNIT=tracerd.service PRIORITY=3 | jq -r .MESSAGE | grep -F "$CONF:2:16:")
note "$msg"
check "broken config: the error names $CONF:2:16 at priority err" [ -n "$msg" ]
check "broken config: exit status 78, not restarted" \
	[ "$(ct systemctl show -P ExecMainStatus tracerd)" = 78 -a "$(ct systemctl show -P NRestarts tracerd)" = 0 \
	  -a "$(ct systemctl is-active tracerd)" = failed ]

# ---- begin: issue 11, tracerd in a PID namespace and without tracefs ----
# (self-contained: its own config, starts and stops; runs after the checks above)

# The host's pid of container pid $1: its NSpid line ends with $1, in the
# container's PID namespace.
selftgid_host_pid() {
	local ns p
	ns=$(readlink /proc/"$CT_PID"/ns/pid)
	for p in $(pgrep -x tracerd); do
		[ "$(readlink /proc/"$p"/ns/pid 2>/dev/null)" = "$ns" ] || continue
		[ "$(awk '/^NSpid:/ {print $NF}' /proc/"$p"/status 2>/dev/null)" = "$1" ] && { echo "$p"; return 0; }
	done
	return 1
}

# Starts the unit and checks that it failed with exit status $1, was not
# restarted, and logged $2 at priority err.
selftgid_start_fails() {
	local want=$1 msg=$2 t0 got
	ct systemctl reset-failed tracerd 2>/dev/null
	t0=$(date '+%Y-%m-%d %H:%M:%S')
	check "tracefs, status $want: start fails" fails ct systemctl start tracerd
	sleep 2.5	# RestartSec=2s: long enough for a restart to show
	got=$(entries _SYSTEMD_UNIT=tracerd.service PRIORITY=3 --since "$t0" | jq -r .MESSAGE)
	note "$got"
	check "tracefs, status $want: the message says '$msg'" grep -qF "$msg" <<<"$got"
	check "tracefs, status $want: exit status $want, not restarted" \
		[ "$(ct systemctl show -P ExecMainStatus tracerd)" = "$want" -a "$(ct systemctl show -P NRestarts tracerd)" = 0 \
		  -a "$(ct systemctl is-active tracerd)" = failed ]
}

# The config of both: what tracerd's own work fires (journal writes, epoll,
# timers), rate limited, and sysfs(2), which only fire_syscall calls.
selftgid_conf() {
	ct sh -c "cat >$CONF" <<-CONF
	[Daemon]
	FlushIntervalMSec=50
	[Selection]
	Name=self
	Events=syscalls:sys_enter_sendmsg syscalls:sys_enter_epoll_wait syscalls:sys_enter_timerfd_settime syscalls:sys_enter_write
	RateLimit=500
	RateLimitBurst=500
	[Selection]
	Name=sysfs
	Events=syscalls:sys_enter_sysfs
	CONF
	ct rm -rf $DROPINS
}

# Not mounted (and the unit may not mount it): 69. Mounted, but the unit
# lacks CAP_DAC_READ_SEARCH for the 0700 tracefs, or CAP_BPF: 77. None restarts.
selftgid_tracefs() {
	ct umount /sys/kernel/tracing
	selftgid_start_fails 69 "tracefs is not mounted at /sys/kernel/tracing, and tracerd may not mount it (Operation not permitted)"
	ct mount -t tracefs nodev /sys/kernel/tracing
	ct sh -c 'printf "[Service]\nAmbientCapabilities=\nAmbientCapabilities=CAP_BPF CAP_PERFMON\n" >/etc/systemd/system/tracerd.service.d/70-nodac.conf'
	ct systemctl daemon-reload
	selftgid_start_fails 77 "cannot read tracefs at /sys/kernel/tracing: Permission denied (mode 0700, owner 0:0; tracerd runs as uid"
	# Without CAP_BPF and CAP_PERFMON the kernel refuses the program: 77 too.
	ct sh -c 'printf "[Service]\nAmbientCapabilities=\nAmbientCapabilities=CAP_DAC_READ_SEARCH\n" >/etc/systemd/system/tracerd.service.d/70-nodac.conf'
	ct systemctl daemon-reload
	selftgid_start_fails 77 "cannot load the BPF program: Operation not permitted (tracerd needs CAP_BPF and CAP_PERFMON)"
	ct rm -f /etc/systemd/system/tracerd.service.d/70-nodac.conf
	ct systemctl daemon-reload
	ct systemctl reset-failed tracerd
}

# Self-exclusion: the BPF program sees init-namespace tgids, so tracerd must
# exclude the one the kernel gives it, not its number in the container.
# tracerd starts as container pid P, a pid free on the host; a host process
# then takes pid P and fires 100 sysfs(2) calls: all 100 must be traced.
# And none of the events tracerd's own work fires (journal writes, epoll,
# timers) may carry tracerd's host tgid.
selftgid_self() {
	local p i host fired n self others ct_main
	local pid_at=$PWD/$BUILD/tests/tools/pid_at fire=$FIRE
	for ((i = 0; i < 20; i++)); do
		p=$((10000 + RANDOM % 20000))
		[ -e /proc/$p ] || break
	done
	# The next pid in the container is ns_last_pid + 1: written from the
	# host's /proc (the container's /proc/sys is read-only) by a process in
	# the container's PID namespace; `ct` itself takes P - 1.
	nsenter --target "$CT_PID" --pid -- sh -c "echo $((p - 2)) >/proc/sys/kernel/ns_last_pid"
	check "self: systemctl start tracerd" ct systemctl --no-ask-password start tracerd
	ct_main=$(ct systemctl show -P MainPID tracerd)
	host=$(selftgid_host_pid "$ct_main")
	note "self: tracerd is pid $ct_main in the container (wanted $p), $host on the host"
	check "self: tracerd's host pid found, and not its container pid" [ -n "$host" -a "$host" != "$ct_main" ]
	if [ "$ct_main" = "$p" ] && [ ! -e /proc/"$p" ]; then
		fired=$("$pid_at" "$p" "$fire" 100)
		note "self: host process at pid $p fired: $fired"
		n=$(wait_count 100 TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$p")
		check "self: a host process with tracerd's container pid $p is traced ($n of 100)" \
			[ "${fired%% *}" = "$p" -a "$n" = 100 ]
	else
		ok "self: a host process with tracerd's container pid is traced # SKIP tracerd got pid $ct_main, not $p, or $p is taken on the host"
		"$fire" 100 >/dev/null
	fi
	sleep 1	# tracerd's journal writes, epoll waits and timers meanwhile
	self=$(entries TRACE_SELECTION=self TRACE_PID="$host" | wc -l)
	others=$(entries TRACE_SELECTION=self | wc -l)
	note "self: $others entries of the 'self' selection, $self of them with tracerd's host tgid $host; by comm: $(entries TRACE_SELECTION=self | jq -r .TRACE_COMM | sort | uniq -c | sort -rn | head -5 | xargs)"
	check "self: tracerd's own events are not traced (0 entries with TRACE_PID=$host)" [ -n "$host" -a "$self" = 0 ]
	check "self: the same events of other processes are (journald's at least)" \
		[ "$(entries TRACE_SELECTION=self _COMM=tracerd TRACE_COMM=systemd-journal | wc -l)" -gt 0 ]
	ct systemctl stop tracerd
}

selftgid_conf
selftgid_tracefs
selftgid_self
# ---- end: issue 11 ----

# --- pointers (issue 11.1): no kernel address in the journal --------------
# As the unit's dynamic user with RawPointers=no (the default), events that
# carry pointers (kfree's ptr and %pS call_site, inet_sock_set_state's
# skaddr) must reach the journal hashed or symbolized: no field tracerd
# writes may hold a kernel address, in hex (0xffff..., or %p's 16 digits) or
# decimal (>= 0xffff800000000000). The pointer fields must be there, so that
# the check cannot pass on entries without them.
pointers_check() {
	local f=$TMP/pointers.json hex dec addr='(^|[^0-9a-fA-F])(0x)?ffff[89a-f][0-9a-f]{11}([^0-9a-f]|$)'
	ct rm -rf $DROPINS
	ct sh -c "printf '[Daemon]\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=/var/lib/tracerd/pointers\n[Selection]\nName=pointers-store\nEvents=kmem:kfree\nOutput=store\n[Selection]\nName=pointers-kfree\nEvents=kmem:kfree\nRateLimit=200\nRateLimitBurst=200\n[Selection]\nName=pointers-tcp\nEvents=sock:inet_sock_set_state\n' >$CONF"
	ct systemctl reset-failed tracerd
	check "pointers: start with kmem:kfree and sock:inet_sock_set_state" ct systemctl start tracerd
	connect() { ct python3 -c "
import socket
for i in range($1):
    l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(1)
    c = socket.create_connection(l.getsockname()); a, _ = l.accept(); c.close(); a.close(); l.close()"; }
	connect 1
	wait_count 3 TRACE_SELECTION=pointers-tcp >/dev/null
	wait_count 20 TRACE_SELECTION=pointers-kfree >/dev/null
	# At least 40 distinct pointers freed in the journal, so that its group
	# in the brute force below means something: a hot loop beside (a
	# compiler) frees the same few objects again and again, under the rate
	# limit (11 of 353 entries in a CI run).
	for ((i = 0; i < 50; i++)); do
		[ "$(entries TRACE_SELECTION=pointers-kfree | jq -r .MESSAGE | kfree_ptrs /dev/stdin |
			grep -v '^0*$' | sort -u | wc -l)" -ge 40 ] && break
		connect 20
		sleep 0.2
	done
	ct systemctl stop tracerd
	entries TRACE_SELECTION=pointers-kfree + TRACE_SELECTION=pointers-tcp >"$f"
	note "pointers: $(jq -r .TRACE_EVENT "$f" | sort | uniq -c | xargs); e.g. $(jq -r 'select(.TRACE_EVENT == "kmem:kfree") | "\(.MESSAGE) TRACE_CALL_SITE=\(.TRACE_CALL_SITE) TRACE_PTR=\(.TRACE_PTR)"' "$f" | head -1)"
	check "pointers: kfree entries with TRACE_PTR, TRACE_CALL_SITE; tcp ones with TRACE_SKADDR" jqq -s '
		(map(select(.TRACE_EVENT == "kmem:kfree" and .TRACE_PTR and .TRACE_CALL_SITE)) | length >= 20) and
		(map(select(.TRACE_EVENT == "sock:inet_sock_set_state" and .TRACE_SKADDR)) | length >= 3)' "$f"
	# The fields tracerd writes: journald's own (_*, __*) are not its output.
	jq -r 'to_entries[] | select(.key | startswith("_") | not) | "\(.key)=\(.value)"' "$f" >"$TMP/pointers.fields"
	hex=$(grep -Ec "$addr" "$TMP/pointers.fields")
	dec=$(grep -Eo '[0-9]{20}' "$TMP/pointers.fields" | awk '$1 >= "18446603336221196288"' | wc -l)
	[ "$hex$dec" = 00 ] || note "addresses: $(grep -E "$addr" "$TMP/pointers.fields" | head -3 | xargs)"
	check "pointers: no kernel address in $(wc -l <"$TMP/pointers.fields") fields ($hex in hex, $dec in decimal)" \
		[ "$hex" = 0 -a "$dec" = 0 ]
	# Without CAP_SYSLOG (the unit's choice) kallsyms shows no address: %pS
	# comes from the kernel's own printf (attach/ksym.c), "func+0x12/0x40",
	# as the kernel's trace prints it; %p prints a hash. Never the address.
	check "pointers: every kfree line is call_site=<symbol+0xoff/0xsize> ptr=<hash>" jqq -s '
		map(select(.TRACE_EVENT == "kmem:kfree") | .MESSAGE |
		    test("^kfree: call_site=[A-Za-z_][^ ]*\\+0x[0-9a-f]+/0x[0-9a-f]+ ptr=[0-9a-f]{16}$"))
		| length >= 20 and all' "$f"
	pointer_key_check "$f"
}

# --- the pointer key (issue 19.1): hashes nobody can reverse --------------
# The unit hashes with a secret key per boot in its RuntimeDirectory=, not
# with the boot id (which, under ProcSubset=pid, it could not even read: the
# key was all zeros). The key file is the dynamic user's, 0600; root's
# `--read` of the unit's store prints the journal's hashes; and the issue's
# brute force, as nobody with every key nobody can read (the container's
# boot id and machine id, two ways each, and the zero key), reverses none
# of the journal's or --read's pointers, while the same search with the
# secret key reverses all of them. The truth: --read --raw-pointers. The
# store's selection is attached first: the journal's kfree calls are in it.
pointer_key_check() {
	local f=$1 key=/run/tracerd/pointer-key dir=/var/lib/tracerd/pointers brute owner n before
	brute=/opt/ci/$BUILD/tests/tools/ptr_brute
	owner=$(ct stat -c %u /var/lib/private/tracerd)
	check "pointer key: $key is the dynamic user's (uid $owner), mode 0600, in a 0700 directory" \
		[ "$(ct stat -L -c '%a %u' $key)" = "600 $owner" -a "$owner" != 0 -a "$(ct stat -L -c %a /run/tracerd)" = 700 ]
	check "pointer key: it names the container's boot" \
		ct sh -c "grep -qx boot_id=\$(cat /proc/sys/kernel/random/boot_id) $key"
	check "pointer key: nobody cannot read it" fails ct setpriv --reuid=nobody --regid=nogroup --clear-groups cat $key 2>/dev/null
	jq -r 'select(.TRACE_EVENT == "kmem:kfree") | .MESSAGE' "$f" >"$TMP/journal.msg"
	ct tracerd --read $dir >"$TMP/pread" 2>"$TMP/pread.err"
	ct tracerd --read --raw-pointers $dir >"$TMP/praw"
	kfree_ptrs "$TMP/journal.msg" | grep -v '^0*$' | sort -u >"$TMP/journal.hs"
	kfree_ptrs "$TMP/pread" | sort -u >"$TMP/pread.hs"
	n=$(comm -12 "$TMP/journal.hs" "$TMP/pread.hs" | wc -l)
	note "pointer key: $(wc -l <"$TMP/journal.hs") pointer hashes in the journal, $n of them in root's --read of the store ($(wc -l <"$TMP/pread.hs"))"
	check "pointer key: root's --read prints the journal's hashes, without a warning" \
		bash -c "[ $n -ge $(($(wc -l <"$TMP/journal.hs") * 9 / 10)) -a $n -ge 10 ] &&
			! grep -q 'pointers are hashed' '$TMP/pread.err'"	# it may say what the ring buffer lost
	{ sed 's/^/journal /' "$TMP/journal.hs"
	  paste -d' ' <(kfree_ptrs "$TMP/pread") <(kfree_ptrs "$TMP/praw") | sed 's/^/read /'; } >"$TMP/ppairs"
	ct setpriv --reuid=nobody --regid=nogroup --clear-groups "$brute" zero \
		uuid:/proc/sys/kernel/random/boot_id uuid-le:/proc/sys/kernel/random/boot_id \
		uuid:/etc/machine-id uuid-le:/etc/machine-id <"$TMP/ppairs" >"$TMP/pbrute" 2>&1
	ct "$brute" keyfile:$key <"$TMP/ppairs" >"$TMP/pcontrol" 2>&1
	sed 's/^/#   /' "$TMP/pbrute"
	sed 's/^/#   control: /' "$TMP/pcontrol"
	check "pointer key: the brute force as nobody, 5 keys: no pointer reversed, candidates by chance only" \
		brute_verdict "$TMP/pbrute" unbroken 5
	check "pointer key: the same search with the secret key: every pointer reversed" \
		brute_verdict "$TMP/pcontrol" broken 1
	# Kept across a restart, and a stop and start: hashes compare within a boot.
	before=$(ct sha256sum $key)
	ct systemctl start tracerd && ct systemctl restart tracerd && ct systemctl stop tracerd
	check "pointer key: the same key after a start, a restart and a stop" [ "$(ct sha256sum $key)" = "$before" ]
	ct rm -rf /var/lib/private/tracerd/pointers
}
pointers_check
# --- end pointers --------------------------------------------------------


# --- the store (issue 13): Output=store as the unit's dynamic user --------
# The unit writes into its StateDirectory= (all else is read-only to it), and
# `tracerd --read` reads every record back: 100 sysfs(2) calls fired from the
# host, each once.
store_check() {
	local fire=$FIRE pid n owner
	ct rm -rf $DROPINS
	ct sh -c "printf '[Daemon]\nOutput=store\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Selection]\nName=store-sysfs\nEvents=syscalls:sys_enter_sysfs\n' >$CONF"
	ct systemctl reset-failed tracerd
	check "store: systemctl start tracerd with Output=store" ct systemctl start tracerd
	read -r pid _ < <("$fire" 100)
	sleep 0.3
	# One writer per directory, under the unit's sandbox too (issue 19).
	local holder rc
	holder=$(ct cat /var/lib/tracerd/.lock)
	check "store: the lock file names the service's main pid ($holder)" \
		[ "$holder" = "$(ct systemctl show -p MainPID --value tracerd)" ]
	# A hang guard: a second tracerd that took the directory would run on.
	ct timeout 60 tracerd --config "$CONF" >/dev/null 2>"$TMP/second.err"
	rc=$?
	check "store: a second tracerd on the directory exits 78, naming the service ($rc: $(head -c 160 "$TMP/second.err"))" \
		eval '[ $rc = 78 ] && grep -q "is written by another tracerd (pid $holder," "$TMP/second.err"'
	ct systemctl stop tracerd
	owner=$(ct sh -c 'stat -c %u /var/lib/private/tracerd/*.tstore' | sort -u)
	check "store: files in the StateDirectory=, owned by the dynamic user (uid $owner)" \
		[ -n "$owner" -a "$owner" != 0 ]
	ct tracerd --read /var/lib/tracerd >"$TMP/store.txt" 2>"$TMP/store.err"
	check "store: tracerd --read /var/lib/tracerd exits 0" [ $? = 0 ]
	n=$(grep -c -- "-$pid *\[[0-9]*\] .*: sys_sysfs(option: 3, " "$TMP/store.txt")
	check "store: the 100 sysfs calls read back, each once ($n)" [ "$n" = 100 ]
	ct tracerd --read /var/lib/tracerd --json --events 'syscalls:sys_enter_sysfs' >"$TMP/store.json"
	check "store: --json gives the journal's fields" jqq -s --arg p "$pid" '
		map(select(.TRACE_PID == $p)) | length == 100 and
		all(.TRACE_EVENT == "syscalls:sys_enter_sysfs" and .TRACE_SELECTION == "store-sysfs" and
		    .TRACE_OPTION == "3" and (.MESSAGE | startswith("sys_sysfs(option: 3")))' "$TMP/store.json"
	# Shipped: the files copied out of the container (another host, as far
	# as the reader can tell) read back on the host exactly as inside.
	mkdir -p "$TMP/shipped"
	ct sh -c 'cd /var/lib/private/tracerd && tar -cf - *.tstore' | tar -C "$TMP/shipped" -xf -
	"$TRACERD" --read "$TMP/shipped" >"$TMP/shipped.txt" 2>"$TMP/shipped.err"
	check "store: files copied to the host read back with --read (exit $?)" [ $? = 0 ]
	check "store: what the host reads equals what the container read" cmp -s "$TMP/store.txt" "$TMP/shipped.txt"
	# And exports for trace-cmd on the host (issue 22): the same records.
	"$TRACERD" --read "$TMP/shipped" --trace-dat "$TMP/shipped.dat" 2>"$TMP/shipped-dat.err"
	check "store: the shipped files export as trace.dat (exit $?: $(cat "$TMP/shipped-dat.err"))" [ -s "$TMP/shipped.dat" ]
	n=$(trace-cmd report -N "$TMP/shipped.dat" 2>/dev/null | grep -c ' sys_enter_sysfs: ')
	check "store: trace-cmd report shows the container's records ($n of $(grep -c 'sys_sysfs(' "$TMP/store.txt"))" \
		[ "$n" -gt 0 -a "$n" = "$(grep -c 'sys_sysfs(' "$TMP/store.txt")" ]
	note "shipped: $(cat "$TMP/shipped.err")"
	check "store: the host says the files are another boot's: their pointers hash with a key of its own" \
		grep -q "written on another boot ($(ct cat /proc/sys/kernel/random/boot_id)): pointers are hashed with a key of this run only" "$TMP/shipped.err"
}
store_check
# --- end store -----------------------------------------------------------

t=$(date +%s%N)
nspawn_stop
note "container stopped in $(ms_since "$t") ms; whole test $(ms_since "$t0") ms"
left=$(for cg in $(nspawn_cgroups); do [ -d "$cg" ] && echo "$cg"; done)
check "container stopped, its cgroups removed" [ -z "$left" ]
