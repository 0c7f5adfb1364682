#!/usr/bin/env bash
# systemd_metrics.sh in a container booted on the unified cgroup hierarchy
# (cgroup2 alone at /sys/fs/cgroup, what current distributions boot with):
# the socket unit's IP access list, a BPF program on its cgroup, there too.
NSPAWN_UNIFIED=1 exec bash "$(dirname "$0")/systemd_metrics.sh"
