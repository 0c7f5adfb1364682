#!/usr/bin/env bash
# Fast by default (issue 30): a selection without a Filter= runs an emitted
# program too, attached in the shared class program's place, which writes
# its records itself (of fixed size, or with __data_loc strings), and its
# records are the kernel's: the text after "event: " of every record of the
# workload, in order, against a tracefs instance's. The shared class program
# is the fallback only, and tracerd says why, at start and in
# --check-config.
. "$(dirname "$0")/../lib.sh"
need_root emit_default
N=300

cat >"$TMP/c.conf" <<'CONF'
[Daemon]
Output=stdout
RawPointers=yes
FlushIntervalMSec=20
StatsIntervalSec=0
[Selection]
Name=fixed
Events=filelock:fcntl_setlk
[Selection]
Name=dyn
Events=sched:sched_process_wait
CONF
cp "$TMP/c.conf" "$TMP/check.conf"
# A glob the emitter does not split (a `?`): the interpreter's. Unit=
# without a filter: the class program's, which checks it.
printf '[Selection]\nName=glob\nEvents=sched:sched_process_wait\nFilter=comm ~ "b?sh"\n' >>"$TMP/check.conf"
printf '[Selection]\nName=unit\nEvents=filelock:fcntl_setlk\nUnit=tracerd-emit-nothing.service\n' >>"$TMP/check.conf"

"$TRACERD" --check-config "$TMP/check.conf" >"$TMP/check" 2>&1
check "--check-config accepts the config" grep -q ": OK" "$TMP/check"
check "--check-config: no Filter=, fixed size: emitted" \
	grep -q "selection fixed: Events= (no Filter=) compiled to BPF: 1 program(s) for 1 events" "$TMP/check"
check "--check-config: no Filter=, a __data_loc string: emitted" \
	grep -q "selection dyn: Events= (no Filter=) compiled to BPF: 1 program(s) for 1 events" "$TMP/check"
check "--check-config: a filter the emitter refuses says why it is interpreted" \
	grep -Eq "selection glob: Filter= runs in the interpreter: .{10,}" "$TMP/check"
check "--check-config: Unit= without a filter says why the class program runs it" \
	grep -q "selection unit: Events= (no Filter=) runs in the class program: Unit= is checked in the accept half" "$TMP/check"
TRACERD_TEST_INTERPRET=fixed "$TRACERD" --check-config "$TMP/check.conf" >"$TMP/check-i" 2>&1
check "--check-config: the shared class program's reason for a selection without a Filter=" \
	grep -q "selection fixed: Events= (no Filter=) runs in the class program: TRACERD_TEST_INTERPRET names it" \
	"$TMP/check-i"

make_instance "tracerd-emit-$$" || { not_ok "tracefs instance"; exit 0; }
on_exit "echo 0 > $INSTANCE/events/enable"
echo 1 >"$INSTANCE/events/filelock/fcntl_setlk/enable"
echo 1 >"$INSTANCE/events/sched/sched_process_wait/enable"
start_tracerd "$TMP/c.conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }
check "start: the selection without a Filter= says it is emitted" \
	grep -q "selection fixed: Events= (no Filter=) compiled to BPF: 1 program(s) for 1 events, loaded in" "$TMP/out.err"

# The programs the two links run: the emitted ones, not the class program.
names=$(for f in /proc/"$TRACERD_PID"/fdinfo/*; do
	grep -q '^link_type:' "$f" 2>/dev/null || continue
	id=$(awk '$1 == "prog_id:" {print $2}' "$f")
	bpftool -j prog show id "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])'
done | sort | uniq -c | tr -s ' ' | paste -sd,)
note "programs the links run: $names"
check "both events run the emitted program (tracerd_filter), not the class program" [ "$names" = " 2 tracerd_filter" ]

# The workload: fcntl(F_SETLKW, F_UNLCK) and wait4(-1, WNOHANG) without children.
python3 - "$N" "$TMP/lock" >"$TMP/pid" <<'PY'
import fcntl, os, sys
n, path = int(sys.argv[1]), sys.argv[2]
print(os.getpid(), flush=True)
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
for _ in range(n):
    fcntl.lockf(fd, fcntl.LOCK_UN)
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass
PY
pid=$(cat "$TMP/pid")
sleep 0.3
echo 0 >"$INSTANCE/events/enable"
stop_tracerd
check "tracerd exits 0" [ $? = 0 ]
for ev in fcntl_setlk sched_process_wait; do
	grep -- "-$pid .* $ev: " "$INSTANCE/trace" | sed "s/.* $ev: //" >"$TMP/kernel.$ev"
	grep -- "-$pid .* $ev: " "$TMP/out" | sed "s/.* $ev: //" >"$TMP/tracerd.$ev"
	note "$ev: kernel $(wc -l <"$TMP/kernel.$ev"), tracerd $(wc -l <"$TMP/tracerd.$ev") records; first: $(head -1 "$TMP/tracerd.$ev")"
	# (at least N: a wait4 of the shell's fork before the exec too)
	check "$ev: at least $N records in the kernel's trace" [ "$(wc -l <"$TMP/kernel.$ev")" -ge $N ]
	check "$ev: tracerd's $N records render as the kernel's" diff "$TMP/kernel.$ev" "$TMP/tracerd.$ev"
done
check "nothing lost" bash -c "! grep -Eq 'summary: selection [a-z]+: [0-9]+ delivered, [1-9][0-9]* lost' '$TMP/out.err'"
