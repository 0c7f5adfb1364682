#!/usr/bin/env bash
# Output=store with no journal to write to: the daemon's own entries (the
# periodic statistics, the per-selection summary, the reload results) would
# go to the journal, and sd_journal_sendv() drops them without an error when
# its socket is missing. They must go to stderr instead, and STATUS= must
# say so. tracerd runs in a mount namespace with an empty tmpfs over
# /run/systemd/journal (where the host has one), so no journal socket is
# there; the workload fires syscalls:sys_enter_sysfs an exact number of
# times under a comm of its own. With Output=journal, the records it cannot
# take count as sink errors, not as delivered.
. "$(dirname "$0")/../lib.sh"
need_root no_journal
EVENT=syscalls:sys_enter_sysfs
COMM=nojr$$
fire_as "$COMM"
N=700

# tracerd with the journal's socket hidden (the namespace goes with it).
REAL=$TRACERD
TRACERD=$TMP/tracerd-nojournal
cat >"$TRACERD" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c '
	if [ -d /run/systemd/journal ]; then mount -t tmpfs tmpfs /run/systemd/journal || exit 1; fi
	[ -S /run/systemd/journal/socket ] && { echo "the journal socket is still there" >&2; exit 1; }
	exec "\$0" "\$@"' "$REAL" "\$@"
EOF
chmod +x "$TRACERD"

conf() { # FILTER-TAIL
	printf '[Daemon]\nOutput=store\nFlushIntervalMSec=10\nStatsIntervalSec=1\n[Store]\nDirectory=%s\n[Selection]\nName=nj\nEvents=%s\nFilter=comm == "%s"%s\n' \
		"$TMP/events" "$EVENT" "$COMM" "$1" >"$TMP/c.conf"
}
ready_after() { # K: waits for the K-th READY=1 after the start's
	local i
	for ((i = 0; i < 400; i++)); do
		[ "$(notify_count "$TMP/notes" READY=1)" -gt "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

notify_listen "$TMP/notify" 60 "$TMP/notes"
conf ""
if ! NOTIFY_SOCKET=$TMP/notify start_tracerd_store "$TMP/c.conf" "$TMP/out"; then
	not_ok "tracerd starts without a journal"
	exit 0
fi
E=$TMP/out.err
"$FIRE" $N >/dev/null
# A periodic statistics entry (StatsIntervalSec=1) after the workload.
for ((i = 0; i < 60; i++)); do grep -q "stats: selection nj: $N delivered" "$E" && break; sleep 0.1; done
conf " && option == 3"
kill -HUP "$TRACERD_PID"
ready_after 1 || not_ok "the reload ends"
printf '[Selection]\nName=bad\nEvents=%s\nFilter=nosuchfield == 1\n' "$EVENT" >>"$TMP/c.conf"
kill -HUP "$TRACERD_PID"
ready_after 2 || not_ok "the failed reload ends"
"$FIRE" $N >/dev/null
# A STATUS= after the start (every 2 s).
sleep 2.2
stop_tracerd
rc=$?
got=$("$REAL" --read "$TMP/events" 2>/dev/null | grep -c ": sys_sysfs(option: ")
note "stderr: $(grep -v '^tracerd:   ' "$E" | tr '\n' ';')"
note "$(notify_statuses "$TMP/notes" | tail -1)"
check "tracerd exits 0 ($rc)" [ "$rc" = 0 ]
check "stderr says the journal cannot be written" grep -q "cannot write to the journal" "$E"
check "stderr has the periodic statistics" grep -q "stats: selection nj: $N delivered" "$E"
check "stderr has the reload's result" grep -q "reloaded $TMP/c.conf" "$E"
check "stderr has the failed reload's result, with its place" \
	grep -q "reload failed, keeping the running configuration: $TMP/c.conf:[0-9]*:[0-9]*" "$E"
check "stderr has the selection's summary: $((2 * N)) delivered ($got in the store)" \
	grep -q "summary: selection nj: $((2 * N)) delivered, 0 lost" "$E"
check "the store has every record ($got)" [ "$got" = $((2 * N)) ]
status_says() { notify_statuses "$TMP/notes" | grep -q "journal unavailable: logging to stderr"; }
check "STATUS= says the journal is unavailable" status_says

# Output=journal: records the journal cannot take are not delivered. They
# count as sink errors (ENOENT: no socket), and the summary says so.
printf '[Daemon]\nOutput=journal\nFlushIntervalMSec=10\nStatsIntervalSec=0\n[Selection]\nName=nj\nEvents=%s\nFilter=comm == "%s"\n' \
	"$EVENT" "$COMM" >"$TMP/j.conf"
if start_tracerd_store "$TMP/j.conf" "$TMP/j"; then
	"$FIRE" $N >/dev/null
	sleep 0.3
	stop_tracerd
	note "$(grep 'summary: selection' "$TMP/j.err")"
	# ENOENT for all but, on a loaded machine, what the queue's writer had
	# not reached at exit (ECANCELED).
	check "Output=journal: the summary counts $N sink errors (ENOENT), 0 delivered" \
		grep -q "summary: selection nj: 0 delivered, 0 lost, 0 suppressed, $N sink errors (ENOENT " "$TMP/j.err"
else
	not_ok "Output=journal: tracerd starts without a journal"
fi

# The journal comes back (a stand-in for journald's socket, as in
# aggregate.sh): the entries go to it again, and stderr says so.
printf '[Daemon]\nOutput=store\nFlushIntervalMSec=10\nStatsIntervalSec=1\n[Store]\nDirectory=%s\n[Selection]\nName=nj\nEvents=%s\nFilter=comm == "%s"\n' \
	"$TMP/events2" "$EVENT" "$COMM" >"$TMP/b.conf"
B=$TMP/b
unshare -m --propagation private bash -c "
	mkdir -p /run/systemd && mount -t tmpfs none /run/systemd || exit 1
	$REAL --config $TMP/b.conf >$B.out 2>$B.err & P=\$!
	for ((i = 0; i < 600; i++)); do grep -q attached $B.err && break; sleep 0.05; done
	$FIRE $N >/dev/null
	for ((i = 0; i < 60; i++)); do grep -q 'stats: selection nj: $N delivered' $B.err && break; sleep 0.1; done
	mkdir /run/systemd/journal
	python3 $(dirname "$0")/agg_journal.py /run/systemd/journal/socket $B.txt & J=\$!
	for ((i = 0; i < 50; i++)); do [ -S /run/systemd/journal/socket ] && break; sleep 0.02; done
	$FIRE $N >/dev/null
	sleep 1.5
	kill -INT \$P; wait \$P
	sleep 0.2; kill \$J
"
touch "$B.txt"
note "stderr: $(grep -v '^tracerd:   ' "$B.err" | tr '\n' ';')"
check "journal back: stderr had the statistics before it" grep -q "stats: selection nj: $N delivered" "$B.err"
check "journal back: stderr says it can be written again" grep -q "the journal can be written again" "$B.err"
final() {
	python3 - "$B.txt" "$1" <<'EOF2'
import ast, sys
ents = [ast.literal_eval(l) for l in open(sys.argv[1])]
fin = [e for e in ents if e.get("TRACE_STATS") == "1" and e.get("TRACE_STATS_FINAL") == "1"]
sys.exit(not (len(fin) == 1 and fin[0]["TRACE_STATS_DELIVERED"] == sys.argv[2]))
EOF2
}
check "journal back: the summary is in the journal ($((2 * N)) delivered)" final $((2 * N))
check "journal back: and not on stderr" bash -c "! grep -q 'summary: selection' '$B.err'"
