#!/usr/bin/env bash
# Aggregate= emitted against Aggregate= interpreted, on the same events: each
# histogram twice, as selection NAME (compiled to BPF: the emitted program
# builds the key and counts it) and NAME_i (TRACERD_TEST_INTERPRET: the
# class program's aggregate()), both attached to the same tracepoints at
# once, so both see the same records. The dumps must be equal, key by key,
# with the same Hits. The keys cover what the emitted program builds: a char
# array with a symbolic number (25 bytes: the large map), the stack with a
# .log2 number, comm with common_pid.execname (40 bytes), a __data_loc
# filename short and long (compact in the small map, full in the large),
# .buckets with cgroup, and a key of two numbers with a sum. A workload of
# "aggd*" processes alone passes the filters. And every event but a key's
# first is counted in the emitted program itself (agg_compiled=).
. "$(dirname "$0")/../lib.sh"
need_root agg_emit_diff

for b in true cat sleep; do cp "/bin/$b" "$TMP/aggd$b"; done
mkdir -p "$TMP/a-much-longer-directory-name-for-the-large-map"
cp /bin/true "$TMP/a-much-longer-directory-name-for-the-large-map/aggdlong"
cp /bin/true "$TMP/aggdt"

HISTS=(
	"sw|sched:sched_switch|prev_comm ~ \"aggd*\"|hist:keys=next_comm,prev_state:size=128"
	"km|kmem:kmalloc|comm ~ \"aggd*\"|hist:keys=common_stacktrace,bytes_req.log2:vals=bytes_alloc:size=512"
	"sys|raw_syscalls:sys_enter|comm ~ \"aggd*\"|hist:keys=comm,common_pid.execname:size=512"
	"exe|sched:sched_process_exec|comm ~ \"aggd*\"|hist:keys=filename:size=256"
	"bk|raw_syscalls:sys_enter|comm ~ \"aggd*\"|hist:keys=id.buckets=10,cgroup:size=256"
	"ex|raw_syscalls:sys_exit|comm ~ \"aggd*\"|hist:keys=id,cpu:vals=ret:size=1024"
)
{
	echo "[Daemon]"
	echo "Output=stdout"
	for h in "${HISTS[@]}"; do
		IFS='|' read -r name ev filter agg <<<"$h"
		for s in "$name" "${name}_i"; do
			printf '[Selection]\nName=%s\nEvents=%s\nFilter=%s\nAggregate=%s\nAggregateIntervalSec=0\n' \
				"$s" "$ev" "$filter" "$agg"
		done
	done
} >"$TMP/d.conf"
interp=$(for h in "${HISTS[@]}"; do printf '%s_i,' "${h%%|*}"; done)
TRACERD_TEST_INTERPRET=${interp%,} start_tracerd "$TMP/d.conf" "$TMP/out" || {
	not_ok "agg_emit_diff: tracerd starts"; sed 's/^/# /' "$TMP/out.err"; exit 0; }
for ((i = 0; i < 100; i++)); do "$TMP/aggdtrue"; done
(cd "$TMP" && for ((i = 0; i < 50; i++)); do ./aggdt; "$TMP/a-much-longer-directory-name-for-the-large-map/aggdlong"; done)
for ((i = 0; i < 20; i++)); do "$TMP/aggdcat" /etc/passwd /proc/self/status >/dev/null; "$TMP/aggdsleep" 0.01; done
sleep 0.2
stop_tracerd
check "tracerd exits 0 at stop" [ $? = 0 ]

# The summary's FIELD= of selection $1 (its one event).
summary_count() {
	awk -v s="$1" -v f="$2=" '$1 == "tracerd:" && $2 == s {
		for (i = 3; i <= NF; i++) if (index($i, f) == 1) print substr($i, length(f) + 1) }' "$TMP/out.err"
}
# One selection's dump: its entries sorted, then its totals.
dump_of() {
	awk -v s="# selection: $1," 'index($0, s) == 1 {on = 1; next} /^# selection: / {on = 0}
		on && /^\{ / {print} on && /^ +(Hits|Entries|Dropped):/ {t = t $0} END {print "totals:" t}' \
		"$TMP/out" | sort
}
for h in "${HISTS[@]}"; do
	IFS='|' read -r name ev filter agg <<<"$h"
	check "$name: emitted" grep -q "selection $name: Filter= and Aggregate= compiled to BPF" "$TMP/out.err"
	check "${name}_i: interpreted" grep -q "selection ${name}_i: .*TRACERD_TEST_INTERPRET names it" "$TMP/out.err"
	dump_of "$name" >"$TMP/$name.e"
	dump_of "${name}_i" >"$TMP/$name.i"
	n=$(grep -c '^{ ' "$TMP/$name.e")
	hits=$(grep -o 'Hits: *[0-9]*' "$TMP/$name.e" | awk '{s += $2} END {print s + 0}')
	check "$name ($ev, ${agg%%:size*}): emitted equals interpreted ($n keys, $hits hits)" \
		bash -c "[ $n -gt 0 ] && [ $hits -gt 0 ] && diff -u '$TMP/$name.i' '$TMP/$name.e' >&2"
	# A key the emitted program builds wrong finds no entry and goes to
	# the accept program, which counts it right: the dumps would still be
	# equal. So every event but each key's first (its insert, there) must
	# be counted in the emitted program itself (agg_compiled=; a few more
	# go there when CPUs race to insert a key), and none of the
	# interpreted selection's.
	compiled=$(summary_count "$name" agg_compiled)
	check "$name: the emitted program counted $compiled of $hits events ($n keys inserted)" \
		[ "$compiled" -le $((hits - n)) -a "$compiled" -ge $((hits - n - hits / 50)) ]
	check "${name}_i: the interpreted selection counted none in a compiled program" \
		[ "$(summary_count "${name}_i" agg_compiled)" = 0 ]
done
check "filenames short (compact) and long (large map) in one histogram" \
	bash -c "grep -q 'filename: ./aggdt ' '$TMP/exe.e' && grep -q 'aggdlong ' '$TMP/exe.e'"
# The kernel skips a program that would run inside another BPF program on
# its CPU (an interrupt's event): then the two selections may differ by it.
note "$(grep -h 'skipped by the kernel' "$TMP/out.err" || echo 'none skipped by the kernel')"
