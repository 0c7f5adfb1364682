#!/usr/bin/env bash
# The flight recorder under the unit, in a booted container (tests/nspawn.sh):
# `systemctl kill -s USR1 tracerd` and `tracerd --snapshot` (which asks
# systemd for the unit's main process) each write a snapshot into the unit's
# StateDirectory=, with its journal entry; after a restart of the unit, the
# snapshot reads back: numbered fcntl_setlk events (tests/tools/fire_setlk)
# from overwritten + 1 to the last fired, each once.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nspawn.sh"
need_root systemd_recorder
need_tools systemd_recorder systemd-nspawn nsenter python3
NUMS=trn-$RANDOM
CONF=/etc/tracerd/tracerd.conf

nspawn_start "$PWD" || { not_ok "container boots"; exit 0; }
ct mount -t tracefs nodev /sys/kernel/tracing
check "make install into the container" \
	ct make -s -C /opt/ci -o "$BUILD/tracerd" install BUILD="$BUILD" PREFIX=/usr/local
ct mkdir -p /etc/tracerd
ct sh -c "cat >$CONF" <<CONF
[Daemon]
RingBufferSize=64M
StatsIntervalSec=0
[Recorder]
Size=256K
KeepAfterSec=0
MinIntervalSec=0
[Selection]
Name=nums
Events=filelock:fcntl_setlk
Filter=comm == "$NUMS"
Output=recorder
CONF
# As systemd.sh: under ASan, LeakSanitizer needs ptrace() at exit.
if grep -q __asan_init "$TRACERD"; then
	ct mkdir -p /etc/systemd/system/tracerd.service.d
	ct sh -c 'printf "[Service]\nSystemCallFilter=ptrace\nEnvironment=LSAN_OPTIONS=suppressions=/opt/ci/tests/lsan.supp\n" >/etc/systemd/system/tracerd.service.d/60-sanitizer.conf'
fi
ct systemctl daemon-reload
check "systemctl start tracerd" ct systemctl start tracerd
ct cp "/opt/ci/$BUILD/tests/tools/fire_setlk" "/run/$NUMS"
ct_unit "/run/$NUMS" 600000 1 >/dev/null	# the window wraps

# entries REASON: the snapshot entries of that reason, as JSON lines.
entries() { ct journalctl -u tracerd -o json --no-pager "TRACE_SNAPSHOT_REASON=$1" 2>/dev/null; }
wait_entry() {
	local i
	for ((i = 0; i < 200; i++)); do [ -n "$(entries "$1")" ] && return 0; sleep 0.1; done
	return 1
}
jfield() { python3 -c 'import json, sys; print(json.loads(sys.argv[2]).get(sys.argv[1], ""))' "$1" "$2"; }

check "systemctl kill -s USR1 tracerd" ct systemctl kill -s USR1 tracerd
check "... writes a snapshot, said in the journal" wait_entry signal
E=$(entries signal | head -1)
SNAP=$(jfield TRACE_SNAPSHOT "$E")
OVER=$(jfield TRACE_SNAPSHOT_OVERWRITTEN "$E")
note "$(jfield MESSAGE "$E")"
check "... in the unit's StateDirectory= ($SNAP)" [ "${SNAP#/var/lib/tracerd/snapshot-}" != "$SNAP" ]
ct_unit "/run/$NUMS" 1000 600001 >/dev/null
out=$(ct tracerd --snapshot 2>&1)
check "tracerd --snapshot asks the unit's main process ($out)" [ $? = 0 ]
check "... which writes a snapshot named request" wait_entry request

check "systemctl restart tracerd" ct systemctl restart tracerd
ct tracerd --read "$SNAP" >"$TMP/snap.txt" 2>"$TMP/snap.err"
rc=$?
check "the snapshot reads back after the restart, exit 0 ($rc$(head -1 "$TMP/snap.err" | sed 's/^/: /'))" [ $rc = 0 ]
check "the window wrapped: $OVER overwritten" [ "${OVER:-0}" -gt 0 ]
check "no loss in it ($(jfield TRACE_SNAPSHOT_LOST "$E"))" [ "$(jfield TRACE_SNAPSHOT_LOST "$E")" = 0 ]
check "... its numbers from overwritten + 1 ($((OVER + 1))) to 600000, each once" python3 - "$TMP/snap.txt" $((OVER + 1)) 600000 <<'PY'
import re, sys
want, last = int(sys.argv[2]), int(sys.argv[3])
for line in open(sys.argv[1]):
    v = int(re.search(r"fl_start=(\d+) ", line).group(1))
    if v != want:
        print("# %d where %d was due" % (v, want)); sys.exit(1)
    want += 1
sys.exit(0 if want - 1 == last else 1)
PY
check "systemctl stop tracerd" ct systemctl stop tracerd
