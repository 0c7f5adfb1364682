#!/usr/bin/env bash
# Installs every Debian package that building, running and testing tracerd needs.
set -euo pipefail
pkgs=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
	libsystemd-dev libtraceevent-dev libzstd-dev
	systemd-container e2fsprogs xfsprogs util-linux iproute2 procps python3 jq
	libclang-rt-14-dev valgrind
	bash-completion	# tests/integration/completion.sh
	linux-perf	# tests/integration/perf_beside.sh: perf still sees what tracerd passes on
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
