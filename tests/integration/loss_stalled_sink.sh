#!/usr/bin/env bash
# A stalled sink never blocks the consumer: tracerd prints into a FIFO that
# nobody reads. The pipe fills, then the bounded sink queue fills, then
# records are counted as sink errors (ENOBUFS). Meanwhile the daemon still
# pings the watchdog, answers SIGHUP, and on SIGTERM exits promptly with
# every record accounted for: delivered + lost + suppressed + sink errors == N.
. "$(dirname "$0")/../lib.sh"
need_root loss_stalled_sink
EVENT=syscalls:sys_enter_sysfs
N=100000
# The workload under a comm of its own: the counts below are the selection's,
# and other tests may fire sysfs(2) meanwhile.
COMM=stall$$
fire_as "$COMM"

printf '[Daemon]\nRingBufferSize=64M\nFlushIntervalMSec=10\n[Selection]\nName=stall\nEvents=%s\nFilter=comm == "%s"\n' \
	"$EVENT" "${COMM:0:15}" >"$TMP/c.conf"
mkfifo "$TMP/fifo"
exec 3<>"$TMP/fifo"	# holds the pipe open: it fills, nobody reads it
on_exit "exec 3<&-"

# What tracerd tells systemd: WATCHDOG=1 pings, STATUS= lines.
notify_listen "$TMP/notify" 60 "$TMP/notes"

TRACERD_QUEUE_ENTRIES=2000 NOTIFY_SOCKET=$TMP/notify WATCHDOG_USEC=400000 \
	bash -c 'export WATCHDOG_PID=$$; exec "$0" --config "$1" --foreground' \
	"$TRACERD" "$TMP/c.conf" >&3 2>"$TMP/err" &
TRACERD_PID=$!
on_exit "kill -9 $TRACERD_PID"
for ((i = 0; i < 200; i++)); do grep -q attached "$TMP/err" && break; sleep 0.05; done
check "tracerd attaches" grep -q attached "$TMP/err"

read -r pid fired secs < <("$FIRE" $N)
note "fired $fired in ${secs}s"
sleep 1	# the pipe (64 KiB) and the queue (2000 records) are full by now
check "tracerd is still running with its output stalled" kill -0 "$TRACERD_PID"

p0=$(notify_count "$TMP/notes" WATCHDOG=1)
sleep 1
p1=$(notify_count "$TMP/notes" WATCHDOG=1)
note "watchdog pings during one stalled second: $((p1 - p0))"
check "the watchdog is pinged while the sink is stalled" [ $((p1 - p0)) -ge 2 ]

# systemctl status shows STATUS=: it must not read "0 lost" while the sink fails.
for ((i = 0; i < 60; i++)); do grep -q "sink errors" "$TMP/notes" && break; sleep 0.1; done
notify_statuses "$TMP/notes" >"$TMP/status"
note "$(tail -1 "$TMP/status")"
check "STATUS= carries the sink errors" grep -Eq "^STATUS=.*, [1-9][0-9]* sink errors" "$TMP/status"
check "STATUS= does not say 0 lost while the sink fails" bash -c "! tail -1 '$TMP/status' | grep -q ' 0 lost'"

kill -HUP "$TRACERD_PID"
for ((i = 0; i < 40; i++)); do grep -q "reloaded" "$TMP/err" && break; sleep 0.05; done
check "SIGHUP is answered while the sink is stalled" grep -q "reloaded" "$TMP/err"

t0=$(date +%s.%N)
kill -TERM "$TRACERD_PID"
wait "$TRACERD_PID"
rc=$?
t1=$(date +%s.%N)
el=$(echo "$t1 - $t0" | bc 2>/dev/null || python3 -c "print($t1 - $t0)")
note "exit $rc after ${el}s"
check "SIGTERM exits 0" [ "$rc" = 0 ]
check "SIGTERM exits within 5 s" python3 -c "import sys; sys.exit(0 if $el < 5 else 1)"

sed 's/^/#   /' "$TMP/err" | grep -v attached
sum=$(grep -m1 " $EVENT delivered=" "$TMP/err")
D=$(sed -n 's/.* delivered=\([0-9]*\).*/\1/p' <<<"$sum")
L=$(sed -n 's/.* lost=\([0-9]*\).*/\1/p' <<<"$sum")
S=$(sed -n 's/.* suppressed=\([0-9]*\).*/\1/p' <<<"$sum")
E=$(sed -n 's/.* sink_errors=\([0-9]*\).*/\1/p' <<<"$sum")
check "delivered + lost + suppressed + sink errors == $N ($D + $L + $S + $E)" [ -n "$D" -a "$((D + L + S + E))" = "$N" ]
check "the full queue counted drops as ENOBUFS" grep -Eq "sink errors \(.*ENOBUFS [0-9]+" "$TMP/err"
check "nothing lost in the kernel: the consumer kept draining" [ "$L" = 0 ]

# What reached the pipe: tracerd writes one line per write(2) into a pipe,
# so the complete lines there are exactly the records counted delivered.
cat >"$TMP/drain.py" <<'PY'
import os, sys
os.set_blocking(0, False)
data = b""
while True:
    try:
        b = os.read(0, 65536)
    except BlockingIOError:
        break
    if not b:
        break
    data += b
mark = ("-%s " % sys.argv[1]).encode()
print(sum(1 for l in data.split(b"\n")[:-1] if mark in l and b": sys_sysfs(option: " in l))
PY
timeout 5 python3 "$TMP/drain.py" "$pid" <&3 >"$TMP/inpipe"
P=$(cat "$TMP/inpipe")
note "lines in the pipe: $P, delivered: $D"
check "lines that reached the pipe ($P) == delivered ($D)" [ -n "$P" -a "${P:-0}" -gt 0 -a "$P" = "$D" ]
