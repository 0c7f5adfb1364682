#!/usr/bin/env bash
# Counts across reloads: a reload that changes a selection's Filter=
# replaces its attachments, and one that drops a selection detaches it; what
# they counted until then stays in the selection's summary (same Name=), in
# the summary of the removed one, and in STATUS='s totals. A workload fires
# syscalls:sys_enter_sysfs an exact number of times under a comm of its own
# between the reloads; every selection keeps only the workload's records.
#   kept: never changes;       delivered N1+N2+N3
#   chg:  Filter= changed twice, the second time to one that drops all:
#         delivered N1+N2, and at least N3 filtered
#   gone: removed by the first reload: delivered N1
# Each delivered count must equal the records actually received: lines on
# stdout (--foreground), or records read back from the store (--read).
. "$(dirname "$0")/../lib.sh"
need_root reload_counts
EVENT=syscalls:sys_enter_sysfs
COMM=rlc$$
fire_as "$COMM"
N1=3000 N2=2000 N3=1000

# conf OUTPUT STAGE: the config of stage 0 (start), 1 or 2 (after reloads).
conf() {
	local f=$TMP/c.conf chg='comm == "'$COMM'"'
	[ "$2" = 1 ] && chg="$chg && option == 3"
	[ "$2" = 2 ] && chg="$chg && option == 4"
	printf '[Daemon]\nOutput=%s\nFlushIntervalMSec=10\nStatsIntervalSec=0\n[Store]\nDirectory=%s\n' \
		"$1" "$TMP/events" >"$f"
	printf '[Selection]\nName=kept\nEvents=%s\nFilter=comm == "%s"\n' "$EVENT" "$COMM" >>"$f"
	printf '[Selection]\nName=chg\nEvents=%s\nFilter=%s\n' "$EVENT" "$chg" >>"$f"
	[ "$2" = 0 ] && printf '[Selection]\nName=gone\nEvents=%s\nFilter=comm == "%s"\n' "$EVENT" "$COMM" >>"$f"
	return 0
}

# reload NOTES K: SIGHUP, then waits for the K-th reload's READY=1 (the
# first is the start's): the outcome may go to the journal, not stderr.
reload() {
	local i
	kill -HUP "$TRACERD_PID"
	for ((i = 0; i < 400; i++)); do
		[ "$(notify_count "$1" READY=1)" -gt "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# The per-event line of selection $2 in the stop summary $1: field $3.
ev() { grep -E "^tracerd: +$2 +$EVENT " "$1" | sed -n "s/.* $3=\([0-9]*\).*/\1/p"; }

# run OUTPUT START-FUNCTION: the three phases; the config at $TMP/c.conf.
run() {
	conf "$1" 0
	NOTIFY_SOCKET=$TMP/notify.$1 "$2" "$TMP/c.conf" "$TMP/$1" || return 1
	"$FIRE" $N1 >/dev/null
	conf "$1" 1
	reload "$TMP/notes.$1" 1 || return 1
	"$FIRE" $N2 >/dev/null
	conf "$1" 2
	reload "$TMP/notes.$1" 2 || return 1
	"$FIRE" $N3 >/dev/null
	# STATUS= comes every 2 s; on a loaded machine the outputs may take a
	# while to count the last records: wait for the figure (or give up).
	for ((i = 0; i < 150; i++)); do
		[ "$(last_delivered "$TMP/notes.$1")" = $((3 * N1 + 2 * N2 + N3)) ] && break
		sleep 0.1
	done
	stop_tracerd
}
# The delivered figure of the last STATUS= in notify_listen's file $1.
last_delivered() { notify_statuses "$1" | grep -Eo '[0-9]+ delivered' | tail -1 | grep -Eo '^[0-9]+'; }

# --- Output=stdout, --foreground: the records are the lines on stdout.
notify_listen "$TMP/notify.stdout" 60 "$TMP/notes.stdout"
if run stdout start_tracerd; then
	E=$TMP/stdout.err
	lines=$(grep -c -- "-[0-9]* *\[[0-9]*\] .*: sys_sysfs(option: " "$TMP/stdout")
	want=$((3 * N1 + 2 * N2 + N3))
	note "$(grep -E 'summary: selection' "$E" | tr '\n' ';')"
	note "$(grep -E "^tracerd: +[a-z]+ +$EVENT " "$E" | tr '\n' ';')"
	check "stdout: every record is a line ($lines == $want)" [ "$lines" = $want ]
	check "stdout: kept's summary: $((N1 + N2 + N3)) delivered" \
		grep -q "summary: selection kept: $((N1 + N2 + N3)) delivered, 0 lost" "$E"
	check "stdout: chg's summary counts its replaced filters: $((N1 + N2)) delivered" \
		grep -q "summary: selection chg: $((N1 + N2)) delivered, 0 lost" "$E"
	f=$(grep "summary: selection chg:" "$E" | sed -n 's/.* \([0-9]*\) filtered out.*/\1/p')
	check "stdout: chg's summary: at least $N3 filtered out (${f:-none})" [ "${f:-0}" -ge $N3 ]
	check "stdout: the removed selection's summary: $N1 delivered" \
		grep -q "summary: selection gone (removed by a reload): $N1 delivered, 0 lost" "$E"
	check "stdout: chg's $EVENT line: delivered=$((N1 + N2))" [ "$(ev "$E" chg delivered)" = $((N1 + N2)) ]
	check "stdout: gone's $EVENT line: delivered=$N1" [ "$(ev "$E" gone delivered)" = $N1 ]
	s=$(last_delivered "$TMP/notes.stdout")
	check "stdout: the last STATUS= counts every selection there was (${s:-none} == $want)" [ "${s:-x}" = $want ]
else
	not_ok "stdout: tracerd ran and reloaded"
fi

# --- Output=store: the records are those read back from the store.
notify_listen "$TMP/notify.store" 60 "$TMP/notes.store"
if run store start_tracerd_store; then
	E=$TMP/store.err
	"$TRACERD" --read --json "$TMP/events" >"$TMP/read.json" 2>"$TMP/read.err"
	got() { grep -c "\"TRACE_SELECTION\":\"$1\"" "$TMP/read.json"; }
	note "$(grep -E "^tracerd: +[a-z]+ +$EVENT " "$E" | tr '\n' ';')"
	for s in kept chg gone; do
		check "store: $s's $EVENT line: delivered=$(ev "$E" $s delivered) == $(got $s) records in the store" \
			[ "$(ev "$E" $s delivered)" = "$(got $s)" ]
	done
	check "store: chg's records: $((N1 + N2))" [ "$(got chg)" = $((N1 + N2)) ]
	check "store: gone's records: $N1" [ "$(got gone)" = $N1 ]
	f=$(ev "$E" chg filtered)
	check "store: chg's $EVENT line: at least $N3 filtered (${f:-none})" [ "${f:-0}" -ge $N3 ]
	want=$((3 * N1 + 2 * N2 + N3))
	s=$(last_delivered "$TMP/notes.store")
	check "store: the last STATUS= counts every selection there was (${s:-none} == $want)" [ "${s:-x}" = $want ]
else
	not_ok "store: tracerd ran and reloaded"
fi
