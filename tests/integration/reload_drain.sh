#!/usr/bin/env bash
# A reload that removes a large selection (Events=syscalls:sys_*_[a-c]*, 94
# events) detaches them one grace period of the kernel's after another:
# seconds (tens of seconds for syscalls:*). The selection that stays fires on
# meanwhile, into a ring buffer that fills in under 0.5 s without a drain:
# the daemon must drain it while it detaches. The workload fires syscalls:sys_enter_sysfs (nothing
# else on the machine calls it) under a comm of its own, in chunks of known
# size, before, during and after the detach; its own count is the oracle:
#   - kept's summary: every call delivered, 0 lost; one stdout line each;
#   - records dated between the SIGHUP and the 'reloaded' line are there,
#     as many as the chunks fired in that window (those wholly inside it);
#   - after the reload tracerd holds the kept selection's link only;
#   - a SIGHUP and a SIGTERM during a second such detach wait for it.
. "$(dirname "$0")/../lib.sh"
need_root reload_drain
EVENT=syscalls:sys_enter_sysfs
COMM=rdr$$
fire_as "$COMM"
CHUNK=150 RATE=1500	# 0.1 s a chunk; a record is 104 bytes: 64 KiB hold 0.42 s
BIG='syscalls:sys_*_[a-c]*'	# 94 events: a detach of ~5 s, ten times what the ring holds

conf() { # conf WITH_BIG
	printf '[Daemon]\nRingBufferSize=64K\nFlushIntervalMSec=10\nStatsIntervalSec=0\n' >"$TMP/c.conf"
	printf '[Selection]\nName=kept\nEvents=%s\nFilter=comm == "%s"\n' "$EVENT" "$COMM" >>"$TMP/c.conf"
	# Filtered out in BPF: it writes nothing, but costs a detach per event.
	[ "$1" = 1 ] && printf '[Selection]\nName=big\nEvents=%s\nFilter=comm == "nomatch%s"\n' "$BIG" $$ \
		>>"$TMP/c.conf"
	return 0
}

conf 1
start_tracerd "$TMP/c.conf" "$TMP/out" || { not_ok "tracerd starts with $BIG"; exit 0; }
links0=$(bpf_ids_of "$TRACERD_PID" link_id)
note "links held at start: $links0"
reloaded() { grep -c "reloaded" "$TMP/out.err"; }

# fire: one chunk; "start end" (CLOCK_MONOTONIC ns, as the records' time) per line in $TMP/chunks.
fire() {
	local a b
	a=$(date +%s%N)
	"$FIRE" $CHUNK $RATE >/dev/null
	b=$(date +%s%N)
	echo "$a $b" >>"$TMP/chunks"
}
n=0
for ((i = 0; i < 5; i++)); do fire; n=$((n + CHUNK)); done
conf 0
hup=$(date +%s%N)
kill -HUP "$TRACERD_PID"
# Fire until the reload is done (at most 120 s), then a little more.
for ((i = 0; i < 1200; i++)); do
	[ "$(reloaded)" -ge 1 ] && break
	fire; n=$((n + CHUNK))
done
done_ns=$(date +%s%N)
inside=$(awk -v h="$hup" -v d="$done_ns" '$1 > h && $2 < d {c++} END {print c + 0}' "$TMP/chunks")
note "reload took $(( (done_ns - hup) / 1000000 )) ms; $inside chunks of $CHUNK fired wholly within it"
check "the reload is reported done" [ "$(reloaded)" -ge 1 ]
for ((i = 0; i < 5; i++)); do fire; n=$((n + CHUNK)); done
links=$(bpf_ids_of "$TRACERD_PID" link_id)
check "after the reload tracerd holds one link, the kept selection's ($links; $links0 before)" [ "$links" = 1 ]

# A SIGHUP and a SIGTERM that come while a reload detaches wait for it: the
# second reload is done after the first, then the stop, which detaches what
# is left; nothing is lost meanwhile, and tracerd exits 0.
BIG='syscalls:sys_exit_[a-c]*'	# 47 events: a shorter wait
conf 1
kill -HUP "$TRACERD_PID"
for ((i = 0; i < 1200; i++)); do [ "$(reloaded)" -ge 2 ] && break; sleep 0.05; done
check "a reload attaches $BIG again" [ "$(reloaded)" -ge 2 ]
conf 0
kill -HUP "$TRACERD_PID"
for ((i = 0; i < 3; i++)); do fire; n=$((n + CHUNK)); done
printf '[Selection]\nName=late\nEvents=syscalls:sys_exit_sysfs\nFilter=comm == "%s"\n' "$COMM" >>"$TMP/c.conf"
kill -HUP "$TRACERD_PID"
for ((i = 0; i < 3; i++)); do fire; n=$((n + CHUNK)); done
during=$(reloaded)
kill -TERM "$TRACERD_PID"
wait "$TRACERD_PID"
rc=$?
E=$TMP/out.err
check "SIGTERM during the detach: tracerd exits 0 ($rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || grep -v "^ *$COMM-" "$E" | tail -30 | sed 's/^/# /'
check "the detaching reload was not done when the SIGHUP and SIGTERM came ($during reloads)" [ "$during" = 2 ]
check "the queued SIGHUP is answered before the stop: 4 reloads, none failed" \
	[ "$(reloaded)" = 4 -a "$(grep -c 'reload failed' "$E")" = 0 ]
last_reload=$(grep -n "reloaded" "$E" | tail -1 | cut -d: -f1)
stopping=$(grep -n "stopping: final counts written" "$E" | head -1 | cut -d: -f1)
check "the stop comes after the last reload (lines ${last_reload:-none} < ${stopping:-none})" \
	[ "${last_reload:-x}" -lt "${stopping:-0}" ]
check "the stop detaches the two selections left" grep -q "stopping: detached 2 events" "$E"
note "$(grep -E 'summary: selection' "$E" | tr '\n' ';')"
check "kept: every call delivered, 0 lost ($n calls)" grep -q "summary: selection kept: $n delivered, 0 lost" "$E"
lines=$(grep -c -- "^ *$COMM-[0-9]* .*: sys_sysfs(option: " "$TMP/out")
check "kept: one stdout line per call ($lines == $n)" [ "$lines" = "$n" ]
# The window in the records' own clock: a line's time is CLOCK_MONOTONIC
# seconds; the chunks' bounds are CLOCK_REALTIME: shift by their difference.
off=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
win=$(grep -- "^ *$COMM-[0-9]* " "$TMP/out" | awk -v h="$hup" -v d="$done_ns" -v o="$off" '
	{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) * 1e9 + o
	  if (t > h && t < d) c++; break } } END { print c + 0 }')
check "kept: the records traced during the detach are there ($win >= $((inside * CHUNK)), $inside chunks)" \
	[ "$inside" -ge 1 -a "$win" -ge $((inside * CHUNK)) ]
