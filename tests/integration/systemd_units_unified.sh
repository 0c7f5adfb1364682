#!/usr/bin/env bash
# systemd_units.sh in a container booted on the unified cgroup hierarchy
# (cgroup2 alone at /sys/fs/cgroup, what current distributions boot with),
# although this host's is hybrid: tests/nspawn.sh's NSPAWN_UNIFIED=1.
NSPAWN_UNIFIED=1 exec bash "$(dirname "$0")/systemd_units.sh"
