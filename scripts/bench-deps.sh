#!/usr/bin/env bash
# Installs what `make bench` needs beyond scripts/deps.sh: the tracers it
# compares tracerd with (perf, bpftrace) and bpftool to read BPF footprints.
set -euo pipefail
"$(dirname "$0")/deps.sh"
pkgs=(linux-perf bpftrace bpftool python3)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
