#!/usr/bin/env bash
# Runs every test: unit programs first, then the integration scripts (root:
# real BPF, tracefs, journald, systemd). Each test's output comes in one
# block with its seconds; the slowest ten, then "N passed, N failed", end it.
#   TESTS="a b$"     the tests whose names contain a (or end in b)
#   KERNEL_TESTS=no  leave out the tests bound to the kernel or the
#                    environment (ONCE below): the sanitizer runs, which
#                    are there for tracerd's own code (make test SANITIZE=1)
#   JOBS=1           no test beside another (see WAITS)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
# Leaks inside libraries we cannot fix (see the file) do not fail a sanitizer run.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
ONLY=${TESTS:-}
KERNEL_TESTS=${KERNEL_TESTS:-yes}
export KERNEL_TESTS
JOBS=${JOBS:-2}
# ThreadSanitizer (make test SANITIZE=thread) writes its reports into the
# test's directory here, from every process of a test, also those whose
# stderr the test keeps to itself.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The tests of the kernel or of the environment, not of tracerd's code paths:
# every event at once (breadth), what the kernel drops (kernel_skips), BTF's
# classes against the kernel's map (class_oracle), stopping under systemd
# with a grace period per event (stop), the man pages, bash completion,
# valgrind (always the plain build); and remote.sh's HTTPS part. They run
# in the plain `make test`.
ONCE="breadth stop kernel_skips class_oracle man completion valgrind"
# The tests that mostly wait for the kernel's RCU grace periods (a detach
# costs one, one after another under the kernel's event_mutex) while their
# BPF programs stay on events that only they fire (sysfs(2) under a comm of
# their own, a fork): they run one after another beside those of COMPUTES,
# which compare nothing with ftrace, count nothing the kernel skips, touch no
# state of the machine's (pointer key, journald) and count their own
# sysfs(2) calls by pid or comm. Not breadth: its detach of 2305 events
# holds the kernel's event_mutex for minutes, one grace period at a time,
# and a tracerd starting beside it waited 38 s to read tracefs and 8.5 s to
# attach one event. Every other test runs alone; so does test_ksym, which compares kallsyms
# with the kernel's %pS: a BPF program loaded or unloaded meanwhile (a
# reload) changes both. Not trace_dat either: it records the whole machine,
# and what the others do (a notify socket gone: sock_send_length
# error=-2) shows in what it compares. Nor stdout_closed: the detach that
# ends it waited behind stop's detach of 720 events in the lane beside (the
# kernel's event_mutex) past its 30 s limit. Nor prometheus (a real
# Prometheus server scraping tracerd), metrics and metrics_hist: they check
# exact counts of every call fired, which a BPF program of a test beside
# them would cost (the kernel skips a tracepoint program while another runs
# on the CPU).
WAITS="churn reload_drain reload_counts duplicate_selections"
COMPUTES="layers unit/* !unit/test_ksym man completion class_oracle bad_input latency_bad cmdline exec
	syscall_strings store_lock store_follow no_journal units reload_journal
	loss_stalled_sink recorder"
# The tests in a booted container (tests/nspawn.sh), a third lane beside
# those two: each boots its own, in cgroups of its own, counts its own
# processes' events and reads the container's journal. They mostly wait
# too: for the boot, and stop for the detach of 720 events.
CONTAINERS="systemd systemd_units systemd_units_unified systemd_metrics systemd_metrics_unified ustack_pidns stop systemd_recorder"

# in_list NAME LIST: NAME (without integration/) matches a pattern of LIST
# and none of its !patterns.
in_list() {
	local - s hit=1
	set -f
	for s in $2; do
		if [[ $s == !* ]]; then [[ "${1#integration/}" == ${s#!} ]] && return 1
		elif [[ "${1#integration/}" == $s ]]; then hit=0; fi
	done
	return $hit
}

selected() {
	local s
	if [ -z "$ONLY" ]; then
		[ "$KERNEL_TESTS" = no ] && in_list "$1" "$ONCE" && return 1
		return 0
	fi
	for s in $ONLY; do
		if [[ $s == *\$ ]]; then [[ "$1" == *"${s%\$}" ]] && return 0
		else [[ "$1" == *"$s"* ]] && return 0; fi
	done
	return 1
}

# run_one NAME CMD...: runs the test, its output into its own file, then
# prints it as one block (under a lock: a test beside it prints too) and
# adds "passed failed seconds name" to $dir/results.
run_one() {
	local name=$1; shift
	local d="$dir/${name//\//_}" t0=$SECONDS rc p f r
	mkdir -p "$d"
	if [ -n "${TSAN_OPTIONS_SET:-}" ]; then "$@" >"$d/log" 2>&1
	else TSAN_OPTIONS=log_path=$d/report "$@" >"$d/log" 2>&1; fi
	rc=$?
	for r in "$d"/report.*; do
		[ -e "$r" ] || continue
		echo "not ok - $name: ThreadSanitizer: $(grep -c '^WARNING: ThreadSanitizer' "$r") report(s) from pid ${r##*.}" >>"$d/log"
		grep -E '^(WARNING|SUMMARY): ThreadSanitizer|^ +#[0-2] ' "$r" | sed 's/^/# /' >>"$d/log"
	done
	p=$(grep -c '^ok - ' "$d/log")
	f=$(grep -c '^not ok - ' "$d/log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with $rc" >>"$d/log"
		f=1
	fi
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name ran no test" >>"$d/log"
		f=1
	fi
	{
		flock 9
		echo "## $name"
		sed 's/^/  /' "$d/log"
		echo "# $name: $((SECONDS - t0))s"
		echo "$p $f $((SECONDS - t0)) $name" >>"$dir/results"
	} 9>"$dir/lock"
	rm -rf "$d"
}
[ -n "${TSAN_OPTIONS:-}" ] && TSAN_OPTIONS_SET=1 && export TSAN_OPTIONS

tests=("layers scripts/check-layers.py")
for t in "$BUILD"/tests/unit/*; do [ -x "$t" ] && tests+=("unit/${t##*/} $t"); done
for t in tests/integration/*.sh; do tests+=("integration/$(basename "$t" .sh) bash $t"); done
# run_all LIST: the selected tests that match LIST, one by one, in the
# order of its patterns ("*": all, in name order); no: those that match
# none of WAITS, COMPUTES and CONTAINERS.
run_all() {
	local - list=$1 t p
	set -f
	[ "$list" = no ] && p="*" || p=$list
	for p in $p; do
		[[ $p == !* ]] && continue
		for t in "${tests[@]}"; do
			set -- $t
			selected "$1" || continue
			if [ "$list" = no ]; then
				in_list "$1" "$WAITS" || in_list "$1" "$COMPUTES" || in_list "$1" "$CONTAINERS" && continue
			# this pattern, and none of the list's !patterns
			elif ! in_list "$1" "$p" || ! in_list "$1" "$p $list"; then continue; fi
			run_one "$@"
		done
	done
}
# The tests that wait and those in containers, one after another in two
# background lanes, beside those that compute; then the others, alone. The
# layering first of all (no stage includes or calls a later one, no call
# circle: make check-layers).
: >"$dir/results"
if [ "$JOBS" -gt 1 ]; then
	run_all "$WAITS" &
	run_all "$CONTAINERS" &
	run_all "$COMPUTES"
	wait
	run_all no
else
	run_all "*"
fi

[ "$KERNEL_TESTS" = no ] && [ -z "$ONLY" ] &&
	echo "# not run here: $ONCE (bound to the kernel or the environment: make test runs them)"
echo "# slowest:"
sort -k3,3nr "$dir/results" 2>/dev/null | head -10 | awk '{ printf "#   %4ds %s\n", $3, $4 }'
awk '{ p += $1; f += $2 } END { printf "%d passed, %d failed\n", p, f; exit !(f == 0 && p > 0) }' "$dir/results"
