#!/usr/bin/env bash
# A fleet, with systemd's own tools: tracerd's journal entries reach a central
# journal through systemd-journal-upload (on the traced host) and
# systemd-journal-remote (on the collector). Two containers, each booting a
# real systemd, on a veth pair of their own: the sender runs tracerd and
# journal-upload, the collector journal-remote. Known events are fired on the
# machine; on the collector each one must be there exactly once with every
# field as in the sender's journal; then a burst measures the entries/s the
# pair sustains; then the collector goes down, more events are fired, and
# once it is back up all of them must arrive, once each.
# Then docs/OPERATIONS.md's HTTPS set-up: the events arrive the same way, the sender
# refuses a collector its CA did not certify, and the collector's socket
# takes only the senders' addresses.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nspawn.sh"
need_root remote
need_tools remote systemd-nspawn nsenter jq ip python3
[ -x /lib/systemd/systemd-journal-remote ] && [ -x /lib/systemd/systemd-journal-upload ] ||
	{ not_ok "remote: systemd-journal-remote is not installed (make deps)"; exit 0; }

RCOMM=remote$$	# at most 15 characters: a comm
fire_as "$RCOMM"
BULK=${REMOTE_BULK:-50000}	# events of the throughput burst
DOWN=${REMOTE_DOWN:-5000}	# events fired while the collector is down
LOCKS=10			# fcntl lock/unlock pairs: 2 * LOCKS filelock:fcntl_setlk events
SADDR=192.168.219.1 CADDR=192.168.219.2
REMOTE_DIR=/var/log/journal/remote

t0=$(date +%s%N)
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# Commands in the sender and in the collector.
S() { nspawn_as sender; ct "$@"; }
C() { nspawn_as collector; ct "$@"; }

nspawn_as collector
nspawn_start "$PWD" || { not_ok "collector container boots"; exit 0; }
nspawn_as sender
nspawn_start "$PWD" || { not_ok "sender container boots"; exit 0; }
ok "two containers boot with systemd as PID 1 ($(ms_since "$t0") ms)"

# The link: a veth pair of this run's names (parallel runs do not collide),
# one end moved into each container's network namespace (--private-network
# gave it none but lo). nspawn's --network-interface= would want udev to
# have initialized the interface, and there is no udev on the host. The
# pair goes with the namespaces; the on_exit is for a failure before.
VS=trv$$s VC=trv$$c
ip link add "$VS" type veth peer name "$VC" || { not_ok "remote: a veth pair"; exit 0; }
on_exit "ip link del $VS"
nspawn_as sender
ip link set "$VS" netns "$CT_PID"
nspawn_as collector
ip link set "$VC" netns "$CT_PID"
S ip addr add "$SADDR/24" dev "$VS"
S ip link set "$VS" up
S ip link set lo up
C ip addr add "$CADDR/24" dev "$VC"
C ip link set "$VC" up
C ip link set lo up

# The collector: journal-remote, socket activated on 19532, plain HTTP.
C mkdir -p /etc/systemd/system/systemd-journal-remote.service.d
C sh -c "cat >/etc/systemd/system/systemd-journal-remote.service.d/50-http.conf" <<EOF
[Service]
ExecStart=
ExecStart=/lib/systemd/systemd-journal-remote --listen-http=-3 --output=$REMOTE_DIR/
EOF
C systemctl daemon-reload
check "collector: systemd-journal-remote.socket listens on 19532" C systemctl start systemd-journal-remote.socket
check "the sender reaches it on $CADDR:19532" S timeout 5 bash -c "</dev/tcp/$CADDR/19532"

# The sender: tracerd (installed as `make install` does) and journal-upload.
S mount -t tracefs nodev /sys/kernel/tracing
check "sender: make install" S make -s -C /opt/ci -o "$BUILD/tracerd" install BUILD="$BUILD" PREFIX=/usr/local
S sh -c "cat >/etc/tracerd/tracerd.conf" <<EOF
[Daemon]
FlushIntervalMSec=50
StatsIntervalSec=0

# sysfs(2): only fire_syscall calls it, here under a comm of this run's own
# (other tests may fire it meanwhile, fast enough to flood the journal).
[Selection]
Name=sysfs
Events=syscalls:sys_enter_sysfs
Filter=comm == "$RCOMM"
RateLimit=0

# Flag and symbolic fields: TRACE_FLAGS, TRACE_TYPE beside their _RAW.
[Selection]
Name=locks
Events=filelock:fcntl_setlk
Priority=notice
EOF
S sh -c "printf '[Upload]\nURL=http://$CADDR:19532\n' >/etc/systemd/journal-upload.conf"
# Debian's journal-upload (systemd 252) exits when it cannot reach the
# collector; Restart=on-failure every 100 ms hits the start limit in a
# second and leaves it failed for good. docs/OPERATIONS.md's drop-in: keep retrying.
S mkdir -p /etc/systemd/system/systemd-journal-upload.service.d
S sh -c "cat >/etc/systemd/system/systemd-journal-upload.service.d/50-retry.conf" <<EOF
[Unit]
StartLimitIntervalSec=0

[Service]
Restart=always
RestartSec=5s
EOF
# journal-upload is After=network-online.target: with no network manager
# in here, systemd-networkd-wait-online would hold it back for 2 minutes.
S systemctl mask --quiet systemd-networkd-wait-online.service
S systemctl daemon-reload
check "sender: systemctl start tracerd" S systemctl start tracerd
check "sender: systemctl start systemd-journal-upload" S systemctl start systemd-journal-upload
note "setup took $(ms_since "$t0") ms"

# Entries as JSON, one per line, on the sender (local) and the collector.
local_entries() { S journalctl -o json --no-pager "$@" 2>/dev/null; }
remote_entries() { C journalctl -D $REMOTE_DIR -o json --no-pager "$@" 2>/dev/null; }
# Waits until journalctl match $3... gives $2 entries in $1 (local or
# remote) or $TIMEOUT s pass; prints the count.
count() { "$1"_entries "${@:2}" --output-fields=TRACE_PID | wc -l; }
wait_count() {
	local where=$1 want=$2 n i; shift 2
	for ((i = 0; i < ${TIMEOUT:-20} * 4; i++)); do
		n=$(count "$where" "$@")
		[ "$n" -ge "$want" ] && break
		sleep 0.25
	done
	echo "$n"
}
# The fields that must arrive unchanged, one entry per line, sorted.
fields() { jq -cS 'with_entries(select(.key | test("^(TRACE_.*|MESSAGE|PRIORITY|SYSLOG_IDENTIFIER|__REALTIME_TIMESTAMP)$")))' | sort; }

# ---- known events: every field arrives, each entry once ----
read -r LPID _ < <(python3 -c "
import fcntl, os, tempfile
print(os.getpid(), flush=True)
with tempfile.TemporaryFile() as f:
    for _ in range($LOCKS):
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.lockf(f, fcntl.LOCK_UN)
")
FPID=$("$FIRE" 100 | cut -d' ' -f1)
n=$(wait_count local $((2 * LOCKS)) TRACE_EVENT=filelock:fcntl_setlk TRACE_PID="$LPID")
check "sender: $((2 * LOCKS)) fcntl_setlk entries in the local journal ($n)" [ "$n" = $((2 * LOCKS)) ]
m=$(wait_count local 100 TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$FPID")
check "sender: 100 sys_enter_sysfs entries in the local journal ($m)" [ "$m" = 100 ]
n=$(wait_count remote $((2 * LOCKS)) TRACE_EVENT=filelock:fcntl_setlk TRACE_PID="$LPID")
m=$(wait_count remote 100 TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$FPID")
sleep 0.5	# duplicates would come after
n=$(count remote TRACE_EVENT=filelock:fcntl_setlk TRACE_PID="$LPID")
m=$(count remote TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$FPID")
note "collector files: $(C sh -c "ls $REMOTE_DIR" | xargs)"
check "collector: each of the $((2 * LOCKS)) fcntl_setlk events once ($n)" [ "$n" = $((2 * LOCKS)) ]
check "collector: each of the 100 sys_enter_sysfs events once ($m)" [ "$m" = 100 ]

local_entries TRACE_EVENT=filelock:fcntl_setlk TRACE_PID="$LPID" >"$TMP/locks.local"
remote_entries TRACE_EVENT=filelock:fcntl_setlk TRACE_PID="$LPID" >"$TMP/locks.remote"
note "fcntl_setlk on the collector: $(head -1 "$TMP/locks.remote" | jq -c 'with_entries(select(.key | startswith("TRACE_")))')"
check "collector: fcntl_setlk entries have TRACE_TYPE=F_WRLCK/F_UNLCK beside TRACE_TYPE_RAW=1/2, TRACE_FLAGS=FL_POSIX beside TRACE_FLAGS_RAW" \
	jq -se --argjson n $LOCKS 'length == 2 * $n and
		([.[] | select(.TRACE_TYPE == "F_WRLCK" and .TRACE_TYPE_RAW == "1")] | length) == $n and
		([.[] | select(.TRACE_TYPE == "F_UNLCK" and .TRACE_TYPE_RAW == "2")] | length) == $n and
		all(.[]; (.TRACE_FLAGS | test("FL_POSIX")) and (.TRACE_FLAGS_RAW | test("^[0-9]+$")) and .TRACE_SELECTION == "locks" and .PRIORITY == "5")' \
	"$TMP/locks.remote" >/dev/null
same() { # same NAME FILE.local FILE.remote: the same field sets, entry by entry
	fields <"$2" >"$2.f"
	fields <"$3" >"$3.f"
	if cmp -s "$2.f" "$3.f" && [ -s "$2.f" ] && [ "$(jq -r .TRACE_TIMESTAMP_NS "$2.f" | sort -u | wc -l)" = "$(wc -l <"$2.f")" ]; then
		ok "$1: every TRACE_* field, MESSAGE, PRIORITY and time as in the sender's journal ($(wc -l <"$2.f") entries, $(head -1 "$2.f" | jq 'keys | length') fields each)"
	else
		not_ok "$1: every TRACE_* field, MESSAGE, PRIORITY and time as in the sender's journal"
		diff "$2.f" "$3.f" | head -6 | cut -c1-200 | sed 's/^/#   /'
	fi
}
same "fcntl_setlk" "$TMP/locks.local" "$TMP/locks.remote"
local_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$FPID" >"$TMP/sysfs.local"
remote_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$FPID" >"$TMP/sysfs.remote"
same "sys_enter_sysfs" "$TMP/sysfs.local" "$TMP/sysfs.remote"

# ---- throughput: a burst of $BULK events at an unlimited rate ----
# The time from the first event fired until the collector has the last:
# tracerd, the sender's journald, journal-upload, journal-remote in a row.
# A marker event (another process) after the burst is polled for; it goes
# through the same queues in order, and an index lookup costs little.
has() { [ -n "$("$1"_entries -n1 "${@:2}" --output-fields=TRACE_PID)" ]; }
wait_has() {
	local i
	for ((i = 0; i < ${TIMEOUT:-20} * 20; i++)); do has "$@" && return 0; sleep 0.05; done
	return 1
}
t=$(date +%s%N)
BPID=$("$FIRE" "$BULK" | cut -d' ' -f1)
MPID=$("$FIRE" 1 | cut -d' ' -f1)
TIMEOUT=60 wait_has local TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$MPID"
local_ms=$(ms_since "$t")
TIMEOUT=60 wait_has remote TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$MPID"
remote_ms=$(ms_since "$t")
n=$(TIMEOUT=10 wait_count local "$BULK" TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$BPID")
m=$(TIMEOUT=10 wait_count remote "$BULK" TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$BPID")
note "burst of $BULK: in the sender's journal after $local_ms ms ($((BULK * 1000 / (local_ms + 1))) entries/s), on the collector after $remote_ms ms: the pair sustains $((BULK * 1000 / (remote_ms + 1))) entries/s"
check "burst: $BULK events in the sender's journal ($n)" [ "$n" = "$BULK" ]
u=$(remote_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$BPID" --output-fields=TRACE_TIMESTAMP_NS | jq -r .TRACE_TIMESTAMP_NS | sort -u | wc -l)
check "burst: all $BULK on the collector, each once ($m entries, $u distinct)" [ "$m" = "$BULK" -a "$u" = "$BULK" ]

# ---- the collector down: journal-upload resumes from its cursor ----
C systemctl stop systemd-journal-remote.socket systemd-journal-remote.service
DPID=$("$FIRE" "$DOWN" | cut -d' ' -f1)
n=$(TIMEOUT=60 wait_count local "$DOWN" TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$DPID")
check "collector down: $DOWN events in the sender's journal ($n)" [ "$n" = "$DOWN" ]
[ "$n" = "$DOWN" ] || note "sender: tracerd $(S systemctl show -p ActiveState -p NRestarts -p StatusText tracerd | xargs); journald $(S journalctl --disk-usage)"
sleep 2
note "collector down: journal-upload $(S systemctl show -p ActiveState -p SubState -p Result -p NRestarts systemd-journal-upload | xargs)"
S journalctl -u systemd-journal-upload -o cat --no-pager | tail -5 | sed 's/^/#   /'
check "collector down: none of them on the collector" [ "$(count remote TRACE_PID="$DPID")" = 0 ]
C systemctl start systemd-journal-remote.socket
t=$(date +%s%N)
m=$(TIMEOUT=30 wait_count remote "$DOWN" TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$DPID")
note "collector up again: $m of $DOWN after $(ms_since "$t") ms; journal-upload $(S systemctl show -p ActiveState -p SubState -p Result -p NRestarts systemd-journal-upload | xargs)"
note "journal-upload's state file: $(S grep -sh LAST_CURSOR= /var/lib/systemd/journal-upload/state | cut -c1-60)..."
sleep 1
local_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$DPID" >"$TMP/down.local"
remote_entries TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$DPID" >"$TMP/down.remote"
check "collector up again: all $DOWN arrive, each once ($(wc -l <"$TMP/down.remote"))" [ "$(wc -l <"$TMP/down.remote")" = "$DOWN" ]
same "collector up again" "$TMP/down.local" "$TMP/down.remote"
m=$(count remote TRACE_EVENT=syscalls:sys_enter_sysfs TRACE_PID="$BPID")
check "collector up again: the burst before it not sent again ($m of $BULK)" [ "$m" = "$BULK" ]

# ---- HTTPS, set up as docs/OPERATIONS.md says (tests/tools/remote_https.sh) ----
# The environment's TLS, not tracerd's code: not under the sanitizers.
if [ "${KERNEL_TESTS:-yes}" = no ]; then
	note "https: left to the plain make test (KERNEL_TESTS=no)"
else
	. "$(dirname "$0")/../tools/remote_https.sh"
fi

t=$(date +%s%N)
nspawn_as sender; nspawn_stop
nspawn_as collector; nspawn_stop
note "containers stopped in $(ms_since "$t") ms; whole test $(ms_since "$t0") ms"
left=$(for c in sender collector; do nspawn_as $c; for cg in $(nspawn_cgroups); do [ -d "$cg" ] && echo "$cg"; done; done)
gone() { [ -z "$left" ] && ! ip link show "$VS" >/dev/null 2>&1; }
check "containers stopped, their cgroups removed, the veth pair gone" gone
