#!/usr/bin/env bash
# A selection on the command line, without a config file: -e and the other
# [Selection] keys as options (--filter, --aggregate, ...). Real exec events:
# the filter keeps a shell's exec and drops /bin/true's; an aggregate counts
# them; a bad option is diagnosed as --check-config does a file, naming the
# option ("--filter:1:1: ..."), with exit status 78 (EX_CONFIG); with -c, the
# file's [Daemon] stays and its selections give way.
. "$(dirname "$0")/../lib.sh"
need_root cmdline

# run OUT ARGS...: tracerd -f ARGS in the background until attached; sets P.
run() { local out=$1; shift; run_tracerd "$out" -f "$@"; local r=$?; P=$TRACERD_PID; return $r; }
stop() { kill -INT $P; wait $P; }

# -e and --filter: the shell's exec and not /bin/true's.
if run "$TMP/exec" -e sched:sched_process_exec --filter 'filename ~ "*sh"'; then
	/bin/sh -c '/bin/true; echo $$ >'"$TMP/sh.pid"
	sleep 0.3
	stop
	pid=$(cat "$TMP/sh.pid")
	check "-e --filter: the exec of /bin/sh (pid $pid) is printed" \
		grep -q "sched_process_exec: filename=/bin/sh pid=$pid " "$TMP/exec"
	n=$(grep -c "filename=[^ ]*true " "$TMP/exec")
	check "-e --filter: no exec of /bin/true ($n)" [ "$n" = 0 ]
	n=$(grep -vc "sched_process_exec: filename=[^ ]*sh pid=" "$TMP/exec")
	check "-e --filter: every line is a shell's exec ($n others)" [ "$n" = 0 ]
	check "the selection is named cmdline" grep -q "summary: selection cmdline: " "$TMP/exec.err"
else
	not_ok "-e --filter: tracerd starts"
fi

# --aggregate and --aggregate-interval-sec: a final dump counts the execs.
cp /bin/true "$TMP/cmdagg"
if run "$TMP/agg" -e sched:sched_process_exec --filter 'filename ~ "*/cmdagg"' \
	--aggregate 'hist:keys=filename' --aggregate-interval-sec 0; then
	for i in 1 2 3; do "$TMP/cmdagg"; done
	sleep 0.3
	stop
	check "--aggregate: the final dump counts 3 execs" \
		grep -qE "^\{ filename: $TMP/cmdagg +\} hitcount: +3\$" "$TMP/agg"
	check "--aggregate: no records, a dump" [ "$(grep -c sched_process_exec: "$TMP/agg")" = 0 ]
else
	not_ok "--aggregate: tracerd starts"
fi

# Several -e, one of them with two globs, and --name.
if run "$TMP/multi" -e sched:sched_process_exec -e 'sched:sched_process_exit sched:sched_process_fork' \
	--filter 'comm == "cmdmulti"' --name multi; then
	cp /bin/true "$TMP/cmdmulti"
	"$TMP/cmdmulti"
	sleep 0.3
	stop
	check "-e twice: three events attached" grep -q "attached 3 events" "$TMP/multi.err"
	check "--name: the summary names it" grep -q "summary: selection multi: " "$TMP/multi.err"
	check "-e twice: the exit of cmdmulti is printed" grep -q "sched_process_exit: comm=cmdmulti " "$TMP/multi"
else
	not_ok "-e twice: tracerd starts"
fi

# Bad input: the diagnostic names the option; 78 from the daemon, 1 from
# --check-config, which prints the same text. (The list of fields after an
# unknown one is left out: the field resolver's to choose.)
# A hang guard, not a speed limit: under ASan at a load of 30 (CI, its
# fuzzers beside) a start that fails took over 20 s.
bad() { # NAME WANT-STDERR ARGS...
	local name=$1 want=$2 rc rc2 got got2; shift 2
	got=$(timeout 120 "$TRACERD" -f "$@" 2>&1 >/dev/null); rc=$?
	got2=$(timeout 120 "$TRACERD" --check-config "$@" 2>&1 >/dev/null); rc2=$?
	got=$(sed 's/; its fields are: .*//' <<<"$got") got2=$(sed 's/; its fields are: .*//' <<<"$got2")
	if [ "$rc" = 78 ] && [ "$got" = "$want" ]; then ok "bad input: $name exits 78 with '${want%%$'\n'*}'"
	else not_ok "bad input: $name"; note "want (78): $want"; note "got ($rc): $got"; fi
	if [ "$rc2" = 1 ] && [ "$got2" = "$want" ]; then ok "bad input: --check-config $name says the same"
	else not_ok "bad input: --check-config $name"; note "got ($rc2): $got2"; fi
}
bad "unknown field" "--filter:1:1: unknown field 'filenam' in sched:sched_process_exec
    filenam ~ \"*sh\"
    ^" -e sched:sched_process_exec --filter 'filenam ~ "*sh"'
bad "a filter cut short" "--filter:1:26: expected a value: a number, a symbol or a string
    filename ~ \"*sh\" && pid >
                             ^" -e sched:sched_process_exec --filter 'filename ~ "*sh" && pid >'
bad "no such event" "--events:1:20: no event 'sched:sched_process_exe'; did you mean sched:sched_process_exec, sched:sched_process_exit or sched:sched_process_free" \
	-e 'sched:sched_switch sched:sched_process_exe'
bad "a bad priority" "--priority:1:1: expected a syslog priority (emerg..debug or 0..7), got 'loud'
    loud
    ^" -e sched:sched_switch --priority loud
bad "a bad aggregate" "--aggregate:1:11: unknown field 'nope' in sched:sched_switch
    hist:keys=nope
              ^" -e sched:sched_switch --aggregate hist:keys=nope

bad "a bad synthetic event" "--synthetic:1:10: expected a type of the kernel's synthetic events: s64 u64 s32 u32 s16 u16 s8 u8 char, unsigned char, short, unsigned short, int, unsigned int, long, unsigned long, bool, pid_t, gfp_t, char[N]
    x u64 a; foo b
             ^" --synthetic 'x u64 a; foo b' -e sched:sched_switch
bad "a misspelt synthetic event" "--events:1:1: no event 'synthetic:wakeup_latancy'; did you mean synthetic:wakeup_latency" \
	--synthetic 'wakeup_latency u64 lat' -e synthetic:wakeup_latancy

# --metrics-listen beside a config file and no -e: a key of [Metrics], not
# the start of a selection.
"$TRACERD" --check-config conf/tracerd.conf --metrics-listen 127.0.0.1:9464 >"$TMP/mcheck" 2>&1
check "--metrics-listen with a config file and no -e is taken" [ $? = 0 ]
"$TRACERD" --read "$TMP" --metrics-listen 127.0.0.1:9464 >/dev/null 2>"$TMP/mread"
check "--read refuses --metrics-listen" grep -q "not --metrics-listen" "$TMP/mread"

# --synthetic for --list-events and --describe: the event built from its
# definition, not read from tracefs.
got=$("$TRACERD" --synthetic 'wakeup_latency u64 lat; pid_t pid' --synthetic 'b char s[16]' \
	--list-events 'synthetic:*' 2>&1 | paste -sd' ')
check "--synthetic: --list-events 'synthetic:*' lists both (got: $got)" [ "$got" = "synthetic:b synthetic:wakeup_latency" ]
"$TRACERD" --synthetic 'wakeup_latency u64 lat; pid_t pid' --describe synthetic:wakeup_latency >"$TMP/describe" 2>&1
check "--synthetic: --describe synthetic:wakeup_latency exits 0" [ $? = 0 ]
check "--synthetic: its id and class" grep -qxF $'event:  synthetic:wakeup_latency (id 65280)\nclass:  wakeup_latency (synthetic)' <(head -2 "$TMP/describe")
check "--synthetic: its fields in u64 slots" grep -qE '^  pid +pid_t +offset 16 +size 4 +signed +scalar$' "$TMP/describe"
check "--synthetic: its print fmt" grep -qxF 'print fmt: "lat=%llu pid=%d", REC->lat, REC->pid' "$TMP/describe"
"$TRACERD" --synthetic 'x u64 a; foo b' --describe synthetic:x >/dev/null 2>"$TMP/err"
check "--synthetic: a bad one before --describe fails (1) at its column" \
	[ $? = 1 -a "$(head -1 "$TMP/err" | cut -d: -f1-3)" = "--synthetic:1:10" ]
"$TRACERD" --synthetic 'x u64 a' --read "$TMP" >/dev/null 2>&1
check "--synthetic with --read is a usage error (2): the store has the formats" [ $? = 2 ]

# Usage errors: an option of a selection without -e, or beside --describe.
"$TRACERD" --filter 'pid == 1' >/dev/null 2>&1
check "--filter without -e is a usage error (2)" [ $? = 2 ]
"$TRACERD" --describe sched:sched_switch -e sched:sched_switch >/dev/null 2>&1
check "-e with --describe is a usage error (2)" [ $? = 2 ]

# With -c: the file's [Daemon] and [Store] stay (records to the store), its
# selections give way to the command line's.
cat >"$TMP/c.conf" <<EOF
[Daemon]
Output=store
FlushIntervalMSec=10
[Store]
Directory=$TMP/store
[Selection]
Name=fromfile
Events=syscalls:sys_enter_sysfs
EOF
# run_as_service OUT ARGS...: as run, without -f
run_as_service() { run_tracerd "$@"; local r=$?; P=$TRACERD_PID; return $r; }
if run_as_service "$TMP/withc" -c "$TMP/c.conf" -e sched:sched_process_exec --filter 'filename ~ "*/cmdwithc"'; then
	cp /bin/true "$TMP/cmdwithc"
	"$TMP/cmdwithc"
	sleep 0.3
	stop
	"$TRACERD" --read "$TMP/store" >"$TMP/withc.read" 2>&1
	check "-c with -e: the file's [Store] has the command line's records" \
		grep -q "sched_process_exec: filename=$TMP/cmdwithc " "$TMP/withc.read"
	check "-c with -e: the file's selection is not attached" [ "$(grep -c fromfile "$TMP/withc.err")" = 0 ]
	check "-c with -e: one event attached" grep -q "attached 1 events" "$TMP/withc.err"
else
	not_ok "-c with -e: tracerd starts"
fi
got=$("$TRACERD" --check-config "$TMP/c.conf" -e sched:sched_switch)
check "--check-config FILE -e: '$got'" [ "$got" = "$TMP/c.conf: OK" ]
got=$("$TRACERD" --check-config -e sched:sched_switch --rate-limit 10 --output stdout)
check "--check-config -e: '$got'" [ "$got" = "command line: OK" ]

# --check-config says what the daemon does with each selection: emitted, or
# the class program and why, in the same words (the daemon adds the load
# time). A histogram counted in the emitted program was once reported as the
# class program's by --check-config (its maps were taken as absent).
emit_line() { grep '^tracerd: selection cmdline: ' | sed 's/, loaded in [0-9.]* ms//'; }
same_line() { [ -n "$1" ] && [ "$1" = "$2" ]; }
n=0
for args in "-e sched:sched_switch --aggregate hist:keys=next_comm" \
	"-e sched:sched_switch" "-e sched:sched_process_wait" \
	"-e sched:sched_switch --filter prev_comm~\"a?c\"" \
	"-e syscalls:sys_enter_openat" "-e sched:sched_switch --stack-trace kernel"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the options split as written
	want=$(timeout 60 "$TRACERD" --check-config $args 2>&1 | emit_line)
	# shellcheck disable=SC2086
	if run "$TMP/same$n" $args; then
		stop
		got=$(emit_line <"$TMP/same$n.err")
		check "--check-config $args: '$want', as the daemon" same_line "$want" "$got"
		same_line "$want" "$got" || note "the daemon: '$got'"
	else
		not_ok "--check-config $args: tracerd starts"
	fi
done
