#!/usr/bin/env bash
# Runs every test: unit programs first, then the integration scripts (root:
# real BPF, tracefs, journald, systemd). Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
# Leaks inside libraries we cannot fix (see the file) do not fail a sanitizer run.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
# Substrings of test names, space-separated: the tests that contain one; a
# substring ending in $ must end the name ("store$": not store_diff).
ONLY=${TESTS:-}
passed=0 failed=0 log=$(mktemp) times=$(mktemp)
# ThreadSanitizer (make test SANITIZE=thread) writes its reports here, from
# every process of a test, also those whose stderr the test keeps to itself.
tsan=$(mktemp -d)
export TSAN_OPTIONS=${TSAN_OPTIONS:-log_path=$tsan/report}

selected() {
	local s
	[ -z "$ONLY" ] && return 0
	for s in $ONLY; do
		if [[ $s == *\$ ]]; then [[ "$1" == *"${s%\$}" ]] && return 0
		else [[ "$1" == *"$s"* ]] && return 0; fi
	done
	return 1
}

run_one() {
	local name=$1; shift
	selected "$name" || return
	echo "## $name"
	local t0=$SECONDS
	"$@" 2>&1 | tee -a "$log" | sed 's/^/  /'
	local rc=${PIPESTATUS[0]}
	local secs=$((SECONDS - t0))
	local p f r
	for r in "$tsan"/report.*; do
		[ -e "$r" ] || continue
		echo "not ok - $name: ThreadSanitizer: $(grep -c '^WARNING: ThreadSanitizer' "$r") report(s) from pid ${r##*.}" |
			tee -a "$log" | sed 's/^/  /'
		grep -E '^(WARNING|SUMMARY): ThreadSanitizer|^ +#[0-2] ' "$r" | sed 's/^/  # /'
		rm -f "$r"
	done
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with $rc" | tee -a "$log" | sed 's/^/  /'
		f=1
	fi
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name ran no test" | tee -a "$log" | sed 's/^/  /'
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	echo "# $name: ${secs}s"
	echo "$secs $name" >>"$times"
	: >"$log"
}

# The layering first: no stage includes or calls a later one, no call circle
# (make check-layers; on the objects in $BUILD).
run_one "layers" scripts/check-layers.py
for t in "$BUILD"/tests/unit/*; do
	[ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
	run_one "integration/$(basename "$t" .sh)" bash "$t"
done
echo "# slowest:"
sort -rn "$times" | head -10 | sed 's/^\([0-9]*\) \(.*\)/#   \1s \2/'
rm -rf "$log" "$tsan" "$times"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
