#!/usr/bin/env bash
# Captures every event's tracefs format into one fixture file, for the
# format parser's unit tests: "#### system:event" before each format.
set -euo pipefail
out=${1:-tests/fixtures/formats-$(uname -r | cut -d- -f1).txt}
cd /sys/kernel/tracing/events
for f in */*/format; do
	d=${f%/format}
	printf '#### %s:%s\n' "${d%%/*}" "${d#*/}"
	cat "$f"
done >"$OLDPWD/$out"
