#!/usr/bin/env bash
# Unit= and the unit fields on a host whose PID 1 is not systemd: names come
# from the cgroup2 path by systemd's rules. cgroups named like units are made
# under the cgroup2 mount (a slice of this run's own), and workloads moved
# into them: Unit= keeps exactly the selected units' events (a unit made
# after tracerd started, and one removed and made again with a new cgroup,
# included); a glob that matches nothing running is a warning; a malformed
# name is refused at file:line:column. The store and --read name the units.
. "$(dirname "$0")/../lib.sh"
need_root units

CG2=$(awk '$(NF-2) == "cgroup2" || $9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
[ -n "$CG2" ] || { not_ok "units: no cgroup2 mount"; exit 0; }
SLICE=tracerd-units$$.slice
CG=$CG2/$SLICE
mkdir "$CG" || { not_ok "units: cannot make $CG"; exit 0; }
# Every process out of the run's cgroups first, then the cgroups, deepest first.
on_exit "for p in \$(cat $CG/*/cgroup.procs 2>/dev/null); do kill -9 \$p; done; sleep 0.1; find $CG -depth -type d -exec rmdir {} \;"

# run_in UNIT N: N getppid calls from a process in $CG/UNIT; its pid appended to $TMP/UNIT.pids.
run_in() {
	mkdir -p "$CG/$1"
	sh -c "echo \$\$ > '$CG/$1/cgroup.procs' && exec perl -e 'getppid() for 1..$2; print \"\$\$\\n\"'" \
		>>"$TMP/${1//\//_}.pids"
}

cat >"$TMP/u.conf" <<CONF
[Daemon]
FlushIntervalMSec=20
[Selection]
Name=units
Events=syscalls:sys_enter_getppid
Unit=tu-a.service tu-late.service nothing-like-it*.service
CONF
mkdir -p "$CG/tu-a.service" "$CG/tu-b.service"
start_tracerd "$TMP/u.conf" "$TMP/u.out" || { not_ok "units: tracerd starts with Unit="; exit 0; }
for i in 1 2 3; do run_in tu-a.service 5; run_in tu-b.service 7; done
run_in tu-late.service 11		# made after tracerd started
rmdir "$CG/tu-a.service"		# "restarted": a new cgroup of the same name
run_in tu-a.service 13
run_in tu-b.service 7
sleep 0.3
stop_tracerd

count_of() { # count_of PIDFILE [OUT]: records of those pids in OUT (u.out)
	local n=0 p
	for p in $(cat "$1"); do n=$((n + $(grep -c -- "-$p " "${2:-$TMP/u.out}"))); done
	echo $n
}
a=$(count_of "$TMP/tu-a.service.pids"); b=$(count_of "$TMP/tu-b.service.pids")
late=$(count_of "$TMP/tu-late.service.pids"); all=$(wc -l <"$TMP/u.out")
note "tu-a.service $a (want 28), tu-late.service $late (want 11), tu-b.service $b (want 0), all $all"
check "Unit=: every event of the selected units, one restarted in a new cgroup (5x3 + 13)" \
	[ "$a" = 28 ]
check "Unit=: a unit whose cgroup appeared after tracerd started is matched (11)" [ "$late" = 11 ]
check "Unit=: nothing of another unit, nothing of other tasks" [ "$b" = 0 -a "$all" = 39 ]
check "Unit=: what it rejected counts as filtered out (hits = filtered + delivered)" \
	grep -Eq "sys_enter_getppid delivered=39 .* filtered=(2[1-9]|[3-9][0-9]|[0-9]{3,})" \
	"$TMP/u.out.err"
check "Unit=: a glob that matches nothing running is a warning, with its file and line" \
	grep -q "u.conf:6: Unit=nothing-like-it\*.service matches no unit running now" "$TMP/u.out.err"

# A unit's first events, before tracerd has seen its cgroup made (issue 30):
# tracerd is stopped (SIGSTOP) while units are made, fire and, all but one,
# go. BPF has no verdict on their cgroups: it lets the events through,
# marked, and tracerd judges them when it runs again, by the path the
# kernel gave at cgroup_mkdir for those already gone. Every event of the
# selected units arrives, none of the others. A histogram cannot wait for
# the daemon: its events of such cgroups are rejected, and counted. (Other
# tests' new cgroups may add to what is judged: at least, not exactly.)
cat >"$TMP/f.conf" <<CONF
[Daemon]
FlushIntervalMSec=20
[Selection]
Name=first
Events=syscalls:sys_enter_getppid
Unit=tu-f*.service
[Selection]
Name=firsthist
Events=syscalls:sys_enter_getppid
Unit=tu-f*.service
Aggregate=hist:keys=common_pid:vals=hitcount
AggregateIntervalSec=0
CONF
rm -f "$TMP"/*.pids
start_tracerd "$TMP/f.conf" "$TMP/f.out" || { not_ok "units: tracerd starts (first events)"; exit 0; }
kill -STOP "$TRACERD_PID"
on_exit "kill -CONT $TRACERD_PID"
for i in 1 2 3 4 5; do
	run_in tu-f$i.service 7; run_in tu-g$i.service 3
	[ $i = 1 ] || rmdir "$CG/tu-f$i.service"	# tu-f1 stays: named by its handle
	rmdir "$CG/tu-g$i.service"
done
kill -CONT "$TRACERD_PID"
sleep 0.3
stop_tracerd
f=0 g=0
for i in 1 2 3 4 5; do
	f=$((f + $(count_of "$TMP/tu-f$i.service.pids" "$TMP/f.out"))); g=$((g + $(count_of "$TMP/tu-g$i.service.pids" "$TMP/f.out")))
done
records=$(grep -c "sys_getppid()" "$TMP/f.out")
note "first events: tu-f* $f (want 35), tu-g* $g (want 0), all $records"
check "Unit=: a unit's events before tracerd saw its cgroup made, the cgroup gone since, all delivered (35)" \
	[ "$f" = 35 -a "$g" = 0 -a "$records" = 35 ]
counts_of() { # counts_of SELECTION: its summary line's NAME=VALUE words
	grep -E "^tracerd: +$1 +syscalls:sys_enter_getppid " "$TMP/f.out.err" | tr ' ' '\n' | grep =
}
declare -A fc hc
while IFS== read -r k v; do fc[$k]=$v; done < <(counts_of first)
while IFS== read -r k v; do hc[$k]=$v; done < <(counts_of firsthist)
note "first: delivered=${fc[delivered]:-} filtered=${fc[filtered]:-} unit_judged=${fc[unit_judged]:-} unit_rejected=${fc[unit_rejected]:-}; firsthist: aggregated=${hc[aggregated]:-} unit_unjudged=${hc[unit_unjudged]:-}"
check "Unit=: those judged by the daemon are counted: 35 kept, at least tu-g*'s 15 rejected, in filtered too" \
	eval '[ "${fc[delivered]:-}" = 35 ] && [ "$((fc[unit_judged] - fc[unit_rejected]))" = 35 ] &&
	      [ "${fc[unit_rejected]}" -ge 15 ] && [ "${fc[filtered]}" -ge "${fc[unit_rejected]}" ]'
check "Unit= with Aggregate=: the events of cgroups without a verdict are rejected and counted (at least 50)" \
	eval '[ "${hc[aggregated]:-x}" = 0 ] && [ "${hc[unit_unjudged]:-0}" -ge 50 ] &&
	      [ "${hc[filtered]}" -ge "${hc[unit_unjudged]}" ]'
rmdir "$CG/tu-f1.service"

# Verdicts that do not fit the map (TRACERD_TEST_UNIT_CGROUPS: a map of 4
# entries here, 65536 by default) are counted, in the summary and in
# STATUS=; the events of those cgroups are judged by the daemon instead,
# so that none is lost.
notify_listen "$TMP/notify" 30 "$TMP/notes"
rm -f "$TMP"/*.pids
mkdir -p "$CG/tu-f1.service" "$CG/tu-g1.service"
if NOTIFY_SOCKET=$TMP/notify TRACERD_TEST_UNIT_CGROUPS=4 start_tracerd "$TMP/f.conf" "$TMP/m.out"; then
	run_in tu-f1.service 5; run_in tu-g1.service 3; run_in tu-f2.service 4
	n0=$(notify_statuses "$TMP/notes" | wc -l)
	for ((i = 0; i < 60; i++)); do [ "$(notify_statuses "$TMP/notes" | wc -l)" -gt "$n0" ] && break; sleep 0.1; done
	sleep 0.3
	stop_tracerd
	f=$(($(count_of "$TMP/tu-f1.service.pids" "$TMP/m.out") + $(count_of "$TMP/tu-f2.service.pids" "$TMP/m.out")))
	g=$(count_of "$TMP/tu-g1.service.pids" "$TMP/m.out")
	note "map full: tu-f* $f (want 9), tu-g1 $g (want 0); $(grep -m1 "verdicts" "$TMP/m.out.err"); $(notify_statuses "$TMP/notes" | tail -1)"
	check "Unit=: with the verdict map full, every event of the selected units, none of the others" \
		[ "$f" = 9 -a "$g" = 0 -a "$(grep -c "sys_getppid()" "$TMP/m.out")" = 9 ]
	check "Unit=: verdicts the map had no room for are counted in the summary" \
		grep -Eq "summary: [1-9][0-9]* Unit= verdicts not written \(the map is full" "$TMP/m.out.err"
	check "Unit=: ... and in STATUS=" \
		grep -Eq "[1-9][0-9]* Unit= verdicts not written" <(notify_statuses "$TMP/notes")
else
	not_ok "units: tracerd starts with a verdict map of 4"
fi
rmdir "$CG/tu-f1.service" "$CG/tu-g1.service" "$CG/tu-f2.service"

# A malformed name: file:line:column, and no start.
printf '[Selection]\nName=x\nEvents=syscalls:sys_enter_getppid\nUnit=ok.service  bad/name.service\n' \
	>"$TMP/bad.conf"
"$TRACERD" --config "$TMP/bad.conf" --foreground >"$TMP/bad.out" 2>&1
rc=$?
check "Unit=: a malformed unit name is refused at file:line:column (exit $rc)" \
	grep -q "bad.conf:4:21: expected unit names or globs .*, got 'bad/name.service'" "$TMP/bad.out"

# The store keeps each record's cgroup and the cgroup's path: --read names
# the units after their cgroups are gone, and --read --unit filters on them.
cat >"$TMP/s.conf" <<CONF
[Daemon]
FlushIntervalMSec=20
Output=store
[Store]
Directory=$TMP/store
[Selection]
Name=stored
Events=syscalls:sys_enter_getppid
Filter=comm == "perl"
CONF
rm -f "$TMP"/*.pids
start_tracerd_store "$TMP/s.conf" "$TMP/s.out" || { not_ok "units: tracerd starts with Output=store"; exit 0; }
run_in tu-a.service 5
run_in tu-b.service 7
mkdir -p "$CG/app.slice/tu-c.service/sub"	# a unit's child cgroup: its unit still
sh -c "echo \$\$ > '$CG/app.slice/tu-c.service/sub/cgroup.procs' && exec perl -e 'getppid() for 1..3; print \"\$\$\\n\"'" \
	>>"$TMP/tu-c.service.pids"
sleep 0.3
stop_tracerd
# The units stop: their cgroups go before the store is read.
for d in tu-a.service tu-b.service app.slice/tu-c.service/sub app.slice/tu-c.service app.slice; do
	rmdir "$CG/$d"
done
"$TRACERD" --read "$TMP/store" --json >"$TMP/s.json" 2>"$TMP/s.err"
pid_json() { jq -c --arg p "$(cat "$TMP/$1.pids")" 'select(.TRACE_PID == $p) |
	{TRACE_UNIT, TRACE_SLICE, TRACE_CGROUP, TRACE_USER_UNIT}' "$TMP/s.json" | sort | uniq -c | sed "s/^ *//"; }
note "tu-a: $(pid_json tu-a.service); tu-c: $(pid_json tu-c.service)"
check "--read --json: TRACE_UNIT=, TRACE_SLICE=, TRACE_CGROUP= of units whose cgroups are gone" \
	[ "$(pid_json tu-a.service)" = "5 {\"TRACE_UNIT\":\"tu-a.service\",\"TRACE_SLICE\":\"$SLICE\",\"TRACE_CGROUP\":\"/$SLICE/tu-a.service\",\"TRACE_USER_UNIT\":null}" ]
check "--read --json: a unit's child cgroup is its unit's, under the innermost slice" \
	[ "$(pid_json tu-c.service)" = "3 {\"TRACE_UNIT\":\"tu-c.service\",\"TRACE_SLICE\":\"app.slice\",\"TRACE_CGROUP\":\"/$SLICE/app.slice/tu-c.service/sub\",\"TRACE_USER_UNIT\":null}" ]
"$TRACERD" --read "$TMP/store" --unit 'tu-[ac]*' >"$TMP/s-ac.txt"
"$TRACERD" --read "$TMP/store" --unit "$SLICE" >"$TMP/s-slice.txt"
"$TRACERD" --read "$TMP/store" --unit tu-b >"$TMP/s-b.txt"	# a bare name is a .service
n_of() { grep -c -- "-$(cat "$TMP/$2.pids") " "$1"; }
check "--read --unit 'tu-[ac]*': exactly tu-a's 5 and tu-c's 3" \
	[ "$(wc -l <"$TMP/s-ac.txt")" = 8 -a "$(n_of "$TMP/s-ac.txt" tu-a.service)" = 5 -a "$(n_of "$TMP/s-ac.txt" tu-c.service)" = 3 ]
check "--read --unit SLICE: everything below the slice (15)" [ "$(wc -l <"$TMP/s-slice.txt")" = 15 ]
check "--read --unit tu-b: tu-b.service's 7" \
	[ "$(wc -l <"$TMP/s-b.txt")" = 7 -a "$(n_of "$TMP/s-b.txt" tu-b.service)" = 7 ]

# Aggregate= by unit (and by cgroup) equals the per-unit counts of the same
# events taken one by one: a second selection stores them, and --read --json
# names each record's unit.
cat >"$TMP/a.conf" <<CONF
[Daemon]
FlushIntervalMSec=20
Output=stdout
[Store]
Directory=$TMP/agg-store
[Selection]
Name=byunit
Events=syscalls:sys_enter_getppid
Filter=comm == "perl"
Aggregate=hist:keys=unit:vals=hitcount:sort=hitcount.descending
AggregateIntervalSec=0
[Selection]
Name=bycgroup
Events=syscalls:sys_enter_getppid
Filter=comm == "perl"
Aggregate=hist:keys=cgroup:vals=hitcount
AggregateIntervalSec=0
[Selection]
Name=each
Events=syscalls:sys_enter_getppid
Filter=comm == "perl"
Output=store
CONF
start_tracerd_store "$TMP/a.conf" "$TMP/a.out" || { not_ok "units: tracerd starts with Aggregate=keys=unit"; exit 0; }
mkdir -p "$CG/app.slice/tu-c.service/sub"
run_in tu-a.service 5; run_in tu-a.service 4; run_in tu-b.service 7
run_in app.slice/tu-c.service 2; run_in app.slice/tu-c.service/sub 3
sleep 0.3
stop_tracerd
"$TRACERD" --read "$TMP/agg-store" --json >"$TMP/a.json"
hist_of() { # hist_of KEY: "name count" per entry of that key's dump
	awk -v k="$1" '$1 == "{" && $2 == k":" { n = $(NF); sub(/^\{ [a-z]+: */, ""); sub(/ *\} hitcount:.*/, ""); print $0, n }' "$TMP/a.out"
}
for s in byunit bycgroup; do	# counted in the emitted program itself
	check "Aggregate=keys=unit/cgroup: $s emitted" \
		grep -q "selection $s: Filter= and Aggregate= compiled to BPF" "$TMP/a.out.err"
done
by_unit=$(hist_of unit | sort); by_cgroup=$(hist_of cgroup | sort)
one_by_one_unit=$(jq -r '.TRACE_UNIT // "-"' "$TMP/a.json" | sort | uniq -c | awk '{print $2, $1}' | sort)
one_by_one_cgroup=$(jq -r '.TRACE_CGROUP' "$TMP/a.json" | sort | uniq -c | awk '{print $2, $1}' | sort)
note "by unit: $(echo $by_unit); one by one: $(echo $one_by_one_unit)"
check "Aggregate=keys=unit: each unit's hitcount equals its records one by one, the cgroups of a unit merged (tu-c: 5)" \
	[ -n "$by_unit" -a "$by_unit" = "$one_by_one_unit" ]
check "Aggregate=keys=unit: tu-a.service 9, tu-b.service 7, tu-c.service 5" \
	[ "$(grep -E '^tu-' <<<"$by_unit" | xargs)" = "tu-a.service 9 tu-b.service 7 tu-c.service 5" ]
check "Aggregate=keys=cgroup: each cgroup's path with its records one by one" \
	[ -n "$by_cgroup" -a "$by_cgroup" = "$one_by_one_cgroup" ]
printf '[Selection]\nName=x\nEvents=syscalls:sys_enter_getppid\nFilter=unit == 1\n' >"$TMP/bad2.conf"
"$TRACERD" --config "$TMP/bad2.conf" --foreground >"$TMP/bad2.out" 2>&1
check "Filter= refuses unit: a key of Aggregate= only, use Unit=" \
	grep -q "unit is a key of Aggregate= only: select units with Unit=" "$TMP/bad2.out"
