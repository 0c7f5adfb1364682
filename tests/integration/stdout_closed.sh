#!/usr/bin/env bash
# `tracerd --foreground | head -2`: once the reader has gone, tracerd ends as
# any Unix filter does, with its summary on stderr and every record it could
# not write counted (EPIPE), instead of counting sink errors forever.
. "$(dirname "$0")/../lib.sh"
need_root stdout_closed

printf '[Selection]\nName=s\nEvents=sched:sched_switch\n' >"$TMP/c.conf"
t0=$(date +%s%N)
timeout 30 "$TRACERD" --config "$TMP/c.conf" --foreground 2>"$TMP/err" | head -2 >"$TMP/out"
rc=${PIPESTATUS[0]}
ms=$((($(date +%s%N) - t0) / 1000000))
note "exit $rc after $ms ms"
check "head got its two lines" [ "$(grep -c ' sched_switch: ' "$TMP/out")" = 2 ]
check "tracerd exits on its own, status 0 (not killed by the 30 s timeout)" [ "$rc" = 0 ]
check "it says why it stopped" grep -q "stdout is closed: stopping" "$TMP/err"
check "the summary on stderr counts the lines nobody read (EPIPE)" \
	grep -Eq "summary: selection s: [0-9]+ delivered, .* sink errors \(EPIPE [0-9]+\)" "$TMP/err"
