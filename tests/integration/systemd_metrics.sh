#!/usr/bin/env bash
# GET /metrics under the shipped units with socket activation (issue 32), in
# a booted container (tests/nspawn.sh), scraped from the host side: the
# host's curl in the container's network namespace only (its mounts, pids
# and cgroup stay the host's), since the container has a private network,
# and on a unix socket in a directory bound from the host.
#   - `make install` puts tracerd-metrics.socket beside the service; enabled,
#     systemd (PID 1) listens on 127.0.0.1:9464 before tracerd runs, and the
#     first scrape starts tracerd, which answers it from the passed socket:
#     the same socket in systemd and in tracerd (ss), the daemon says so;
#   - the counts are the running daemon's: sysfs(2) fired N times from the
#     host, delivered + lost = N;
#   - the socket unit's IPAddressAllow= decides who connects, although the
#     service has IPAddressDeny=any: only 127.0.0.2 allowed, 127.0.0.1 gets
#     no answer, 127.0.0.2 does; applied by a daemon-reload;
#   - a reload and a restart keep the socket; a Listen= of another address
#     is not used, and said; another ListenStream= by a drop-in, as the
#     unit's comments say to (the socket restarted while tracerd is stopped:
#     systemd refuses it while tracerd runs), a unix socket in a directory
#     bound from the host, which the host's curl scrapes without entering
#     the container at all; a stop leaves the socket, and a
#     scrape starts tracerd again; NRestarts stays 0; a config that cannot
#     start fails the socket by systemd's start limit (no loop), and once
#     fixed, reset-failed and a start of the socket serve again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nspawn.sh"
need_root systemd_metrics
need_tools systemd_metrics systemd-nspawn nsenter curl ss

COMM=tsm-$RANDOM$RANDOM
fire_as "$COMM"
CONF=/etc/tracerd/tracerd.conf
SOCKET=tracerd-metrics.socket
PORT=9464	# the shipped ListenStream=: the container's network is its own
t0=$(date +%s%N)
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

mkdir "$TMP/run"
nspawn_start "$PWD" --bind="$TMP/run:/run/tracerd-test" || { not_ok "systemd_metrics: container boots"; exit 0; }
ok "systemd_metrics: container boots ($(ms_since "$t0") ms)"
ct mount -t tracefs nodev /sys/kernel/tracing
check "systemd_metrics: make install puts $SOCKET beside the service" \
	ct make -s -C /opt/ci -o "$BUILD/tracerd" install BUILD="$BUILD" PREFIX=/usr/local
check "systemd_metrics: systemd-analyze verify passes on both units" \
	ct systemd-analyze verify /etc/systemd/system/$SOCKET /etc/systemd/system/tracerd.service

ct sh -c "cat >$CONF" <<EOF
[Daemon]
StatsIntervalSec=0
FlushIntervalMSec=50

[Selection]
Name=sysfs
Events=syscalls:sys_enter_sysfs
Filter=comm == "$COMM"
EOF
# Under ASan (make test SANITIZE=1), as in systemd.sh: LeakSanitizer needs ptrace().
if grep -q __asan_init "$TRACERD"; then
	note "sanitizer build: the unit also allows ptrace() for LeakSanitizer"
	ct mkdir -p /etc/systemd/system/tracerd.service.d
	ct sh -c 'printf "[Service]\nSystemCallFilter=ptrace\nEnvironment=LSAN_OPTIONS=suppressions=/opt/ci/tests/lsan.supp\n" >/etc/systemd/system/tracerd.service.d/60-sanitizer.conf'
fi
ct systemctl daemon-reload

# scrape [CURL OPTION...]: GET /metrics from the host side into $TMP/m.txt;
# prints the HTTP status (000: no answer). MAXT: seconds to wait.
scrape() {
	rm -f "$TMP/m.txt"
	nsenter --target "$CT_PID" --net -- curl -s --max-time "${MAXT:-10}" -o "$TMP/m.txt" \
		-w '%{http_code}' "$@" "http://127.0.0.1:$PORT/metrics"
}
# The processes that hold the listening socket, and its inode (ss -p reads
# the host's /proc: host pids).
listener() { nsenter --target "$CT_PID" --net -- ss -Hltnpe "sport = :$PORT"; }
inode() { listener | grep -o 'ino:[0-9]*'; }
holders() { listener | grep -o '("[^"]*",pid=[0-9]*,fd=[0-9]*)' | sort | tr '\n' ' '; }
show() { ct systemctl show -P "$2" "$1"; }
daemon_log() { ct journalctl -u tracerd --no-pager -o cat; }
# metric NAME LABELS: the value of one series in $TMP/m.txt.
metric() { awk -v k="$1{$2}" '$1 == k {print $2}' "$TMP/m.txt"; }

check "systemd_metrics: systemctl enable --now $SOCKET" ct systemctl enable --quiet --now $SOCKET
check "systemd_metrics: the socket is listening, tracerd is not running ($(show $SOCKET SubState), $(show tracerd ActiveState))" \
	[ "$(show $SOCKET SubState)" = listening -a "$(show tracerd ActiveState)" = inactive ]
h=$(holders)
check "systemd_metrics: systemd (PID 1) holds 127.0.0.1:$PORT before tracerd runs ($h)" \
	eval '[[ "$h" == "(\"systemd\",pid=$CT_PID,fd="*") " ]]'
ino=$(inode)

# The first scrape starts tracerd (Accept=no), which answers it once attached.
t=$(date +%s%N)
code=$(MAXT=120 scrape)
check "systemd_metrics: the first scrape starts tracerd and gets 200 ($code, $(ms_since "$t") ms)" [ "$code" = 200 ]
check "systemd_metrics: the answer has tracerd_build_info" grep -q '^tracerd_build_info{version="' "$TMP/m.txt"
check "systemd_metrics: tracerd is active, triggered by $SOCKET ($(show tracerd TriggeredBy))" \
	[ "$(show tracerd ActiveState)" = active -a "$(show tracerd TriggeredBy)" = $SOCKET ]
MAINPID=$(show tracerd MainPID)
h=$(holders)
check "systemd_metrics: the socket systemd made is tracerd's, and still systemd's ($h)" \
	eval '[ "$(inode)" = "$ino" ] && [[ "$h" == "(\"systemd\",pid=$CT_PID,fd="*") (\"tracerd\",pid="*",fd=3) " ]]'
check "systemd_metrics: tracerd says it serves the socket systemd passed" \
	eval 'daemon_log | grep -qx "metrics: GET /metrics at 127.0.0.1:$PORT, the socket systemd passed"'

# The counts are the running daemon's.
N=200
"$FIRE" $N >/dev/null
sleep 0.3
code=$(scrape)
L='selection="sysfs",event="syscalls:sys_enter_sysfs"'
d=$(metric tracerd_events_total "$L,outcome=\"delivered\"") l=$(metric tracerd_events_total "$L,outcome=\"lost\"")
check "systemd_metrics: $N sysfs calls fired from the host: delivered + lost = $N ($code: $d + $l)" \
	[ "$code" = 200 -a $((${d:-0} + ${l:-0})) = $N ]

# Who may connect: the socket unit's IP access list, not the service's.
check "systemd_metrics: the service denies every IP address (IPAddressDeny=$(show tracerd IPAddressDeny))" \
	[ -n "$(show tracerd IPAddressDeny)" ]
check "systemd_metrics: 127.0.0.2 scrapes too: localhost is allowed as shipped" \
	[ "$(scrape --interface 127.0.0.2)" = 200 ]
ct mkdir -p /etc/systemd/system/$SOCKET.d
ct sh -c "printf '[Socket]\nIPAddressAllow=\nIPAddressAllow=127.0.0.2\n' >/etc/systemd/system/$SOCKET.d/50-test.conf"
ct systemctl daemon-reload
check "systemd_metrics: only 127.0.0.2 allowed by a drop-in: from 127.0.0.1, no answer" \
	[ "$(MAXT=3 scrape)" = 000 ]
check "systemd_metrics: ... from 127.0.0.2, 200" [ "$(scrape --interface 127.0.0.2)" = 200 ]
ct rm /etc/systemd/system/$SOCKET.d/50-test.conf
ct systemctl daemon-reload
check "systemd_metrics: the drop-in removed: 127.0.0.1 scrapes again" [ "$(scrape)" = 200 ]

# A reload keeps the socket and the server.
ct systemctl reload tracerd
for ((i = 0; i < 100; i++)); do
	ct journalctl -o json --no-pager TRACE_RELOAD_SEQ=1 | grep -q '"TRACE_RELOAD":"ok"' && break
	sleep 0.1
done
check "systemd_metrics: after a reload: 200, the same pid, the same socket" \
	eval '[ "$(scrape)" = 200 -a "$(show tracerd MainPID)" = "$MAINPID" -a "$(inode)" = "$ino" ]'

# A Listen= of another address: the passed socket is served, and that said.
ct sh -c "printf '[Metrics]\nListen=127.0.0.1:9999\n' >>$CONF"
ct systemctl restart tracerd
check "systemd_metrics: restarted with Listen=127.0.0.1:9999: 200 at $PORT, a new pid, the same socket" \
	eval '[ "$(scrape)" = 200 -a "$(show tracerd MainPID)" != "$MAINPID" -a "$(inode)" = "$ino" ]'
check "systemd_metrics: ... nothing listens on 9999" \
	eval '[ -z "$(nsenter --target "$CT_PID" --net -- ss -Hltn "sport = :9999")" ]'
check "systemd_metrics: ... and tracerd says Listen= is not used" \
	eval 'daemon_log | grep -qx "\[Metrics\] Listen=127.0.0.1:9999 is not used: systemd passed a socket at 127.0.0.1:$PORT (tracerd-metrics.socket), which is served instead"'

# Another address by a drop-in, as the socket unit's comments say: while
# tracerd runs, the socket is not made anew.
ct sh -c "printf '[Socket]\nListenStream=\nListenStream=0.0.0.0:9465\n' >/etc/systemd/system/$SOCKET.d/50-test.conf"
ct systemctl daemon-reload
ct systemctl restart $SOCKET 2>/dev/null
rc=$?
check "systemd_metrics: ListenStream=0.0.0.0:9465 by a drop-in: restarting $SOCKET while tracerd runs fails ($rc)" [ $rc != 0 ]
check "systemd_metrics: ... and tracerd serves the old address on" [ "$(scrape)" = 200 ]
ct systemctl stop tracerd 2>/dev/null
ct systemctl restart $SOCKET
ct systemctl start tracerd
check "systemd_metrics: tracerd stopped, the socket restarted, tracerd started: 200 at 9465" \
	[ "$(PORT=9465 scrape)" = 200 ]
check "systemd_metrics: ... and 9464 closed" [ "$(MAXT=3 scrape)" = 000 ]

# A unix socket in a directory bound from the host: the host's curl, in no
# namespace of the container, starts tracerd and scrapes it.
ct sh -c "printf '[Socket]\nListenStream=\nListenStream=/run/tracerd-test/metrics.sock\nSocketMode=0600\n' >/etc/systemd/system/$SOCKET.d/50-test.conf"
ct systemctl daemon-reload
ct systemctl stop tracerd 2>/dev/null
ct systemctl restart $SOCKET
code=$(curl -s --max-time 120 -o "$TMP/m.txt" -w '%{http_code}' --unix-socket "$TMP/run/metrics.sock" http://localhost/metrics)
check "systemd_metrics: ListenStream=/run/tracerd-test/metrics.sock, bound from the host: the host's curl starts tracerd and gets 200 ($code)" \
	eval '[ "$code" = 200 ] && grep -q "^tracerd_build_info{" "$TMP/m.txt" && [ "$(show tracerd ActiveState)" = active ]'
check "systemd_metrics: ... tracerd says it serves that path" \
	eval 'daemon_log | grep -qx "metrics: GET /metrics at /run/tracerd-test/metrics.sock, the socket systemd passed"'

ct rm /etc/systemd/system/$SOCKET.d/50-test.conf
ct systemctl daemon-reload
ct systemctl stop tracerd 2>/dev/null
ct systemctl restart $SOCKET
ino=$(inode)

# Stopped, tracerd leaves the socket to systemd; a scrape starts it again.
ct systemctl stop tracerd 2>/dev/null
h=$(holders)
check "systemd_metrics: tracerd stopped: the socket listens in systemd alone ($h)" \
	eval '[ "$(show $SOCKET SubState)" = listening -a "$(inode)" = "$ino" ] && [[ "$h" == "(\"systemd\",pid=$CT_PID,fd="*") " ]]'
code=$(MAXT=120 scrape)
check "systemd_metrics: a scrape starts it again ($code, $(show tracerd ActiveState))" \
	[ "$code" = 200 -a "$(show tracerd ActiveState)" = active ]
check "systemd_metrics: NRestarts=0, never failed ($(show tracerd NRestarts), $(show tracerd Result))" \
	[ "$(show tracerd NRestarts)" = 0 -a "$(show tracerd Result)" = success ]

ct systemctl stop $SOCKET tracerd 2>/dev/null
check "systemd_metrics: both stopped, the port is free" eval '[ -z "$(listener)" ]'
check "systemd_metrics: tracerd exited 0 ($(show tracerd Result), status $(show tracerd ExecMainStatus))" \
	[ "$(show tracerd Result)" = success -a "$(show tracerd ExecMainStatus)" = 0 ]

# A config that cannot start: each start exits 78 and leaves the scrape in
# the backlog, which starts it again, until systemd's start limit fails
# the socket too: the scrape gets no answer, and nothing loops on.
ct cp $CONF /run/tracerd.conf.good
ct sh -c "printf '[Selection]\nName=bad\nEvents=nosuch:event\n' >$CONF"
ct systemctl start $SOCKET
code=$(MAXT=30 scrape)
sleep 0.5
check "systemd_metrics: a bad config: no answer ($code), tracerd failed with 78, the socket with service-start-limit-hit" \
	eval '[ "$code" = 000 -a "$(show tracerd ExecMainStatus)" = 78 -a "$(show $SOCKET Result)" = service-start-limit-hit ] &&
	      [ -z "$(listener)" ]'
ct cp /run/tracerd.conf.good $CONF
ct systemctl reset-failed tracerd $SOCKET
ct systemctl start $SOCKET
check "systemd_metrics: the config fixed, reset-failed and the socket started: a scrape starts tracerd, 200" \
	[ "$(MAXT=120 scrape)" = 200 ]
ct systemctl stop $SOCKET tracerd 2>/dev/null
nspawn_stop
note "whole test $(ms_since "$t0") ms"
left=$(for cg in $(nspawn_cgroups); do [ -d "$cg" ] && echo "$cg"; done)
check "systemd_metrics: container stopped, its cgroups removed" [ -z "$left" ]
