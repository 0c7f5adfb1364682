#!/usr/bin/env bash
# Every event this kernel lets BPF attach to, at once ("*:*", syscalls
# included): attach time, what the kernel refused and why, the programs
# (one per record layout), and how many distinct events a few seconds of
# mixed workload fire.
. "$(dirname "$0")/../lib.sh"
need_root breadth

avail=$(wc -l <"$TRACEFS/available_events")
printf '[Daemon]\nRingBufferSize=64M\nFlushIntervalMSec=20\n[Selection]\nName=all\nEvents=*:*\n' >"$TMP/all.conf"
# A notify socket: what tracerd tells systemd while it attaches and detaches
# (detaching every event takes minutes: one RCU grace period per event).
notify_listen "$TMP/notify" 600 "$TMP/notes"
export NOTIFY_SOCKET=$TMP/notify
before=$(ls /proc/self/fd | wc -l)
start_tracerd "$TMP/all.conf" "$TMP/out" || { not_ok "tracerd attaches every event"; exit 0; }
unset NOTIFY_SOCKET
line=$(grep "attached" "$TMP/out.err")
note "$line"
attached=$(sed -E 's/.*attached ([0-9]+) events.*/\1/' <<<"$line")
ms=$(sed -E 's/.* in ([0-9.]+) ms.*/\1/' <<<"$line")
refused=$(grep -c "the kernel refused" "$TMP/out.err")
grep "the kernel refused" "$TMP/out.err" | sed 's/^/# /'
note "available: $avail, attached: $attached, refused: $refused, attach time: $ms ms (target < 2000 ms)"
check "every available event attached or refused with a reason" [ "$attached" -gt 0 -a $((attached + refused)) = "$avail" ]
check "syscalls: events attached" [ "$(bpf_ids_of "$TRACERD_PID" link_id)" -ge "$attached" ]
# Emitted programs (issue 30), one per record layout, not per event; the
# accept program besides, and the class program if it runs some events (it
# is loaded only then).
emitted=$(sed -n 's/.*Events= (no Filter=) compiled to BPF: \([0-9]*\) program(s) for .*/\1/p' "$TMP/out.err")
class=$(grep -c "selection all: .*the class program runs the others" "$TMP/out.err")
progs=$(sed -E 's/.* ([0-9]+) BPF program\(s\).*/\1/' <<<"$line")
note "$(grep "selection all:" "$TMP/out.err" | cut -c1-160)"
check "programs per layout, not per event: ${emitted:-none} emitted, the accept program and $class class program for $attached events ($progs)" \
	[ "${emitted:-0}" -ge 1 -a "${emitted:-0}" -lt $((attached / 4)) -a "$progs" = $((${emitted:-0} + 1 + class)) ]

# A few seconds of mixed workload: processes, files, sockets, signals, timers.
(
	for i in $(seq 1 50); do /bin/true; done
	dd if=/dev/zero of="$TMP/f" bs=64k count=64 conv=fsync status=none
	sleep 0.2 & kill -USR1 $! 2>/dev/null
	exec 3<>/dev/tcp/127.0.0.1/1 2>/dev/null
	python3 -c 'import socket,os; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); c=socket.create_connection(s.getsockname()); a,_=s.accept(); c.send(b"x"*1000); a.recv(1000); c.close(); a.close()'
	ls -lR /usr/share/doc >/dev/null 2>&1
	sleep 1
) >/dev/null 2>&1
sleep 0.5
stop_tracerd
rc=$?
check "tracerd exits 0 after tracing everything" [ $rc = 0 ]
note "$(grep "stopping: detached" "$TMP/out.err")"
# Stopping: STOPPING=1, then about every second while events detach,
# WATCHDOG=1 and EXTEND_TIMEOUT_USEC= so that systemd does not kill it.
check "stop: STOPPING=1 sent" [ "$(notify_count "$TMP/notes" STOPPING=1)" -ge 1 ]
grep "EXTEND_TIMEOUT_USEC=.*STATUS=stopping" "$TMP/notes" >"$TMP/extends"
gap=$(awk '{ if (p) { g = $1 - p; if (g > m) m = g }; p = $1 } END { printf "%.1f", m }' "$TMP/extends")
note "stop: $(wc -l <"$TMP/extends") EXTEND_TIMEOUT_USEC= messages, at most ${gap} s apart; the last: $(tail -1 "$TMP/extends" | cut -f2- | tr '\t' ' ')"
check "stop: EXTEND_TIMEOUT_USEC= and WATCHDOG=1 at most 3 s apart while detaching" \
	awk -v g="$gap" 'BEGIN { exit !(g > 0 && g <= 3) }' </dev/null
fired=$(grep -c " delivered=[1-9]" "$TMP/out.err")
lost=$(grep -o "[0-9]* lost" "$TMP/out.err" | head -1)
note "distinct events fired: $fired; $lost"
check "many distinct events fired (>= 100)" [ "$fired" -ge 100 ]
check "syscalls: events delivered" grep -q "syscalls:sys_enter_.* delivered=[1-9]" "$TMP/out.err"
