#!/usr/bin/env bash
# Mounts tracefs where the kernel expects it, if it is not mounted yet.
set -euo pipefail
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
