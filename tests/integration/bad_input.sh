#!/usr/bin/env bash
# A catalogue of bad inputs, end to end through the tracerd binary: each one
# must fail with the exact message, at the exact file:line:column, with the
# caret under the right character, and the right exit status. Then on
# reload (SIGHUP in --foreground) a bad config is refused and the running
# one keeps tracing.
. "$(dirname "$0")/../lib.sh"
need_root bad_input
SEL=$'[Selection]\nName=s\nEvents=sched:sched_switch\n'
n=0

# expect NAME STATUS FIRST-LINE [CARET-LINE] -- CMD...: runs CMD, compares.
expect() {
	local name=$1 status=$2 want=$3 caret=${4:-}
	shift 4
	[ "${1:-}" = -- ] && shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$? got
	got=$(grep -v '^libbpf: ' "$TMP/err" | head -1)
	n=$((n + 1))
	if [ "$rc" != "$status" ] || [ "$got" != "$want" ]; then
		not_ok "$name"
		note "  want ($status): $want"
		note "  got  ($rc): $got"
		return
	fi
	if [ -n "$caret" ] && ! grep -qxF -- "$caret" "$TMP/err"; then
		not_ok "$name: caret"
		sed 's/^/#   /' "$TMP/err"
		return
	fi
	ok "$name"
}

# conf NAME TEXT: writes $TMP/NAME.conf, sets F to its path.
conf() { F=$TMP/$1.conf; printf '%s' "$2" >"$F"; }
# check NAME STATUS MSG-AFTER-PATH [CARET] : --check-config on $F
cc() { local name=$1 status=$2 msg=$3 caret=${4:-}; expect "$name" "$status" "$F$msg" "$caret" -- "$TRACERD" --check-config "$F"; }

conf outside $'Foo=bar\n'
cc "assignment outside a section" 1 ":1:1: assignment outside a section, expected [Daemon] or [Selection] first" "    ^"
conf section $'[Bogus]\n'
cc "unknown section" 1 ":1:2: unknown section [Bogus], expected [Daemon], [Store], [Recorder], [Synthetic], [Metrics] or [Selection]" "     ^"
conf synthetic $'[Synthetic]\nEvent=wakeup_latency u64 lat; \\\n      pid_t pid; int64 prio\n'"$SEL"
cc "a synthetic event's bad type, on a continued line" 1 ":3:18: expected a type of the kernel's synthetic events: s64 u64 s32 u32 s16 u16 s8 u8 char, unsigned char, short, unsigned short, int, unsigned int, long, unsigned long, bool, pid_t, gfp_t, char[N]" "                     ^"
conf synthetic_twice $'[Synthetic]\nEvent=lat u64 a\n\n[Synthetic]\nEvent=  lat s64 b\n'"$SEL"
cc "a synthetic event defined twice" 1 ":5:9: synthetic event 'lat' is already defined at $TMP/synthetic_twice.conf:2; names must be unique" "            ^"
expect "a bad synthetic event, daemon start (EX_CONFIG)" 78 "$F:5:9: synthetic event 'lat' is already defined at $TMP/synthetic_twice.conf:2; names must be unique" "" -- "$TRACERD" --config "$F" --foreground
conf unclosed $'[Daemon\n'
cc "unclosed section header" 1 ":1:8: expected ']' to end the section header"
conf junk $'[Daemon] x\n'
cc "text after a section header" 1 ":1:11: expected ']' to end the section header"
conf noeq $'[Daemon]\njust words\n'
cc "a line without =" 1 ":2:1: expected Key=Value or [Section]"
conf unkkey $'[Daemon]\n  Foo=1\n'
cc "unknown [Daemon] key" 1 ":2:3: unknown key 'Foo' in [Daemon]; expected RingBufferSize, WakeupBytes, Output, FlushIntervalMSec, StatsIntervalSec, VariableMaxAgeSec or RawPointers" "      ^"
conf typo $'[Daemon]\nRingBufferSzie=8M\n'
cc "mistyped key: did you mean" 1 ":2:1: unknown key 'RingBufferSzie' in [Daemon]; did you mean 'RingBufferSize'?"
conf typo2 $'[Selection]\nName=s\nevent=sched:sched_switch\n'
cc "mistyped [Selection] key: did you mean" 1 ":3:1: unknown key 'event' in [Selection]; did you mean 'Events'?"
conf unkkey2 $'[Selection]\nColour=blue\n'
cc "unknown [Selection] key" 1 ":2:1: unknown key 'Colour' in [Selection]; expected Name, Events, Filter, Unit, Priority, RateLimit, RateLimitBurst, Output, Trigger, Aggregate, AggregateIntervalSec, SyscallStrings or StackTrace"
conf unkkey3 $'[Recorder]\nSize=1M\nKeepAfter=5\n'
cc "unknown [Recorder] key: did you mean" 1 ":3:1: unknown key 'KeepAfter' in [Recorder]; did you mean 'KeepAfterSec'?"
conf unkkey4 $'[Recorder]\nColour=blue\n'
cc "unknown [Recorder] key" 1 ":2:1: unknown key 'Colour' in [Recorder]; expected Size, KeepAfterSec, MinIntervalSec or MaxSnapshots"
conf maxsnap $'[Recorder]\nMaxSnapshots=-1\n'
cc "MaxSnapshots=-1" 1 ":2:14: expected a whole number from 0 to 1000000, got '-1'"
conf trigger $'[Selection]\nName=s\nEvents=sched:sched_switch\nTrigger=snapshot\n'
cc "Trigger=snapshot with no recorder" 1 ":4:9: Trigger=snapshot takes a snapshot of the recorder's window, and no selection records into it: expected a selection with Output=recorder" "            ^"
expect "Trigger=snapshot with no recorder, daemon start (EX_CONFIG)" 78 "$F:4:9: Trigger=snapshot takes a snapshot of the recorder's window, and no selection records into it: expected a selection with Output=recorder" "" -- "$TRACERD" --config "$F"
for v in 3K 2G lots -8M 99999999999999999999 2K 8Q 12K; do
	conf size "[Daemon]"$'\n'"RingBufferSize=$v"$'\n'"$SEL"
	cc "RingBufferSize=$v" 1 ":2:16: expected a power of two from 4K to 1G, got '$v'" "                   ^"
done
conf wake $'[Daemon]\nWakeupBytes=some\n'
cc "WakeupBytes=some" 1 ":2:13: expected a size such as 256K, got 'some'"
conf wake2 $'[Daemon]\nRingBufferSize=64K\nWakeupBytes=64K\n'"$SEL"
cc "WakeupBytes not below RingBufferSize" 1 ":3:13: WakeupBytes= must be below RingBufferSize= (65536 bytes)"
conf output $'[Daemon]\nOutput=syslog\n'
cc "Output=syslog" 1 ":2:8: expected 'journal', 'stdout' or 'store', got 'syslog'"
conf flush $'[Daemon]\nFlushIntervalMSec=0\n'
cc "FlushIntervalMSec=0" 1 ":2:19: expected a whole number from 1 to 10000, got '0'"
conf stats $'[Daemon]\nStatsIntervalSec=-1\n'
cc "StatsIntervalSec=-1" 1 ":2:18: expected a whole number from 0 to 86400, got '-1'"
conf raw $'[Daemon]\nRawPointers=maybe\n'
cc "RawPointers=maybe" 1 ":2:13: expected a boolean (yes or no), got 'maybe'"
conf name $'[Selection]\nName=bad name!\n'
cc "Name with a space" 1 ":2:9: expected a name of letters, digits, '-', '_' and '.'" "            ^"
conf ev1 $'[Selection]\nName=s\nEvents=sched\n'
cc "Events without a colon" 1 ":3:8: expected subsystem:event (globs allowed), got 'sched'"
conf ev2 $'[Selection]\nName=s\nEvents=sched:sched_switch \\\n    a:b:c\n'
cc "Events: a bad word on a continued line" 1 ":4:5: expected subsystem:event (globs allowed), got 'a:b:c'" "        ^"
conf prio "$SEL"$'Priority=loud\n'
cc "Priority=loud" 1 ":4:10: expected a syslog priority (emerg..debug or 0..7), got 'loud'"
conf rate "$SEL"$'RateLimit=fast\n'
cc "RateLimit=fast" 1 ":4:11: expected a whole number from 0 to 100000000, got 'fast'"
conf noname $'\n[Selection]\nEvents=sched:sched_switch\n'
cc "selection without Name=" 1 ":2:2: [Selection] needs a Name="
conf noev $'[Selection]\nName=s\n'
cc "selection without Events=" 1 ":1:2: [Selection] 's' needs Events= with at least one subsystem:event"
conf dup "$SEL$SEL"
cc "two selections with one name" 1 ":4:2: selection 's' is already defined at $F:1; names must be unique"
conf nosel $'[Daemon]\nOutput=stdout\n'
cc "no selection at all" 1 ": no [Selection] configured: nothing to trace"
conf empty ''
cc "an empty file" 1 ": no [Selection] configured: nothing to trace"

# Drop-ins: applied in name order; errors name the drop-in.
conf dropdup "$SEL"; mkdir -p "$F.d"
printf '%s' "$SEL" >"$F.d/20-b.conf"
printf '[Daemon]\nOutput=stdout\n' >"$F.d/10-a.conf"
expect "conflicting drop-ins: a selection defined twice" 1 \
	"$F.d/20-b.conf:1:2: selection 's' is already defined at $F:1; names must be unique" "" -- "$TRACERD" --check-config "$F"
conf dropdup2 $'[Daemon]\n'; mkdir -p "$F.d"
printf '%s' "$SEL" >"$F.d/10-a.conf"; printf '%s' "$SEL" >"$F.d/20-b.conf"
expect "conflicting drop-ins: both define one selection" 1 \
	"$F.d/20-b.conf:1:2: selection 's' is already defined at $F.d/10-a.conf:1; names must be unique" "" -- "$TRACERD" --check-config "$F"
conf dropwake $'[Daemon]\nRingBufferSize=64K\n'"$SEL"; mkdir -p "$F.d"
printf '[Daemon]\nWakeupBytes=1M\n' >"$F.d/50-wake.conf"
expect "a drop-in's WakeupBytes beyond the main file's ring" 1 \
	"$F.d/50-wake.conf:2:13: WakeupBytes= must be below RingBufferSize= (65536 bytes)" "" -- "$TRACERD" --check-config "$F"
conf dropsyntax "$SEL"; mkdir -p "$F.d"
printf '[Daemon]\nOutput=file\n' >"$F.d/10.conf"
expect "a syntax error in a drop-in" 1 "$F.d/10.conf:2:8: expected 'journal', 'stdout' or 'store', got 'file'" "" -- "$TRACERD" --check-config "$F"

# Files that cannot be read.
expect "missing file" 1 "$TMP/nope.conf: cannot read the config file: No such file or directory" "" -- "$TRACERD" --check-config "$TMP/nope.conf"
mkdir -p "$TMP/dir.conf"
expect "a directory as the config file" 1 "$TMP/dir.conf: cannot read the config file: Is a directory" "" -- "$TRACERD" --check-config "$TMP/dir.conf"
F=$TMP/nul.conf; printf '[Daemon]\nOutput=st\0dout\n' >"$F"
cc "a NUL byte" 1 ":2:10: expected text, found a NUL byte"
expect "/dev/zero as the config file" 1 "/dev/zero: cannot read the config file: not a regular file (a character device)" "" -- timeout 10 "$TRACERD" --check-config /dev/zero
mkfifo "$TMP/fifo.conf"
expect "a FIFO as the config file (no hang)" 1 "$TMP/fifo.conf: cannot read the config file: not a regular file (a FIFO)" "" -- timeout 10 "$TRACERD" --check-config "$TMP/fifo.conf"
F=$TMP/huge.conf; { printf '%s' "$SEL"; head -c 2000000 /dev/zero | tr '\0' '#'; } >"$F"
cc "a config over the size limit" 1 ": cannot read the config file: 2000045 bytes, more than the limit of 1048576 bytes"
conf dropzero "$SEL"; mkdir -p "$F.d"; ln -s /dev/zero "$F.d/10-zero.conf"
expect "a drop-in symlinked to /dev/zero" 1 "$F.d/10-zero.conf: cannot read the config file: not a regular file (a character device)" "" -- timeout 10 "$TRACERD" --check-config "$F"
expect "missing file, daemon start (EX_CONFIG)" 78 "$TMP/nope.conf: cannot read the config file: No such file or directory" "" -- "$TRACERD" --config "$TMP/nope.conf" --foreground

# Events that do not exist, with suggestions only when one is near.
conf unkev $'[Selection]\nName=s\nEvents=sched:sched_process_exec sched:sched_swich\n'
cc "unknown event: did you mean" 1 ":3:33: no event 'sched:sched_swich'; did you mean sched:sched_switch"
conf unksys $'[Selection]\nName=s\nEvents=shced:sched_switch\n'
cc "unknown subsystem: did you mean" 1 ":3:8: no event 'shced:sched_switch'; did you mean sched:sched_switch"
conf prefix $'[Selection]\nName=s\nEvents=kmem:kmallo\n'
cc "a cut-off name: did you mean" 1 ":3:8: no event 'kmem:kmallo'; did you mean kmem:kmalloc"
conf nothing $'[Selection]\nName=s\nEvents=foo:bar\n'
cc "unknown event, nothing near" 1 ":3:8: no event 'foo:bar'"
conf glob $'[Selection]\nName=s\nEvents=sched:nosuch*\n'
cc "a glob matching nothing" 1 ":3:8: 'sched:nosuch*' matches no event"
conf glob2 $'[Selection]\nName=s\nEvents=sched:sched_proces_*\n'
cc "a glob matching nothing: did you mean" 1 ":3:8: 'sched:sched_proces_*' matches no event; did you mean sched:sched_process_exec, sched:sched_process_exit or sched:sched_process_fork"
conf glob3 $'[Selection]\nName=s\nEvents=tcp:*retrans*x\n'
cc "a glob matching nothing: by its longest piece" 1 ":3:8: 'tcp:*retrans*x' matches no event; did you mean tcp:tcp_retransmit_skb or tcp:tcp_retransmit_synack"
conf badglob $'[Selection]\nName=s\nEvents=sched:sched_switch sched:sched_sw[itch\n'
cc "an unclosed [ in a glob" 1 ":3:41: 'sched:sched_sw[itch' is not a valid glob: expected ']' to close this '['"
conf badunit $'[Selection]\nName=s\nEvents=sched:sched_switch\nUnit=nginx.service getty@.service\n'
cc "Unit=: a template is no unit that runs" 1 ":4:25: expected unit names or globs (nginx.service, php-fpm*.service, user@1000.service), got 'getty@.service'" "                            ^"
conf globdrop "$SEL"; mkdir -p "$F.d"
printf '[Selection]\nName=t\nEvents=irq:irq_handler_entry \\\n  irq:nope_*\n' >"$F.d/10.conf"
expect "a glob matching nothing in a drop-in" 1 "$F.d/10.conf:4:3: 'irq:nope_*' matches no event" "" -- "$TRACERD" --check-config "$F"
expect "--describe an unknown event" 1 "tracerd: no event 'sched:sched_swich'; did you mean sched:sched_switch" "" -- "$TRACERD" --describe sched:sched_swich

if [ -d "$TRACEFS/events/kvmmmu/kvm_mmu_get_page" ]; then	# a print fmt libtraceevent cannot parse
	expect "--describe: the fallback is explained in words" 0 "tracerd: kvmmmu:kvm_mmu_get_page: tracerd cannot compile the print fmt (libtraceevent cannot parse it); rendering it as field=value pairs" "" -- "$TRACERD" --describe kvmmmu:kvm_mmu_get_page
	check "--describe: the rendering line says why" grep -qx "rendering: field=value, because tracerd cannot compile the print fmt: libtraceevent cannot parse it" "$TMP/out"
fi
expect "--describe a subsystem" 1 "tracerd: 'sched' is a subsystem, expected SUBSYSTEM:EVENT; tracerd --list-events 'sched:*' lists its $(ls -d $TRACEFS/events/sched/*/ | wc -l) events" "" -- "$TRACERD" --describe sched
expect "--describe an event without its subsystem" 1 "tracerd: no event 'sched_switch'; did you mean sched:sched_switch" "" -- "$TRACERD" --describe sched_switch
expect "--list-events: nothing matches" 1 "tracerd: no event matches 'nomatch:*'" "" -- "$TRACERD" --list-events 'nomatch:*'
check "--list-events: nothing matches prints nothing on stdout" [ ! -s "$TMP/out" ]
expect "--list-events: a near miss" 1 "tracerd: no event matches 'sched:sched_swich*'; did you mean sched:sched_stick_numa or sched:sched_switch" "" -- "$TRACERD" --list-events 'sched:sched_swich*'
expect "--list-events: an invalid glob" 1 "tracerd: '[' is not a valid glob: the '[' at column 1 has no closing ']'" "" -- "$TRACERD" --list-events '['
expect "--list-classes: nothing matches" 1 "tracerd: no event matches 'foo:*'" "" -- "$TRACERD" --list-classes 'foo:*'
expect "--list-events: a match" 0 "" "" -- "$TRACERD" --list-events 'sched:sched_switch'
check "--list-events: a match is listed" grep -qx "sched:sched_switch" "$TMP/out"

# Filters: one case per class of filter error, at the filter's column.
fc() { # NAME FILTER MSG-AFTER-PATH
	conf filter "$SEL"'Filter='"$2"$'\n'
	cc "filter: $1" 1 "$3"
}
fc "missing value" "prev_pid == " ":4:19: expected a value: a number, a symbol or a string"
fc "unknown field" "prev_pidd == 1" ":4:8: unknown field 'prev_pidd' in sched:sched_switch; its fields are: prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio, common_pid, common_type, comm, cpu"
fc "dangling &&" "prev_pid == 1 &&" ":4:24: expected a field name, '!' or '(' before the end of the filter"
fc "ordering a string" "prev_comm > 3" ":4:18: prev_comm is a string (char[16]): expected ==, !=, ~ or in, not '>'"
fc "unclosed (" "(prev_pid == 1" ":4:22: expected ')' to close the '(' at column 8"
fc "glob on a number" "prev_pid ~ 1" ":4:17: '~' is a glob and needs a string; prev_pid is a number (pid_t): expected ==, !=, <, <=, >, >=, &, &= or in"
fc "bad number" "prev_pid == 0x" ":4:20: expected a number for prev_pid (pid_t), not '0x'"

# The environment: tracefs unmounted, BTF missing.
conf good "$SEL"
mkdir -p "$TMP/notracefs"
expect "tracefs not mounted (--check-config)" 1 "tracefs is not mounted at $TMP/notracefs: No such file or directory" "" -- \
	env TRACERD_TRACEFS="$TMP/notracefs" "$TRACERD" --check-config "$F"
expect "tracefs not mounted (daemon): exit 69 (EX_UNAVAILABLE)" 69 "tracefs is not mounted at $TMP/notracefs: No such file or directory" "" -- \
	env TRACERD_TRACEFS="$TMP/notracefs" "$TRACERD" --config "$F" --foreground
expect "tracefs not mounted (--list-events)" 1 "tracefs is not mounted at $TMP/notracefs: No such file or directory" "" -- \
	env TRACERD_TRACEFS="$TMP/notracefs" "$TRACERD" --list-events
expect "tracefs path missing (daemon): exit 69 (EX_UNAVAILABLE)" 69 "tracefs is not mounted at $TMP/nosuchdir: No such file or directory" "" -- \
	env TRACERD_TRACEFS="$TMP/nosuchdir" "$TRACERD" --config "$F" --foreground
# Mounted but unreadable: the real tracefs (0700 root) as nobody without
# CAP_DAC_READ_SEARCH, found on its own and named by TRACERD_TRACEFS. The
# config must be readable to nobody: $TMP is 0700.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
PUBCONF=$(mktemp /tmp/tracerd-nobody.XXXXXX.conf)
on_exit "rm -f $PUBCONF"
chmod 644 "$PUBCONF" && printf '%s' "$SEL" >"$PUBCONF"
mode=$(stat -c %a "$TRACEFS")
if [ "$mode" = 700 ]; then
	denied="cannot read tracefs at $TRACEFS: Permission denied (mode 0700, owner 0:0; tracerd runs as uid 65534 and needs CAP_DAC_READ_SEARCH to read it)"
	expect "tracefs unreadable (daemon as nobody): exit 77 (EX_NOPERM)" 77 "$denied" "" -- \
		"${NOBODY[@]}" "$TRACERD" --config "$PUBCONF" --foreground
	expect "tracefs unreadable, TRACERD_TRACEFS (daemon as nobody): exit 77" 77 "$denied" "" -- \
		"${NOBODY[@]}" env TRACERD_TRACEFS="$TRACEFS" "$TRACERD" --config "$PUBCONF" --foreground
	expect "tracefs unreadable (--list-events as nobody)" 1 "$denied" "" -- \
		"${NOBODY[@]}" "$TRACERD" --list-events
else
	ok "tracefs unreadable as nobody # SKIP $TRACEFS is mode $mode here, not 0700"
fi
# Root without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (as in a container
# whose bounding set lacks them): the kernel refuses BPF, EX_NOPERM.
NOBPF=(setpriv --inh-caps=-bpf,-perfmon,-sys_admin --bounding-set=-bpf,-perfmon,-sys_admin)
expect "no CAP_BPF (daemon): exit 77 (EX_NOPERM)" 77 \
	"cannot load the BPF program: Operation not permitted (tracerd needs CAP_BPF and CAP_PERFMON)" "" -- \
	"${NOBPF[@]}" "$TRACERD" --config "$F" --foreground
expect "BTF missing: a warning, classes by layout" 0 "tracerd: no kernel BTF (No such file or directory): event classes are inferred from layouts" "" -- \
	env TRACERD_BTF="$TMP/nobtf" "$TRACERD" --list-classes 'sched:sched_switch'
check "BTF missing: --list-classes falls back to layouts" grep -q '^sched_switch \[by layout\]' "$TMP/out"

# The command line.
expect "unknown option" 2 "$TRACERD: unrecognized option '--bogus'" "" -- "$TRACERD" --bogus
expect "unexpected argument" 2 "tracerd: unexpected argument 'extra'; see --help" "" -- "$TRACERD" --config "$F" extra

note "$n bad inputs checked"
check "at least 40 bad inputs in the catalogue" [ "$n" -ge 40 ]

# Reload: a bad config is refused, the running one keeps tracing.
printf '[Daemon]\nFlushIntervalMSec=10\n[Selection]\nName=r\nEvents=syscalls:sys_enter_sysfs\n' >"$TMP/run.conf"
cp "$TMP/run.conf" "$TMP/run.orig"
start_tracerd "$TMP/run.conf" "$TMP/run" || { not_ok "reload: tracerd starts"; exit 0; }
read -r pid1 _ < <("$FIRE" 100)
bad_reloads=0
for bad in $'[Daemon]\nOutput=syslog\n' $'[Selection]\nName=r\nEvents=sched:nosuch\n' $'Foo=1\n' \
	$'[Selection]\nName=r\nEvents=syscalls:sys_enter_sysfs\n[Selection]\nName=r\nEvents=irq:*\n' \
	$'[Selection]\nName=r\nEvents=syscalls:sys_enter_sysfs\nFilter=option ==\n' \
	$'[Synthetic]\nEvent=lat u64 a; foo b\n[Selection]\nName=r\nEvents=syscalls:sys_enter_sysfs\n'; do
	printf '%s' "$bad" >"$TMP/run.conf"
	before=$(grep -c "reload failed" "$TMP/run.err")
	kill -HUP "$TRACERD_PID"
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "reload failed" "$TMP/run.err")" -gt "$before" ] && break
		sleep 0.05
	done
	[ "$(grep -c "reload failed" "$TMP/run.err")" -gt "$before" ] && bad_reloads=$((bad_reloads + 1))
done
grep "reload failed" "$TMP/run.err" | sed 's/^/#   /'
check "reload: 6 bad configs refused with their message" [ "$bad_reloads" = 6 ]
check "reload: the message names file:line:column" grep -qF "reload failed, keeping the running configuration: $TMP/run.conf:2:8: expected 'journal', 'stdout' or 'store', got 'syslog'" "$TMP/run.err"
check "reload: a bad synthetic event's too" grep -qF "reload failed, keeping the running configuration: $TMP/run.conf:2:18: expected a type of the kernel's synthetic events" "$TMP/run.err"
read -r pid2 _ < <("$FIRE" 100)
sleep 0.2
stop_tracerd
c1=$(grep -c -- "-$pid1 .*: sys_sysfs(option: " "$TMP/run")
c2=$(grep -c -- "-$pid2 .*: sys_sysfs(option: " "$TMP/run")
note "events before the bad reloads: $c1, after: $c2"
check "reload: the running config keeps tracing (100 and 100 events)" [ "$c1" = 100 -a "$c2" = 100 ]
