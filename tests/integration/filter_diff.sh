#!/usr/bin/env bash
# Filters against the kernel's own ftrace filter as the oracle: every
# expression of the corpus below is set on its event in a tracefs instance
# and in tracerd; one workload runs; both must accept exactly the same
# records. Symbolic and extended forms (symbols, &=, in, MAJOR:MINOR) are
# compared with the equivalent numeric filter in the kernel.
#
# An event can carry one filter per instance and per tracerd (one program is
# attached once per tracepoint), so the corpus runs in rounds side by side:
# round k is instance tracerd-filter-$$-k and a tracerd with the k-th
# expression of every event.
. "$(dirname "$0")/../lib.sh"
need_root filter_diff

PORT=$((20000 + $$ % 20000))

# event @ tracerd expression [@ the kernel's equivalent]
corpus() {
	cat <<EOF
sched:sched_process_exec @ filename == "/bin/true"
sched:sched_process_exec @ filename ~ "*/env"
sched:sched_process_exec @ filename ~ "/usr/bin/*" && pid > 1
sched:sched_process_exec @ filename ~ "/[bu]*/t?ue"
sched:sched_process_exec @ !(filename ~ "*sh") && old_pid >= 1000
sched:sched_process_exec @ comm == "sh" || comm == "ls"
sched:sched_process_exec @ filename ~ "*/e*" || comm ~ "*ee*"
sched:sched_process_fork @ parent_comm == "bash"
sched:sched_process_fork @ child_pid > 1000 && parent_comm ~ "ba*"
sched:sched_process_fork @ parent_comm != "bash" && child_comm != "bash"
sched:sched_process_fork @ child_comm ~ "*a[s-z]h"
sched:sched_process_fork @ parent_pid & 1
sched:sched_process_fork @ parent_comm ~ "*as*" && child_pid > 1
sched:sched_process_fork @ child_comm ~ "*sh" @ child_comm ~ "*s[h]"
sched:sched_process_exit @ comm == "true" || comm == "env"
sched:sched_process_exit @ prio < 120 || prio > 120
sched:sched_process_exit @ comm ~ "*s*" && group_dead == 1
sched:sched_process_exit @ pid & 3 && !(comm == "sleep")
sched:sched_process_exit @ cpu == 1 || comm ~ "l?"
sched:sched_process_exit @ comm ~ "*ue" @ comm ~ "*u[e]"
sched:sched_process_free @ comm == "sleep"
sched:sched_process_free @ comm ~ "s*"
sched:sched_process_free @ comm ~ "*[0-9]*" || pid < 1000
sched:sched_process_free @ prio >= 120 && comm != "true"
sched:sched_switch @ prev_state == 1
sched:sched_switch @ prev_state & D @ prev_state & 2
sched:sched_switch @ prev_comm == "sleep" || next_comm == "sleep"
sched:sched_switch @ prev_pid == 0 && next_comm ~ "b*"
sched:sched_switch @ prev_state & S && next_pid != 0 @ prev_state & 1 && next_pid != 0
sched:sched_switch @ prev_comm ~ "*ee*" || next_comm ~ "*er/*"
sched:sched_switch @ next_comm ~ "*sh" @ next_comm ~ "*s[h]"
sched:sched_wakeup @ comm == "bash"
sched:sched_wakeup @ target_cpu == 0 && prio >= 120
sched:sched_wakeup @ comm ~ "kworker/*" || prio < 100
sched:sched_wakeup @ pid > 100 && target_cpu != 1
sched:sched_wakeup @ comm ~ "*worker*"
signal:signal_generate @ sig == 15
signal:signal_generate @ sig in (10, 15, 17) @ sig == 10 || sig == 15 || sig == 17
signal:signal_generate @ comm == "sleep" && result == 0
signal:signal_generate @ sig >= 17 || code < 0
signal:signal_generate @ errno != 0 || group == 1
signal:signal_generate @ comm ~ "*ee*"
signal:signal_deliver @ sig == 17
signal:signal_deliver @ sa_handler > 1
signal:signal_deliver @ sa_flags & 0x4000000
signal:signal_deliver @ sig != 17 && code > -10
task:task_newtask @ clone_flags & 0x10000
task:task_newtask @ clone_flags &= 0x1200011 @ clone_flags & 0x1000000 && clone_flags & 0x200000 && clone_flags & 0x10 && clone_flags & 0x1
task:task_newtask @ comm == "bash" && oom_score_adj == 0
task:task_newtask @ oom_score_adj < 0 || pid < 10 || comm ~ "python*"
task:task_rename @ newcomm == "true"
task:task_rename @ oldcomm ~ "*sh" && newcomm != "env" @ oldcomm ~ "*[s]h" && newcomm != "env"
task:task_rename @ newcomm ~ "[a-m]*"
task:task_rename @ oom_score_adj == -1000 || pid & 1
syscalls:sys_enter_openat @ dfd > 1000
syscalls:sys_enter_openat @ flags & 0x40
syscalls:sys_enter_openat @ flags == 0x80000
syscalls:sys_enter_openat @ mode != 0 || comm == "cat"
syscalls:sys_exit_openat @ ret < 0
syscalls:sys_exit_openat @ ret >= 3 && ret <= 5
syscalls:sys_exit_openat @ ret == -2 && common_pid > 1
syscalls:sys_exit_openat @ ret in (-2, -13) @ ret == -2 || ret == -13
syscalls:sys_exit_openat @ comm ~ "*at" @ comm ~ "*a[t]"
syscalls:sys_enter_kill @ sig == 15
syscalls:sys_enter_kill @ sig == 0 || pid == 1
irq:softirq_entry @ vec == NET_RX @ vec == 3
irq:softirq_entry @ vec in (TIMER, RCU) @ vec == 1 || vec == 9
irq:softirq_entry @ vec > 5
irq:softirq_entry @ vec != 1 && vec != 9 && (cpu == 0 || vec == SCHED) @ vec != 1 && vec != 9 && (cpu == 0 || vec == 7)
sock:inet_sock_set_state @ newstate == TCP_CLOSE @ newstate == 7
sock:inet_sock_set_state @ oldstate == 2 && newstate == 1
sock:inet_sock_set_state @ dport == $PORT || sport == $PORT
sock:inet_sock_set_state @ family == 2 && protocol == 6 && newstate != 7
net:netif_receive_skb @ name == "lo"
net:netif_receive_skb @ name ~ "l?" && len > 100
net:netif_receive_skb @ len < 60
net:net_dev_queue @ name != "lo"
net:net_dev_queue @ name ~ "*o" && len >= 100
net:net_dev_queue @ name ~ "*l*" && len < 100
filelock:flock_lock_inode @ flags & FL_SLEEP @ flags & 128
filelock:flock_lock_inode @ type in (F_UNLCK, F_RDLCK) @ type == 2 || type == 0
filelock:flock_lock_inode @ flags &= 0x82 && ret == 0 @ flags & 0x80 && flags & 0x2 && ret == 0
filelock:flock_lock_inode @ s_dev == $TMP_MAJ:$TMP_MIN && type != 2 @ s_dev == $TMP_DEV_T && type != 2
filelock:flock_lock_inode @ comm ~ "*lo*" && type != 2
block:block_rq_issue @ dev == $LOOP_MAJ:$LOOP_MIN @ dev == $LOOP_DEV_T
block:block_rq_issue @ rwbs ~ "W*"
block:block_rq_issue @ comm == "dd" && bytes >= 8192
block:block_rq_issue @ rwbs ~ "*R*" || nr_sector > 8
block:block_rq_issue @ rwbs ~ "*S" @ rwbs ~ "*[S]"
EOF
}

# The workload: processes, signals, files, TCP on loopback, block I/O.
workload() {
	local i
	for i in $(seq 1 15); do
		/bin/true
		/usr/bin/env true
		sh -c 'exit 3'
		ls "/nonexistent-$i" 2>/dev/null
		cat /etc/hostname >/dev/null
		: >"$TMP/created-$i"
		# Signals sent by other programs: a killed child of this shell could
		# run its EXIT trap before it execs.
		timeout -s TERM 0.01 sleep 5
		(sh -c 'kill -USR1 $$') 2>/dev/null
		kill -0 $$
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && cat <&3 >/dev/null) 2>/dev/null
		(echo >"/dev/tcp/127.0.0.1/1") 2>/dev/null
		dd if=/dev/zero of="$LOOPDEV" bs=4k count=$((i % 4 + 1)) seek="$i" oflag=direct 2>/dev/null
		dd if="$LOOPDEV" of=/dev/null bs=16k count=1 skip="$i" iflag=direct 2>/dev/null
		flock "$TMP/lock" true
		flock -s "$TMP/lock" true
		flock -n /dev/null true
	done
}

mono_ns() { awk '/^now at/ {print $3; exit}' /proc/timer_list; }

# Loop device for block events.
truncate -s 64M "$TMP/blk.img"
LOOPDEV=$(losetup -f --show "$TMP/blk.img") || { not_ok "loop device"; exit 0; }
on_exit "losetup -d $LOOPDEV"
read -r LOOP_MAJ LOOP_MIN < <(stat -c '%t %T' "$LOOPDEV" | while read -r a b; do echo $((16#$a)) $((16#$b)); done)
LOOP_DEV_T=$(((LOOP_MAJ << 20) | LOOP_MIN))
# The filesystem of $TMP, for flock's s_dev.
: >"$TMP/lock"
read -r TMP_MAJ TMP_MIN < <(stat -c '%Hd %Ld' "$TMP/lock")
TMP_DEV_T=$(((TMP_MAJ << 20) | TMP_MIN))

mkdir -p "$TMP/www" && echo hello >"$TMP/www/index.html"
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$PORT" >/dev/null 2>&1 &
HTTP_PID=$!
on_exit "kill $HTTP_PID"

# Read the corpus, check each tracerd expression alone, assign rounds.
declare -A round_of_event
: >"$TMP/spec"
n=0 skipped=0 rounds=0
while IFS= read -r line; do
	event=$(sed 's/ *@.*//' <<<"$line")
	expr=$(cut -d@ -f2 <<<"$line" | sed 's/^ *//; s/ *$//')
	kexpr=$(cut -d@ -f3 -s <<<"$line" | sed 's/^ *//; s/ *$//')
	[ -n "$kexpr" ] || kexpr=$expr
	printf '[Selection]\nName=check\nEvents=%s\nFilter=%s\n' "$event" "$expr" >"$TMP/check.conf"
	if ! "$TRACERD" --check-config "$TMP/check.conf" >"$TMP/check.out" 2>&1; then
		if grep -q "no __print_flags or __print_symbolic table" "$TMP/check.out"; then
			note "skip: $event: $expr: kernel-events/symbols.c has no table for this field"
			skipped=$((skipped + 1))
			continue
		fi
		sed 's/^/# /' "$TMP/check.out"
		not_ok "tracerd --check-config accepts $event: $expr"
		continue
	fi
	r=${round_of_event[$event]:-0}
	round_of_event[$event]=$((r + 1))
	[ $((r + 1)) -gt "$rounds" ] && rounds=$((r + 1))
	printf '%s\t%s\t%s\t%s\n' "$r" "$event" "$expr" "$kexpr" >>"$TMP/corpus"
	n=$((n + 1))
done < <(corpus)
events=$(cut -f2 "$TMP/corpus" | sort -u | wc -l)
note "$n expressions over $events events in $rounds rounds; $skipped skipped"
check "at least 60 expressions over at least 12 events" [ "$n" -ge 60 -a "$events" -ge 12 ]

# The universe: every record of the corpus's events, unfiltered, as the
# kernel's ring buffer and as tracerd saw them.
make_instance "tracerd-filter-$$-all" || { not_ok "tracefs instance"; exit 0; }
BASE=$INSTANCE
echo 0 >"$BASE/options/irq-info"
on_exit "echo 0 > $BASE/events/enable"
# Addresses raw, as the kernel prints them: records pair by every number they print.
printf '[Daemon]\nRawPointers=yes\nRingBufferSize=64M\nStatsIntervalSec=0\n[Selection]\nName=all\nEvents=%s\n' \
	"$(cut -f2 "$TMP/corpus" | sort -u | tr '\n' ' ')" >"$TMP/base.conf"
for event in $(cut -f2 "$TMP/corpus" | sort -u); do
	echo 1 >"$BASE/events/${event%%:*}/${event#*:}/enable"
done
start_tracerd "$TMP/base.conf" "$TMP/base.out" || { not_ok "tracerd attaches unfiltered"; exit 0; }
BASE_PID=$TRACERD_PID

# Set every round up: an instance with the kernel's filters, a tracerd.
for ((r = 0; r < rounds; r++)); do
	make_instance "tracerd-filter-$$-$r" || { not_ok "tracefs instance"; exit 0; }
	echo 8192 >"$INSTANCE/buffer_size_kb"
	echo 0 >"$INSTANCE/options/irq-info"
	on_exit "echo 0 > $INSTANCE/events/enable"
	printf '[Daemon]\nRawPointers=yes\nRingBufferSize=32M\nStatsIntervalSec=0\n' >"$TMP/round-$r.conf"
	while IFS=$'\t' read -r rr event expr kexpr; do
		[ "$rr" = "$r" ] || continue
		dir=$INSTANCE/events/${event%%:*}/${event#*:}
		if ! echo "$kexpr" >"$dir/filter"; then
			not_ok "the kernel accepts $event: $kexpr"
			continue
		fi
		echo 1 >"$dir/enable"
		printf '[Selection]\nName=s%s\nEvents=%s\nFilter=%s\n' "$(printf '%s' "$event" | tr -c 'a-z0-9' _)" \
			"$event" "$expr" >>"$TMP/round-$r.conf"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$event" "$expr" "$kexpr" "$INSTANCE/trace" \
			"$TMP/round-$r.out" "$TMP/round-$r.out.err" >>"$TMP/spec"
		# The same filter in the interpreter (TRACERD_TEST_INTERPRET), on the
		# same records: the emitted programs' reference.
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$event" "$expr [interpreted]" "$kexpr" \
			"$INSTANCE/trace" "$TMP/round-$r-i.out" "$TMP/round-$r-i.out.err" >>"$TMP/spec"
	done <"$TMP/corpus"
	start_tracerd "$TMP/round-$r.conf" "$TMP/round-$r.out" || { not_ok "tracerd round $r attaches"; exit 0; }
	eval "TRACERD_PID_$r=$TRACERD_PID"
	TRACERD_TEST_INTERPRET='*' start_tracerd "$TMP/round-$r.conf" "$TMP/round-$r-i.out" ||
		{ not_ok "tracerd round $r (interpreted) attaches"; exit 0; }
	eval "TRACERD_PID_I_$r=$TRACERD_PID"
done
compiled=$(cat "$TMP"/round-[0-9].out.err "$TMP"/round-[0-9][0-9].out.err 2>/dev/null | grep -c "Filter= compiled to BPF")
interp=$(cat "$TMP"/round-*-i.out.err | grep -c "Filter= runs in the interpreter: TRACERD_TEST_INTERPRET")
note "$compiled of $n filters emitted as BPF; $interp run by the interpreter on the same records"
check "three quarters of the filters or more are emitted as BPF ($compiled of $n; the rest: globs the emitter leaves)" [ $((compiled * 4)) -ge $((n * 3)) ]
check "TRACERD_TEST_INTERPRET keeps every filter in the interpreter ($interp of $n)" [ "$interp" = "$n" ]
# Every filter with an end or middle glob ("*abc", "*abc*") and no other
# kind is among the emitted ones: char arrays, comm, __data_loc strings.
globs=0 missed=
while IFS=$'\t' read -r r event expr kexpr; do
	grep -qF '~ "*' <<<"$expr" || continue
	grep -oE '~ "[^"]*"' <<<"$expr" | grep -qvE '^~ "\*?[^*?[\\]*\*?"$' && continue
	globs=$((globs + 1))
	grep -q "selection s$(printf '%s' "$event" | tr -c 'a-z0-9' _): Filter= compiled to BPF" \
		"$TMP/round-$r.out.err" || missed="$missed; $event: $expr"
done <"$TMP/corpus"
check "the $globs filters with end and middle globs are emitted as BPF${missed:+ (not:${missed#;})}" \
	[ "$globs" -ge 15 -a -z "$missed" ]

# tracerd does not trace its own threads: leave their records out.
for p in $BASE_PID $(for ((r = 0; r < rounds; r++)); do v=TRACERD_PID_$r w=TRACERD_PID_I_$r; echo "${!v} ${!w}"; done); do
	ls "/proc/$p/task"
done >"$TMP/tracerd-tids"
sleep 0.2
t0=$(mono_ns)
workload
t1=$(mono_ns)
sleep 0.3
for ((r = 0; r < rounds; r++)); do echo 0 >"$TRACEFS/instances/tracerd-filter-$$-$r/events/enable"; done
echo 0 >"$BASE/events/enable"
for ((r = 0; r < rounds; r++)); do
	pid_var=TRACERD_PID_$r
	TRACERD_PID=${!pid_var}
	stop_tracerd
	pid_var=TRACERD_PID_I_$r
	TRACERD_PID=${!pid_var}
	stop_tracerd
done
TRACERD_PID=$BASE_PID
stop_tracerd
check "tracerd lost no unfiltered record" grep -q "all: .* 0 lost" "$TMP/base.out.err"

lost=0
for ((r = 0; r < rounds; r++)); do
	for s in "$TRACEFS/instances/tracerd-filter-$$-"{$r,all}/per_cpu/cpu*/stats; do
		lost=$((lost + $(awk '/^(overrun|dropped events):/ {s += $NF} END {print s + 0}' "$s")))
	done
done
check "no records lost by the kernel instances (lost $lost)" [ "$lost" = 0 ]
python3 "$(dirname "$0")/filter_pair.py" "$TMP/spec" "$t0" "$t1" "$BASE/trace" "$TMP/base.out" \
	"$TMP/tracerd-tids"
