#!/usr/bin/env bash
# Aggregate=hist:keys=common_stacktrace against the kernel's own stacks of the
# same events taken one by one: a tracefs instance with the `stacktrace`
# trigger (trace_clock mono, sym-offset) on the same four events of four
# subsystems, filtered to the same task, while tests/tools/stack_paths fires
# each a known number of times from known call paths (two paths for two of
# them). Per event, tracerd's count for each stack (16 frames from the
# tracepoint's caller on) must equal the kernel's number of records with that
# stack, and the workload's count; hitcounts + Dropped = Hits. One event
# (netif_receive_skb of a datagram on lo) is deeper than 16 frames: the
# summary's agg_stack_cut= must equal the kernel's records of stacks deeper
# than 16, and the hitcounts the dump shows cut. Run twice:
# with kallsyms, and without its addresses as the service runs (the kernel's
# own %pB through BPF). Each selection's histogram is counted in its emitted
# program (the start log says so). Run a third time with a stack id map of 4
# entries (TRACERD_TEST_AGG_STACK_IDS): at most 4 stacks get an id, every
# other one finds its bucket taken by another stack and is counted under its
# frames, and the counts per stack must still equal the kernel's: a bucket
# collision never adds one stack's events to another's. Then Aggregate= on
# the stack without Filter=, also emitted, and the journal's entry of a stack.
. "$(dirname "$0")/../lib.sh"
need_root aggregate_stack
CMP=$(dirname "$0")/agg_stack_compare.py
W=$PWD/${BUILD:-build}/tests/tools/stack_paths
N=500
EVENTS="filelock/fcntl_setlk sched/sched_process_wait syscalls/sys_enter_getppid task/task_rename net/netif_receive_skb"

# wl_start: the workload, waiting to fire; its pid in $pid. wl_fire: it
# fires its N events and exits. (Under ASan, LeakSanitizer's exit check
# waits for a thread of its own: one more sched_process_wait, after the
# instance stopped recording.)
wl_start() {
	coproc WL { ASAN_OPTIONS=detect_leaks=0 "$W" "$N"; }
	read -r -u "${WL[0]}" pid
}
wl_fire() {
	local d
	echo go >&"${WL[1]}"
	read -r -u "${WL[0]}" d
	exec {WL[1]}>&-
	wait "$WL_PID" 2>/dev/null
}

run() { # NAME [ENV...]: one run of both tracers over the workload
	local name=$1 pid d; shift
	make_instance "tracerd-aggstack-$name-$$" || { not_ok "$name: instance"; return; }
	echo 1 >"$INSTANCE/options/sym-offset"
	echo 0 >"$INSTANCE/tracing_on"
	wl_start
	for e in $EVENTS; do
		echo "common_pid == $pid" >"$INSTANCE/events/$e/filter"
		echo 1 >"$INSTANCE/events/$e/enable"
		echo "stacktrace if common_pid == $pid" >"$INSTANCE/events/$e/trigger"
		on_exit "echo '!stacktrace if common_pid == $pid' >$INSTANCE/events/$e/trigger"
	done
	cat >"$TMP/$name.conf" <<EOF2
[Daemon]
Output=stdout
[Selection]
Name=setlk
Events=filelock:fcntl_setlk
Filter=common_pid == $pid
Aggregate=hist:keys=common_stacktrace:vals=hitcount:sort=hitcount.descending:size=512
AggregateIntervalSec=0
[Selection]
Name=wait
Events=sched:sched_process_wait
Filter=common_pid == $pid
Aggregate=hist:keys=stacktrace:sort=hitcount.descending:size=512
AggregateIntervalSec=0
[Selection]
Name=getppid
Events=syscalls:sys_enter_getppid
Filter=common_pid == $pid
Aggregate=hist:keys=common_stacktrace:size=512
AggregateIntervalSec=0
[Selection]
Name=rename
Events=task:task_rename
Filter=common_pid == $pid
Aggregate=hist:keys=common_stacktrace:sort=hitcount.descending:size=512
AggregateIntervalSec=0
[Selection]
Name=netrx
Events=net:netif_receive_skb
Filter=common_pid == $pid
Aggregate=hist:keys=common_stacktrace:size=512
AggregateIntervalSec=0
EOF2
	env "$@" "$TRACERD" --config "$TMP/$name.conf" --foreground >"$TMP/$name.out" 2>"$TMP/$name.err" &
	TRACERD_PID=$!
	on_exit "kill -INT $TRACERD_PID 2>/dev/null; wait $TRACERD_PID"
	for ((i = 0; i < 300; i++)); do grep -qs attached "$TMP/$name.err" && break; sleep 0.05; done
	stack_id_entries "$TRACERD_PID" >"$TMP/$name.ids"
	echo 1 >"$INSTANCE/tracing_on"
	echo go >&"${WL[1]}"
	read -r -u "${WL[0]}" d
	echo 0 >"$INSTANCE/tracing_on"
	exec {WL[1]}>&-
	wait "$WL_PID" 2>/dev/null
	stop_tracerd
	rc=$?
	check "$name: tracerd exits 0 at stop ($rc)" [ $rc = 0 ]
	[ $rc = 0 ] || sed "s/^/# /" "$TMP/$name.err"
	cat "$INSTANCE/trace" >"$TMP/$name.trace"
	overrun=$(awk '/^overrun:/ {n += $2} END {print n + 0}' "$INSTANCE"/per_cpu/cpu*/stats)
	check "$name: the kernel's instance kept every record (overrun $overrun)" [ "$overrun" = 0 ]
	python3 "$CMP" --summary "$TMP/$name.err" "$TMP/$name.out" "$TMP/$name.trace" \
		"setlk|filelock:fcntl_setlk|fcntl_setlk:|$N" \
		"wait|sched:sched_process_wait|sched_process_wait:|$((3 * N))" \
		"getppid|syscalls:sys_enter_getppid|sys_getppid(|$((3 * N))" \
		"rename|task:task_rename|task_rename:|$((2 * N))" \
		"netrx|net:netif_receive_skb|netif_receive_skb:|$N" | sed "s/^\(\(not \)\?ok - \)/\1$name: /" |
		tee "$TMP/$name.cmp"
	check "$name: every selection's histogram is counted in its emitted program" \
		[ "$(grep -c "Filter= and Aggregate= compiled to BPF" "$TMP/$name.err")" = 5 ]
	check "$name: the summary counts every event aggregated, none dropped" \
		[ "$(grep -c "aggregated=[1-9][0-9]* agg_dropped=0 agg_no_stack=0" "$TMP/$name.err")" = 5 ]
	check "$name: no raw kernel address in the dumps" bash -c "! grep -q ffffffff $TMP/$name.out"
}

# The entries of the stack id map tracerd $1 holds (a STACK_TRACE map, type 7).
stack_id_entries() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '$1 == "map_type:" {t = $2} $1 == "max_entries:" {m = $2} END {if (t == 7) print m}' "$f"
	done 2>/dev/null
}

run kallsyms
run no-kallsyms TRACERD_KALLSYMS=/dev/null
run tiny TRACERD_TEST_AGG_STACK_IDS=4
stacks=$(grep -o "one by one ([0-9]* stacks" "$TMP/tiny.cmp" | tr -d '(' | awk '{s += $4} END {print s + 0}')
check "tiny: the stack id map has 4 entries ($(cat "$TMP/tiny.ids")), the normal one 16384 ($(cat "$TMP/kallsyms.ids"))" \
	[ "$(cat "$TMP/tiny.ids")/$(cat "$TMP/kallsyms.ids")" = 4/16384 ]
check "tiny: more stacks ($stacks) than ids (4): some counted under their frames" [ "$stacks" -gt 4 ]

# tracerd alone, one probe on each tracepoint: the static call goes straight
# to perf_trace_<class>, no __traceiter_<event> frame leads (beside the
# instance above, one did). The dump must be the same.
wl_start
sed "s/common_pid == [0-9]*/common_pid == $pid/" "$TMP/kallsyms.conf" >"$TMP/alone.conf"
if start_tracerd "$TMP/alone.conf" "$TMP/alone.out"; then
	wl_fire
	stop_tracerd
	python3 "$CMP" --same "$TMP/kallsyms.out" "$TMP/alone.out"
else
	not_ok "alone: tracerd starts"
fi

# Aggregate= on the stack without Filter=: emitted too, for every
# fcntl_setlk on the machine. The workload's stack (the one the first run
# found) counts at least its N events (another process may take the same
# path), and hitcounts + Dropped = Hits, none dropped.
printf '[Daemon]\nOutput=stdout\n[Selection]\nName=nofilter\nEvents=filelock:fcntl_setlk\nAggregate=hist:keys=common_stacktrace\nAggregateIntervalSec=0\n' >"$TMP/nf.conf"
wl_start
if start_tracerd "$TMP/nf.conf" "$TMP/nf.out"; then
	wl_fire
	stop_tracerd
	check "no filter: the histogram is counted in an emitted program" \
		grep -q "selection nofilter: Aggregate= compiled to BPF" "$TMP/nf.out.err"
	python3 - "$CMP" "$TMP/kallsyms.out" "$TMP/nf.out" "$N" <<'EOF2'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("cmp", sys.argv[1])
cmp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cmp)
first, _ = cmp.tracerd_hists(sys.argv[2])
hists, totals = cmp.tracerd_hists(sys.argv[3])
(stack,) = first["setlk"]
h, t, n = hists.get("nofilter", {}), totals.get("nofilter", {}), int(sys.argv[4])
ok = h.get(stack, 0) >= n and t.get("Dropped") == 0 and sum(h.values()) == t.get("Hits")
print(("ok - " if ok else "not ok - ") + f"no filter: the workload's stack counts {h.get(stack, 0)} >= {n}; "
      f"hitcounts {sum(h.values())} + Dropped {t.get('Dropped')} = Hits {t.get('Hits')}")
EOF2
else
	not_ok "no filter: tracerd starts"
fi

# The journal: an entry per stack, TRACE_COMMON_STACKTRACE= a frame per
# line (as the stdout dump's), MESSAGE the kernel's whole entry; the final
# statistics count the events of cut stacks (TRACE_STATS_AGG_STACKS_CUT=).
printf '[Daemon]\nOutput=journal\n[Selection]\nName=jstack\nEvents=filelock:fcntl_setlk\nFilter=comm == "stackw"\nAggregate=hist:keys=stacktrace\nAggregateIntervalSec=0\n' >"$TMP/j.conf"
printf '[Selection]\nName=jnet\nEvents=net:netif_receive_skb\nFilter=comm == "stackw"\nAggregate=hist:keys=stacktrace\nAggregateIntervalSec=0\n' >>"$TMP/j.conf"
unshare -m bash -c "
	mkdir -p /run/systemd && mount -t tmpfs none /run/systemd && mkdir /run/systemd/journal || exit 1
	python3 $(dirname "$0")/agg_journal.py /run/systemd/journal/socket $TMP/j.txt & J=\$!
	for ((i = 0; i < 50; i++)); do [ -S /run/systemd/journal/socket ] && break; sleep 0.02; done
	$TRACERD --config $TMP/j.conf >$TMP/j.err 2>&1 & P=\$!
	for ((i = 0; i < 100; i++)); do grep -q attached $TMP/j.err && break; sleep 0.05; done
	echo go | ASAN_OPTIONS=detect_leaks=0 $W 7 >/dev/null
	kill -INT \$P; wait \$P
	sleep 0.2; kill \$J
"
python3 - "$TMP/j.txt" "$TMP/kallsyms.out" <<'EOF2'
import ast, sys
ents = [ast.literal_eval(l) for l in open(sys.argv[1]) if "TRACE_HIST" in l]
keys = [e for e in ents if e.get("TRACE_HIST") == "jstack" and "TRACE_HITCOUNT" in e]
out = open(sys.argv[2]).read()
i = out.index("{ common_stacktrace:\n", out.index("# selection: setlk,"))
entry = out[i:out.index("\n", out.index("} hitcount:", i))]
frames = "\n".join(l.strip() for l in entry.splitlines()[1:-1])
ok = len(keys) == 1 and keys[0]["TRACE_HITCOUNT"] == "7" and \
    keys[0].get("TRACE_COMMON_STACKTRACE") == frames and \
    keys[0]["MESSAGE"] == entry.replace("hitcount:        500", "hitcount:          7")
print(("ok - " if ok else "not ok - ") + "journal: TRACE_COMMON_STACKTRACE= a frame per line, "
      f"MESSAGE the kernel's entry ({len(keys)} entries)")
if not ok:
    print("# " + repr(keys) + "\n# want " + repr(frames))
EOF2
python3 - "$TMP/j.txt" <<'EOF2'
import ast, sys
ents = [ast.literal_eval(l) for l in open(sys.argv[1]) if "TRACE_STATS_FINAL" in l]
cut = {e["TRACE_SELECTION"]: e.get("TRACE_STATS_AGG_STACKS_CUT") for e in ents
       if e.get("TRACE_STATS_FINAL") == "1"}
ok = cut == {"jstack": "0", "jnet": "7"}
print(("ok - " if ok else "not ok - ") + "journal: the final TRACE_STATS_AGG_STACKS_CUT= counts "
      f"the 7 events of netif_receive_skb's cut stack, none of fcntl_setlk's ({cut})")
EOF2

bad() { bad_selection "$@"; }
bad "a modifier on common_stacktrace" "Aggregate=hist:keys=common_stacktrace.hex" \
	":4:39: common_stacktrace takes no modifier: it prints as the kernel's hist file prints it, a frame per line"
bad "common_stacktrace in a filter" "Filter=common_stacktrace == 1" \
	":4:8: common_stacktrace is the event's call path: a key of Aggregate= (keys=common_stacktrace), not a value a filter compares"
