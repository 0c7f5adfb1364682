#!/usr/bin/env bash
# Runs every libFuzzer harness in build-fuzz/tests/fuzz for FUZZ_SECONDS
# each, starting from the seed corpus in tests/fuzz/corpus/<harness>/ (new
# inputs go to build-fuzz/corpus/<harness>/, the seeds stay as they are).
# Fails if any harness crashes; a crashing input is kept as
# build-fuzz/crash-<harness>-* and printed.
set -u
cd "$(dirname "$0")/../.."
# libtraceevent's own parse leak (tests/lsan.supp) is not ours to fix.
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
SECS=${FUZZ_SECONDS:-60}
# FUZZ_CI=1: a reproducible run (fixed seed, a fixed number of inputs that
# takes well under FUZZ_SECONDS here), so that CI repeats what was checked;
# `make fuzz` explores at random for longer.
ci_runs() {
	case $1 in
	format) echo 100000 ;;	# slower: libtraceevent parses many
	*) echo 500000 ;;
	esac
}
B=${BUILD:-build-fuzz}
rc=0
for h in "$B"/tests/fuzz/fuzz_*; do
	[ -x "$h" ] || continue
	name=$(basename "$h" | sed 's/^fuzz_//')
	mkdir -p "$B/corpus/$name" "tests/fuzz/corpus/$name"
	log="$B/fuzz-$name.log"
	extra=()
	[ -n "${FUZZ_CI:-}" ] && extra=(-seed=1 -runs="$(ci_runs "$name")")
	"$h" "${extra[@]}" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$B/crash-$name-" "$B/corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1
	r=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$r" = 0 ]; then
		echo "ok - fuzz $name: ${execs:-?} runs${FUZZ_CI:+ (seed 1)}, at most ${SECS}s, no crash"
	else
		echo "not ok - fuzz $name: exit $r"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20 | sed 's/^/#   /'
		rc=1
	fi
done
exit $rc
