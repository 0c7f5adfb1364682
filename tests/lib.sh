# Shared by the integration tests: TAP-style results and cleanup.
# Every test prints "ok - name" or "not ok - name"; tests/run.sh counts them.
set -u
TRACERD=${TRACERD:-$PWD/${BUILD:-build}/tracerd}
TRACEFS=/sys/kernel/tracing
# The workload that fires syscalls:sys_enter_sysfs N times (tests/tools/fire_syscall.c).
FIRE=${FIRE:-$PWD/${BUILD:-build}/tests/tools/fire_syscall}
TMP=$(mktemp -d /tmp/tracerd-test.XXXXXX)
CLEANUP=()

# (The index has a name of its own: an on_exit text that loops over an i
# would set cleanup's, and run its entries again, for ever.)
cleanup() {
	local cleanup_i
	for ((cleanup_i = ${#CLEANUP[@]} - 1; cleanup_i >= 0; cleanup_i--)); do
		eval "${CLEANUP[$cleanup_i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
on_exit() { CLEANUP+=("$*"); }

# fire_as COMM: $FIRE becomes a copy of it named COMM (its comm, cut to 15
# characters), so that a filter on comm or a grep on the output finds this
# test's records alone.
fire_as() { cp "$FIRE" "$TMP/${1:0:15}" && FIRE=$TMP/${1:0:15}; }

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# journal_standin NAME: this test in a mount namespace of its own (the
# script runs again there), with journald's socket a stand-in that writes
# each entry it gets to $TMP/j.txt (tests/integration/agg_journal.py).
journal_standin() {
	if [ -z "${JOURNAL_NS:-}" ]; then
		rm -rf "$TMP"	# exec runs no trap: the run in the namespace makes its own
		JOURNAL_NS=1 exec unshare -m bash "$0"
	fi
	mount -t tmpfs none /run/systemd && mkdir /run/systemd/journal ||
		{ not_ok "$1: a journal stand-in"; exit 0; }
	python3 "$PWD/tests/integration/agg_journal.py" /run/systemd/journal/socket "$TMP/j.txt" &
	on_exit "kill $!"
	local i
	for ((i = 0; i < 50; i++)); do [ -S /run/systemd/journal/socket ] && return 0; sleep 0.02; done
}

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
check() { # check NAME CMD...: ok if CMD succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
note() { echo "# $*"; }

need_root() {
	if [ "$(id -u)" != 0 ]; then not_ok "$1: needs root"; exit 0; fi
}
# need_tools NAME TOOL...: each TOOL is a command here, else the test NAME
# fails at once, saying which (deps.sh installs them).
need_tools() {
	local name=$1 tool; shift
	for tool in "$@"; do
		command -v "$tool" >/dev/null || { not_ok "$name: $tool is not installed (make deps)"; exit 0; }
	done
}

# Listens as systemd would on the notify socket $1 for $2 seconds, one line
# per message in $3 (tests/tools/notify_listen.py); returns once it is bound.
notify_listen() {
	python3 "$(dirname "${BASH_SOURCE[0]}")/tools/notify_listen.py" "$1" "$2" >"$3" &
	on_exit "kill $!"
	local i
	for ((i = 0; i < 50; i++)); do [ -S "$1" ] && return 0; sleep 0.05; done
	return 1
}
# The STATUS= lines of notify_listen's file $1, oldest first.
notify_statuses() { grep -oP '\tSTATUS=\K[^\t]*' "$1" | sed 's/^/STATUS=/'; }
# How many messages in notify_listen's file $1 carry $2 (e.g. READY=1).
notify_count() { grep -cP "\t\Q$2\E(\t|\$)" "$1"; }

# run_tracerd OUT ARGS...: tracerd ARGS in the background, stdout to OUT,
# stderr to OUT.err; waits until it has attached. Sets TRACERD_PID.
run_tracerd() {
	local out=$1 i; shift
	"$TRACERD" "$@" >"$out" 2>"$out.err" &
	TRACERD_PID=$!
	on_exit "kill -INT $TRACERD_PID; wait $TRACERD_PID"
	# Up to 60 s: attaching thousands of events on a loaded machine takes
	# long (speed is the benchmark's to measure, not a test's).
	for ((i = 0; i < 1200; i++)); do
		grep -q "attached" "$out.err" 2>/dev/null && return 0
		kill -0 "$TRACERD_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$out.err" >&2
	# Not attached: gone, also when called in $(...), whose on_exit
	# would never run.
	kill -KILL "$TRACERD_PID" 2>/dev/null
	wait "$TRACERD_PID" 2>/dev/null
	return 1
}

# Starts tracerd in the foreground on config $1, output to $2 (run_tracerd).
start_tracerd() { run_tracerd "$2" --config "$1" --foreground; }

# The same for a config whose Output= is not stdout (the store): no --foreground.
start_tracerd_store() { run_tracerd "$2" --config "$1"; }

# Stops tracerd with SIGINT and waits; returns its exit status.
stop_tracerd() {
	kill -INT "$TRACERD_PID" 2>/dev/null
	wait "$TRACERD_PID"
}

# Distinct BPF programs (or links: bpf_ids_of PID link_id) that process $1
# holds open, from its fds' fdinfo (Debian's bpftool cannot show pids).
bpf_ids_of() {
	local key=${2:-prog_id}
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk -v k="$key:" '$1 == k {print $2}' | sort -u | wc -l
}
bpf_progs_of() { bpf_ids_of "$1" prog_id; }

# A tracefs instance with its own ring buffer; removed at exit.
make_instance() {
	local name=$1
	mkdir "$TRACEFS/instances/$name" || return 1
	on_exit "rmdir $TRACEFS/instances/$name"
	echo mono >"$TRACEFS/instances/$name/trace_clock"
	echo 0 >"$TRACEFS/instances/$name/options/hash-ptr" 2>/dev/null
	echo 16384 >"$TRACEFS/instances/$name/buffer_size_kb"
	INSTANCE=$TRACEFS/instances/$name
}

# The inter-event trigger tests (latency*.sh). lat_python: LATWPY, a copy
# of the interpreter (the binary, not a pyenv shim) named LATW, latw, this
# shell's pid and a p: its comm, this test's workload's alone, also beside
# another test's (or make bench's latw-ping): a filter 'comm ~ "$LATW*"'
# finds it, and no other (F_WAKING, F_SWITCH). lat_pingpong SECS: the ping-pong of
# tests/tools/pingpong.py under it; prints its rounds.
lat_python() {
	LATW=latw$$p
	LATWPY=$TMP/$LATW
	# the filters that find the workload's wakings and switches to it
	F_WAKING="comm ~ \"$LATW*\""
	F_SWITCH="next_comm ~ \"$LATW*\""
	cp "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$LATWPY"
}
lat_pingpong() { "$LATWPY" "$(dirname "${BASH_SOURCE[0]}")/tools/pingpong.py" "$1"; }
# lat_instance NAME WAKING_FILTER SWITCH_FILTER: an instance (make_instance)
# recording sched_waking and sched_switch under those filters, in a buffer
# with room for about 40k records a second (the ping-pong's) for seconds.
lat_instance() {
	make_instance "$1" || return 1
	echo 65536 >"$INSTANCE/buffer_size_kb"
	echo "$2" >"$INSTANCE/events/sched/sched_waking/filter"
	echo "$3" >"$INSTANCE/events/sched/sched_switch/filter"
	echo 1 >"$INSTANCE/events/sched/sched_waking/enable"
	echo 1 >"$INSTANCE/events/sched/sched_switch/enable"
	on_exit "echo 0 >$INSTANCE/events/enable"
}
# bpf_misses PID: the kernel's recursion_misses of the BPF programs process
# PID holds (a tracepoint program does not run while another BPF program
# runs on the CPU; ftrace records the event all the same).
bpf_misses() {
	local id n misses=0
	for id in $(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -u); do
		n=$(bpftool -j prog show id "$id" 2>/dev/null |
			python3 -c 'import json, sys; print(json.load(sys.stdin).get("recursion_misses", 0))' 2>/dev/null)
		misses=$((misses + ${n:-0}))
	done
	echo "$misses"
}
# instance_overrun: records the instance lost (0: it kept every one).
instance_overrun() { awk '/^overrun:/ {n += $2} END {print n + 0}' "$INSTANCE"/per_cpu/cpu*/stats; }
# lat_collect NAME: the end of a run against the instance: tracerd's
# threads (TIDS, which the oracle leaves out) and the events the kernel did
# not run its programs for (MISSES: their recursion_misses, or the
# summary's count over the whole run up to the detach, the larger), tracerd
# stopped, the instance's records in $TMP/trace, and the checks that both
# ended cleanly and the instance lost nothing.
lat_collect() {
	local skipped overrun
	TIDS=$(ls /proc/"$TRACERD_PID"/task | tr '\n' ' ')
	MISSES=$(bpf_misses "$TRACERD_PID")
	stop_tracerd
	check "$1: tracerd exits 0 at stop" [ $? = 0 ]
	echo 0 >"$INSTANCE/tracing_on"
	cat "$INSTANCE/trace" >"$TMP/trace"
	overrun=$(instance_overrun)
	check "$1: the instance kept every record (overrun $overrun)" [ "$overrun" = 0 ]
	skipped=$(grep -Eo "summary: [0-9]+ skipped by the kernel" "$TMP/out.err" | grep -Eo "[0-9]+" | tail -1)
	[ "${skipped:-0}" -gt "$MISSES" ] && MISSES=$skipped
	grep -E "summary: selection " "$TMP/out.err" | cut -d';' -f1 | sed 's/^/# /'
}

# Loop-mounts a fresh filesystem image ($1: xfs or ext4, $2: size, $3...: mkfs options)
# at $TMP/mnt; unmounted and detached at exit.
mount_image() {
	local fs=$1 size=$2; shift 2
	truncate -s "$size" "$TMP/$fs.img"
	LOOPDEV=$(losetup -f --show "$TMP/$fs.img") || return 1
	on_exit "losetup -d $LOOPDEV"
	"mkfs.$fs" -q "$@" "$LOOPDEV" >/dev/null 2>&1 || mkfs."$fs" -q -F "$@" "$LOOPDEV" >/dev/null || return 1
	mkdir -p "$TMP/mnt"
	mount "$LOOPDEV" "$TMP/mnt" || return 1
	on_exit "umount -l $TMP/mnt"
}

# Pointer hashes (issue 19.1). kfree lines' ptr= hashes of file $1, one a line.
kfree_ptrs() { grep -oE 'kfree: call_site=[^ ]+ ptr=[0-9a-f]{16}' "$1" | sed 's/.*ptr=//'; }
# tests/tools/ptr_brute's result in $1 for $3 keys, judged as "unbroken" (no
# pointer reversed, and each group's hashes got candidates no more often than
# chance: under 20%, where chance is 1 in 32 and the right key gives one to
# every hash in range) or "broken" (every pointer in range reversed, at least
# 20, and half of each group's hashes with a candidate). Groups of at least
# 20 hashes, so that a share means something.
brute_verdict() {
	awk -v mode="$2" -v want="$3" '
		/ hashes have a candidate$/ { h = $(NF - 6); n = $(NF - 4); groups++
			if (n < 20 || (mode == "unbroken" ? 5 * h >= n : 2 * h < n)) bad++ }
		/ pointers in range reversed$/ { r = $(NF - 6); p = $(NF - 4); keys++
			if (mode == "unbroken" ? r != 0 || p == 0 : r != p || p < 20) bad++ }
		END { exit !(keys == want && groups > 0 && !bad) }' "$1"
}

# bad_selection NAME LINE WANT: a [Selection] of kmem:kmalloc with LINE (a
# key=value) must be refused by --check-config, its first message being the
# file's path then WANT (":line:col: ...").
bad_selection() {
	local rc got
	printf '[Selection]\nName=b\nEvents=kmem:kmalloc\n%s\n' "$2" >"$TMP/bad.conf"
	"$TRACERD" --check-config "$TMP/bad.conf" >/dev/null 2>"$TMP/bad.err"
	rc=$?
	got=$(grep -v '^libbpf: ' "$TMP/bad.err" | head -1)
	if [ "$rc" != 0 ] && [ "$got" = "$TMP/bad.conf$3" ]; then ok "bad input: $1"; else
		not_ok "bad input: $1"; note "want: $TMP/bad.conf$3"; note "got ($rc): $got"; fi
}
