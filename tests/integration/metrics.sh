#!/usr/bin/env bash
# GET /metrics (issue 32): tracerd's counts in the Prometheus text format,
# checked against a workload of a known size while scrapers poll, and the
# server's answers to bad input, which must cost no record:
#   - sysfs(2) fired exactly N times under a comm of this run's own: the
#     selection's tracerd_events_total delivered + lost = N, and delivered
#     equals the records printed (nothing lost on the way);
#   - every series is well formed (HELP, TYPE, label escapes), and promtool
#     (Debian's prometheus package, which deps.sh installs) finds nothing;
#   - 404 for another path, 405 for POST, 400 for garbage, 414 for a 1 MiB
#     request line, 505 for an HTTP/2 preface, a connection over the cap
#     closed, a slow client cut: the records of the workload that fired
#     meanwhile all delivered.
. "$(dirname "$0")/../lib.sh"
need_root metrics
COMM=mtr$$
cp "${FIRE:-$PWD/${BUILD:-build}/tests/tools/fire_syscall}" "$TMP/$COMM"
FIRE=$TMP/$COMM
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics

cat >"$TMP/m.conf" <<EOF
[Daemon]
Output=stdout
StatsIntervalSec=0
[Metrics]
Listen=127.0.0.1:$PORT
[Selection]
Name=sysfs
Events=syscalls:sys_enter_sysfs
Filter=comm == "$COMM"
EOF
start_tracerd "$TMP/m.conf" "$TMP/out" || { not_ok "metrics: tracerd starts"; exit 0; }
ok "metrics: tracerd starts with [Metrics] Listen=127.0.0.1:$PORT"

# metric NAME LABELS: the value of one series in $TMP/m.txt.
metric() { awk -v k="$1{$2}" '$1 == k {print $2}' "$TMP/m.txt"; }
scrape() { curl -sf --max-time 5 "$URL" >"$TMP/m.txt"; }

N=3000
# Scrapers polling while the workload fires: 8 in parallel, 20 times each
# (waited for by pid: tracerd is this shell's child too).
scrapers=()
for ((s = 0; s < 8; s++)); do
	( for ((i = 0; i < 20; i++)); do curl -s --max-time 5 -o /dev/null "$URL"; done ) &
	scrapers+=($!)
done
"$FIRE" $N 20000 >/dev/null
wait "${scrapers[@]}"
sleep 0.3	# the ring drained (FlushIntervalMSec)
check "metrics: a scrape answers 200" scrape
L='selection="sysfs",event="syscalls:sys_enter_sysfs"'
delivered=$(metric tracerd_events_total "$L,outcome=\"delivered\"")
lost=$(metric tracerd_events_total "$L,outcome=\"lost\"")
note "delivered=$delivered lost=$lost of $N"
check "metrics: delivered + lost = the $N calls fired" [ $((${delivered:-0} + ${lost:-0})) = $N ]
records=$(grep -c "sys_sysfs(" "$TMP/out")
check "metrics: delivered = the records printed ($records)" [ "${delivered:-x}" = "$records" ]
check "metrics: tracerd_build_info names the kernel" grep -q "^tracerd_build_info{version=\"[^\"]*\",kernel=\"$(uname -r)\"} 1$" "$TMP/m.txt"
check "metrics: every sample's metric has a HELP and a TYPE" python3 - "$TMP/m.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
typed = set(re.findall(r"^# TYPE (\S+) (?:counter|gauge)$", text, re.M))
helped = set(re.findall(r"^# HELP (\S+) .+$", text, re.M))
bad = [l for l in text.splitlines() if l and not l.startswith("#") and
       (not re.fullmatch(r'[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? \d+', l)
        or l.split("{")[0].split(" ")[0] not in typed & helped)]
print("\n".join("# " + l for l in bad[:5]))
sys.exit(1 if bad or not typed else 0)
EOF
# promtool (Debian's prometheus, in scripts/deps.sh): nothing printed, exit 0.
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/m.txt" >"$TMP/lint" 2>&1
	rc=$?
	sed 's/^/# promtool: /' "$TMP/lint" | head -10
	check "metrics: promtool check metrics finds nothing (rc $rc)" [ $rc = 0 -a ! -s "$TMP/lint" ]
else
	not_ok "metrics: promtool check metrics: not installed (make deps)"
fi

# Bad input, while the workload fires again.
"$FIRE" $N 3000 >/dev/null &
fp=$!
python3 - "$PORT" >"$TMP/bad.txt" <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
def ask(data, wait=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    s.close()
    return out.split(b"\r\n", 1)[0].decode(errors="replace")
print("path", ask(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"))
print("post", ask(b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
print("garbage", ask(b"\x00\x01\x02garbage\r\n\r\n"))
print("long", ask(b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\n\r\n"))
print("h2", ask(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
# Over the cap: 200 idle connections; one more request is still answered
# once they go.
idle = []
for i in range(200):
    try:
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError:
        break
closed = 0
time.sleep(0.5)
for s in idle:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b""
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print("capped", closed)
for s in idle:
    s.close()
print("after", ask(b"GET /metrics HTTP/1.0\r\n\r\n"))
EOF
wait $fp
sed 's/^/# /' "$TMP/bad.txt"
check "metrics: another path is 404" grep -q "^path HTTP/1.[01] 404" "$TMP/bad.txt"
check "metrics: POST is 405" grep -q "^post HTTP/1.[01] 405" "$TMP/bad.txt"
check "metrics: garbage is 400" grep -q "^garbage HTTP/1.[01] 400" "$TMP/bad.txt"
check "metrics: a 1 MiB request line is 414" grep -q "^long HTTP/1.[01] 414" "$TMP/bad.txt"
check "metrics: an HTTP/2 preface is 505" grep -q "^h2 HTTP/1.[01] 505" "$TMP/bad.txt"
capped=$(awk '$1 == "capped" {print $2}' "$TMP/bad.txt")
check "metrics: connections over the cap are closed ($capped of 200)" [ "${capped:-0}" -ge 100 ]
check "metrics: a request after them is answered" grep -q "^after HTTP/1.[01] 200" "$TMP/bad.txt"
sleep 0.3
scrape
delivered=$(metric tracerd_events_total "$L,outcome=\"delivered\"")
records=$(grep -c "sys_sysfs(" "$TMP/out")
check "metrics: the records fired meanwhile are all delivered ($records of $((2 * N)))" \
	[ "$records" = $((2 * N)) -a "${delivered:-x}" = "$records" ]
stop_tracerd
check "metrics: tracerd exits 0 at stop" [ $? = 0 ]
