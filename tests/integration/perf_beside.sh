#!/usr/bin/env bash
# perf beside tracerd: tracerd's program passes every event on (returns 1),
# and attaches through a perf event it then disables (so that passing an
# event on costs nothing on CPU 0). perf's own events must still count every
# event that tracerd rejects or keeps, on every CPU.
. "$(dirname "$0")/../lib.sh"
need_root perf_beside
if ! command -v perf >/dev/null || ! perf stat -e filelock:fcntl_setlk -a true >/dev/null 2>&1; then
	ok "perf beside tracerd # SKIP no working perf (make bench-deps)"
	exit 0
fi

N=20000
fire() { # N fcntl(F_SETLKW, F_UNLCK): filelock:fcntl_setlk
	python3 -c 'import fcntl, sys, tempfile
f = tempfile.TemporaryFile()
for _ in range(int(sys.argv[1])):
    fcntl.lockf(f, fcntl.LOCK_UN)' "$N"
}
cat >"$TMP/perf.conf" <<CONF
[Daemon]
StatsIntervalSec=0
[Selection]
Name=reject
Events=filelock:fcntl_setlk
Filter=ret == 12345
CONF
start_tracerd "$TMP/perf.conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }
ok "tracerd starts and attaches"
for cpu in 0 1; do
	[ -d /sys/devices/system/cpu/cpu$cpu ] || continue
	n=$(perf stat -x, -e filelock:fcntl_setlk -a -- taskset -c $cpu \
		bash -c "$(declare -f fire); N=$N; fire" 2>&1 >/dev/null | awk -F, '/fcntl_setlk/ {print $1}')
	note "CPU $cpu: perf counted $n of $N events tracerd rejected"
	check "perf counts every event tracerd rejects, on CPU $cpu" [ "${n:-0}" -ge $N ]
done
stop_tracerd
check "tracerd exits 0 on SIGINT" [ $? = 0 ]
filtered=$(grep -Eo "filelock:fcntl_setlk delivered=0 lost=0 .*filtered=[0-9]+" "$TMP/out.err" | grep -Eo "[0-9]+$")
note "tracerd filtered $filtered"
check "tracerd rejected them all ($((2 * N))+)" [ "${filtered:-0}" -ge $((2 * N)) ]
