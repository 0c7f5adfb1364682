#!/usr/bin/env bash
# Events by service under a real systemd (PID 1 of a container booted from
# the host's /usr; the hierarchy here is hybrid: cgroup2 at
# /sys/fs/cgroup/unified) and a real journald. Two transient services
# (systemd-run --unit=) and a unit of root's user manager make the same
# syscalls, all started after tracerd: every journal entry's TRACE_UNIT= is
# the unit of its TRACE_PID= as `systemctl show -p MainPID` and
# /proc/PID/cgroup say; the user unit's entries say TRACE_USER_UNIT=.
# Unit= keeps exactly one service's records, its restart (a new cgroup)
# included.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nspawn.sh"
need_root systemd_units
need_tools systemd_units systemd-nspawn nsenter jq python3

RUN=$RANDOM
A=tru-a$RUN B=tru-b$RUN U=tru-u$RUN	# units; their programs carry the same comms
N=20					# getppid calls per run
CONF=/etc/tracerd/tracerd.conf

nspawn_start "$PWD" || { not_ok "systemd_units: container boots"; exit 0; }
ct mount -t tracefs nodev /sys/kernel/tracing
ct make -s -C /opt/ci -o "$BUILD/tracerd" install BUILD="$BUILD" PREFIX=/usr/local ||
	{ not_ok "systemd_units: make install"; exit 0; }
cg2=$(ct grep -o ' [^ ]* [^ ]* [^ ]* - cgroup2 ' /proc/self/mountinfo | cut -d' ' -f2)
note "the container's cgroup2 mount: $cg2"
if [ "${NSPAWN_UNIFIED:-0}" = 1 ]; then
	check "unified hierarchy: cgroup2 alone, at /sys/fs/cgroup (no cgroup v1 mount in the container)" \
		[ "$cg2" = /sys/fs/cgroup -a "$(ct grep -c ' - cgroup ' /proc/self/mountinfo)" = 0 ]
fi
# The user manager needs PAM's configuration, which the empty /etc lacks.
tar -C /etc -c pam.d security 2>/dev/null | ct tar -C /etc -x
ct systemctl start user@0.service || { not_ok "systemd_units: user@0.service starts"; exit 0; }

ct sh -c "cat >$CONF" <<EOF
[Daemon]
FlushIntervalMSec=50
StatsIntervalSec=0

[Selection]
Name=all
Events=syscalls:sys_enter_getppid
Filter=comm ~ "tru-*$RUN"

[Selection]
Name=one
Events=syscalls:sys_enter_getppid
Unit=$A.service

[Selection]
Name=stored
Events=syscalls:sys_enter_getppid
Filter=comm ~ "tru-*$RUN"
Output=store

[Selection]
Name=first
Events=syscalls:sys_enter_getppid syscalls:sys_enter_execve
Unit=trf$RUN-*.service
EOF
ct systemctl start tracerd || { not_ok "systemd_units: tracerd starts"; exit 0; }

# run UNIT [--user]: the unit's program makes N getppid calls, then waits
# while its MainPID and /proc/PID/cgroup are read (into $TMP/pids: PID UNIT
# CGROUP), and the unit is stopped.
run() {
	local unit=$1 user=${2:-} pid i
	local sys=(env XDG_RUNTIME_DIR=/run/user/0)
	ct cp /usr/bin/perl "/run/$unit"
	ct "${sys[@]}" systemd-run $user --quiet --unit="$unit" "/run/$unit" \
		-e "getppid() for 1..$N; open(F, '>/run/$unit.done'); close(F); sleep 60"
	for ((i = 0; i < 50; i++)); do
		pid=$(ct "${sys[@]}" systemctl $user show -P MainPID "$unit")
		[ -n "$pid" ] && [ "$pid" != 0 ] && break
		sleep 0.05
	done
	echo "$(host_pid "$pid") $unit.service $(ct sed -n 's/^0:://p' "/proc/$pid/cgroup")" >>"$TMP/pids"
	for ((i = 0; i < 200; i++)); do ct test -e "/run/$unit.done" && break; sleep 0.05; done
	ct rm -f "/run/$unit.done"
	ct "${sys[@]}" systemctl $user stop "$unit"
}
# The host's pid of the container's pid $1: TRACE_PID= is the kernel's
# (init namespace) tgid, as common_pid.
host_pid() {
	local ns s
	ns=$(readlink "/proc/$CT_PID/ns/pid")
	for s in /proc/[0-9]*/status; do
		grep -qP "^NSpid:\t\d+\t$1\$" "$s" 2>/dev/null || continue
		[ "$(readlink "${s%/status}/ns/pid")" = "$ns" ] && { s=${s#/proc/}; echo "${s%/status}"; return; }
	done
}
run "$A"
run "$B"
run "$U" --user
run "$A"		# restarted: a new cgroup of the same name
while read -r l; do note "run: $l"; done <"$TMP/pids"

jqq() { jq -e "$@" >/dev/null; }
entries() { ct journalctl -o json --no-pager "$@" 2>/dev/null; }
for ((i = 0; i < 100; i++)); do
	[ "$(entries TRACE_SELECTION=all | wc -l)" -ge $((4 * N)) ] &&
		[ "$(entries TRACE_SELECTION=one | wc -l)" -ge $((2 * N)) ] && break
	sleep 0.1
done
sleep 0.3
entries TRACE_SELECTION=all >"$TMP/all.json"
entries TRACE_SELECTION=one >"$TMP/one.json"
note "all: $(jq -r '"\(.TRACE_PID) \(.TRACE_UNIT) \(.TRACE_USER_UNIT // "-") \(.TRACE_CGROUP)"' "$TMP/all.json" | sort | uniq -c | xargs)"

# Every entry's unit as systemd and /proc say for its pid: N each.
want=$(awk -v n=$N '{print $1, $2, $3, n}' "$TMP/pids" | sort)
got=$(jq -r '"\(.TRACE_PID) \(if .TRACE_USER_UNIT then .TRACE_USER_UNIT else .TRACE_UNIT end) \(.TRACE_CGROUP)"' \
	"$TMP/all.json" | sort | uniq -c | awk '{print $2, $3, $4, $1}' | sort)
[ "$want" = "$got" ] || note "want: $(echo $want) got: $(echo $got)"
check "journal: each run's $N entries carry the unit (or user unit) and cgroup of its MainPID, as /proc/PID/cgroup says" \
	[ "$want" = "$got" -a -n "$got" ]
check "journal: system units: TRACE_UNIT= the service, TRACE_SLICE=system.slice, no TRACE_USER_UNIT=" \
	jqq -s --arg a "$A.service" --arg b "$B.service" '
	map(select(.TRACE_COMM != "'"$U"'")) | length == '$((3 * N))' and
	all(.TRACE_UNIT == $a or .TRACE_UNIT == $b) and all(.TRACE_SLICE == "system.slice") and
	all(has("TRACE_USER_UNIT") | not) and all(.TRACE_CGROUP == "/system.slice/" + .TRACE_UNIT)' \
	"$TMP/all.json"
check "journal: the user manager's unit: TRACE_UNIT=user@0.service, TRACE_USER_UNIT= the unit, TRACE_SLICE=user-0.slice" \
	jqq -s --arg u "$U.service" 'map(select(.TRACE_COMM == "'"$U"'")) |
	length == '$N' and all(.TRACE_UNIT == "user@0.service" and .TRACE_USER_UNIT == $u and
	.TRACE_SLICE == "user-0.slice" and
	.TRACE_CGROUP == "/user.slice/user-0.slice/user@0.service/app.slice/" + $u)' \
	"$TMP/all.json"
apids=$(awk -v u="$A.service" '$2 == u {print $1}' "$TMP/pids" | sort | xargs)
check "Unit=$A.service: exactly its two runs' $((2 * N)) entries, both started after tracerd, the second in a new cgroup" \
	jqq -s --arg a "$A.service" --arg p "$apids" 'length == '$((2 * N))' and all(.TRACE_UNIT == $a) and
	([.[].TRACE_PID] | unique | join(" ")) == $p' "$TMP/one.json"
jq -r "\"\\(.TRACE_PID) \\(.TRACE_UNIT)\"" "$TMP/one.json" | sort | uniq -c | while read -r l; do note "one: $l"; done

# A unit's first events (issue 30): services whose program calls getppid(2)
# $NF times at once, then exits (tests/tools/fire_syscall), so the unit and
# its cgroup go within milliseconds; before it, the execve(2) of systemd's
# child, a moment after the cgroup was made. $NU of them while tracerd runs (the
# cgroup_mkdir race as it comes), $NU while tracerd is stopped (SIGSTOP:
# it sees each cgroup only once gone), and as many of a unit Unit= does not
# select, which fire the same calls. Every event of the selected ones
# arrives, each named by its unit, none of the others.
NF=20 NU=5
FIRE=/opt/ci/$BUILD/tests/tools/fire_syscall
# A SANITIZE=1 build's LeakSanitizer would add getppid calls at exit (its
# tracer task checks its parent).
fire_units() { # fire_units TAG: $NU selected units and $NU others, one after another
	local i
	for ((i = 0; i < NU; i++)); do
		ct systemd-run --quiet -E ASAN_OPTIONS=detect_leaks=0 --unit="trf$RUN-$1$i" "$FIRE" $NF 0 getppid
		ct systemd-run --quiet -E ASAN_OPTIONS=detect_leaks=0 --unit="trg$RUN-$1$i" "$FIRE" $NF 0 getppid
	done
}
gone() { # gone TAG: every unit of fire_units TAG has stopped
	local i
	for ((i = 0; i < NU; i++)); do
		[ "$(ct systemctl show -P ActiveState "trf$RUN-$1$i" "trg$RUN-$1$i" | sort -u | xargs)" = inactive ] || return 1
	done
}
fire_units run
tpid=$(ct systemctl show -P MainPID tracerd)
ct kill -STOP "$tpid"
on_exit "ct kill -CONT $tpid"
fire_units stopped
for ((i = 0; i < 100; i++)); do gone run && gone stopped && break; sleep 0.05; done
note "units gone before tracerd went on: $(gone stopped && echo yes || echo no)"
ct kill -CONT "$tpid"
for ((i = 0; i < 100; i++)); do
	[ "$(entries TRACE_SELECTION=first | wc -l)" -ge $((2 * NU * (NF + 1))) ] && break
	sleep 0.1
done
sleep 0.3
entries TRACE_SELECTION=first >"$TMP/first.json"
want=$(for t in run stopped; do for ((i = 0; i < NU; i++)); do echo "trf$RUN-$t$i.service $((NF + 1))"; done; done | sort)
got=$(jq -r '.TRACE_UNIT' "$TMP/first.json" | sort | uniq -c | awk '{print $2, $1}' | sort)
note "first events: $(echo $got)"
check "Unit=trf*: each of $((2 * NU)) units that fire at once and exit has its execve and $NF getppid, $NU of them while tracerd was stopped; no other unit's" \
	[ "$want" = "$got" ]
ct systemctl stop tracerd
final=$(entries TRACE_STATS=1 TRACE_SELECTION=first TRACE_STATS_FINAL=1 | tail -1)
judged=$(jq -r .TRACE_STATS_UNIT_JUDGED <<<"$final") rejected=$(jq -r .TRACE_STATS_UNIT_REJECTED <<<"$final")
note "first: TRACE_STATS_UNIT_JUDGED=$judged TRACE_STATS_UNIT_REJECTED=$rejected"
at_least() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
check "Unit=: the events tracerd judged itself are counted: at least the $((2 * NU * (NF + 1))) fired while it was stopped, $((NU * (NF + 1))) of them rejected" \
	eval 'at_least "$judged" $((2 * NU * (NF + 1))) && at_least "$rejected" $((NU * (NF + 1)))'

# The store copied out of the container: the host (no such units, another
# cgroup tree) names them from the files alone.
mkdir -p "$TMP/shipped"
ct sh -c 'cd /var/lib/private/tracerd && tar -cf - *.tstore' | tar -C "$TMP/shipped" -xf -
"$TRACERD" --read "$TMP/shipped" --unit "$B" >"$TMP/b.txt" 2>"$TMP/b.err"
"$TRACERD" --read "$TMP/shipped" --unit "$U" --json >"$TMP/u.json" 2>>"$TMP/b.err"
"$TRACERD" --read "$TMP/shipped" --unit 'system.slice' >"$TMP/sys.txt" 2>>"$TMP/b.err"
note "shipped: --unit $B $(wc -l <"$TMP/b.txt"), --unit $U $(wc -l <"$TMP/u.json"), --unit system.slice $(wc -l <"$TMP/sys.txt")"
check "shipped store: --read --unit $B on the host: its $N records, nothing else" \
	[ "$(grep -c " $B-\| $B " "$TMP/b.txt")" = $N -a "$(wc -l <"$TMP/b.txt")" = $N ]
check "shipped store: --read --unit (a user unit) --json: its $N records, named as the journal named them" \
	jqq -s --arg u "$U.service" 'length == '$N' and all(.TRACE_UNIT == "user@0.service" and
	.TRACE_USER_UNIT == $u and .TRACE_SLICE == "user-0.slice")' "$TMP/u.json"
check "shipped store: --read --unit system.slice: both services' $((3 * N)) records" \
	[ "$(wc -l <"$TMP/sys.txt")" = $((3 * N)) ]
