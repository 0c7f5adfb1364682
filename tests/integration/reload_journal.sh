#!/usr/bin/env bash
# A reload that flips RawPointers= while the journal writer thread renders a
# backlog (a slowed writer, kmem:kmalloc from a workload): every entry's
# MESSAGE and fields agree on the pointer (both hashed or both raw), the
# entries after each TRACE_RELOAD=ok show the new policy (also for a
# selection the reload kept), and under ThreadSanitizer (make test
# SANITIZE=thread) tracerd reports no data race. journald's socket is a
# stand-in in a mount namespace of this test's own (agg_journal.py).
. "$(dirname "$0")/../lib.sh"
need_root reload_journal
JOURNAL=$PWD/tests/integration/agg_journal.py
cp /bin/cat "$TMP/rjload"

conf() { # RAWPOINTERS FILTER
	cat <<EOF
[Daemon]
Output=journal
FlushIntervalMSec=10
StatsIntervalSec=0
RawPointers=$1
[Selection]
Name=rj
Events=kmem:kmalloc
Filter=$2
EOF
}
conf no 'comm == "rjload"' >"$TMP/c.conf"

# In the namespace: the stand-in, tracerd, a workload, and two reloads while
# the writer is behind: the first turns raw pointers on and changes the
# filter (the selection is attached anew), the second turns them off alone
# (the selection is kept).
unshare -m bash -c '
	set -u
	TMP=$1 TRACERD=$2 JOURNAL=$3
	mkdir -p /run/systemd && mount -t tmpfs none /run/systemd && mkdir /run/systemd/journal || exit 1
	python3 "$JOURNAL" /run/systemd/journal/socket "$TMP/j.txt" & J=$!
	for ((i = 0; i < 50; i++)); do [ -S /run/systemd/journal/socket ] && break; sleep 0.02; done
	TRACERD_TEST_SINK_DELAY_US=2000 TRACERD_QUEUE_ENTRIES=1000 TSAN_OPTIONS="${TSAN_OPTIONS:-} log_path=stderr exitcode=66" \
		"$TRACERD" --config "$TMP/c.conf" >"$TMP/t.out" 2>"$TMP/t.err" & P=$!
	for ((i = 0; i < 300; i++)); do grep -q attached "$TMP/t.err" && break; sleep 0.05; done
	echo "# attached after $SECONDS s"
	( while :; do "$TMP/rjload" /proc/self/status /proc/self/maps >/dev/null; done ) & W=$!
	reloaded() { grep -c "'"'TRACE_RELOAD': 'ok'"'" "$TMP/j.txt"; }
	# a backlog: the queue (1000 entries, 2 ms each) full
	sleep 2.5
	cp "$TMP/c1.conf" "$TMP/c.conf"; kill -HUP $P
	for ((i = 0; i < 600; i++)); do [ "$(reloaded)" -ge 1 ] && break; sleep 0.05; done
	sleep 2.5
	cp "$TMP/c2.conf" "$TMP/c.conf"; kill -HUP $P
	for ((i = 0; i < 600; i++)); do [ "$(reloaded)" -ge 2 ] && break; sleep 0.05; done
	echo "# reloaded twice after $SECONDS s"
	sleep 1
	kill $W; wait $W 2>/dev/null
	kill -INT $P; wait $P; echo $? >"$TMP/rc"
	sleep 0.3; kill $J
' _ "$TMP" "$TRACERD" "$JOURNAL" &
# the next configs, written before the namespace needs them
conf yes 'comm == "rjload" || comm == "rjload2"' >"$TMP/c1.conf"
conf no 'comm == "rjload" || comm == "rjload2"' >"$TMP/c2.conf"
wait $!
[ -n "${KEEP_JOURNAL:-}" ] && cp "$TMP/j.txt" "$KEEP_JOURNAL"

rc=$(cat "$TMP/rc" 2>/dev/null)
check "tracerd exits with 0 (got ${rc:-none}; 66: ThreadSanitizer reported)" [ "$rc" = 0 ]
races=$(grep -c "WARNING: ThreadSanitizer" "$TMP/t.err")
check "no data race reported ($races)" [ "$races" = 0 ]
[ "$races" = 0 ] || grep "SUMMARY: ThreadSanitizer" "$TMP/t.err" | sed 's/^/# /'
[ "$races" = 0 ] || grep -A12 "WARNING: ThreadSanitizer" "$TMP/t.err" | grep -v "^ *#[3-9]" | sed 's/^/# /'

python3 - "$TMP/j.txt" <<'EOF'
import ast, re, sys
ents = [ast.literal_eval(l) for l in open(sys.argv[1])]
def tap(ok, name): print(("ok - " if ok else "not ok - ") + name)
phase, seen, bad, forms = 0, [0, 0, 0], [], [[], [], []]
for e in ents:
    if e.get("TRACE_RELOAD") == "ok":
        phase += 1
        continue
    if e.get("TRACE_SELECTION") != "rj" or "TRACE_PTR" not in e:
        continue
    m = re.search(r" ptr=([0-9a-f]+) ", e["MESSAGE"])
    field = int(e["TRACE_PTR"], 16)
    if field == 0:
        continue
    p = min(phase, 2)
    seen[p] += 1
    if not m or int(m.group(1), 16) != field:
        bad.append((e["MESSAGE"], e["TRACE_PTR"]))
    forms[p].append((field >= 0xffff000000000000, e["TRACE_PTR"]))
# After reload k's entry, records follow its RawPointers=; but the records
# the next reload drains (read after its new config took effect) come before
# that reload's entry: a run of the next form may end a phase.
wrong = []
for p, want in ((1, True), (2, False)):
    f = forms[p]
    last = max([i for i, (raw, _) in enumerate(f) if raw == want], default=-1)
    end = len(f) if p == 2 else last + 1
    wrong += [(p, v) for raw, v in f[:end] if raw != want]
tap(phase == 2, f"two reloads reported TRACE_RELOAD=ok (got {phase})")
tap(all(n > 20 for n in seen), f"entries before, between and after the reloads ({seen})")
tap(not bad, f"MESSAGE's ptr= and TRACE_PTR= agree in all {sum(seen)} entries "
    f"({len(bad)} differ{', e.g. ' + repr(bad[0]) if bad else ''})")
tap(not wrong, f"entries after each reload follow its RawPointers= "
    f"({len(wrong)} do not{', e.g. ' + repr(wrong[0]) if wrong else ''})")
EOF
