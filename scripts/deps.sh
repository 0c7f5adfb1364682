#!/usr/bin/env bash
# Installs every Debian package that building, running and testing tracerd needs.
set -euo pipefail
pkgs=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
	libsystemd-dev libtraceevent-dev libzstd-dev
	systemd-container e2fsprogs xfsprogs util-linux iproute2 procps python3 jq
	libclang-rt-14-dev valgrind
	bash-completion	# tests/integration/completion.sh
	man-db groff-base	# tests/integration/man.sh: man -l --warnings renders the pages
	linux-perf	# tests/integration/perf_beside.sh: perf still sees what tracerd passes on
	# tests/integration/remote.sh: journal-upload and journal-remote between two containers.
	# Its postinst only adds the systemd-journal-remote user (systemd-sysusers);
	# it enables and starts no service.
	systemd-journal-remote
	# tests/integration/trace_dat.sh: --trace-dat's files read by the real tools: trace-cmd
	# report, a libkshark program, and KernelShark itself under Xvfb, photographed by import.
	trace-cmd libkshark-dev libjson-c-dev libtracecmd-dev libtracefs-dev kernelshark xvfb xauth imagemagick fonts-dejavu-core
	# tests/integration/prometheus.sh: a real Prometheus server (its own, on a free loopback
	# port) scrapes tracerd, and promtool checks the exposition (metrics.sh too). 2.42, 94 MB
	# of Go binaries and a few JavaScript packages for its web pages; the recommended
	# prometheus-node-exporter is left out. Its postinst enables prometheus.service and starts
	# it (where systemd is PID 1, or through the init script where policy-rc.d allows): a
	# server on :9090 that nothing here wants, stopped and disabled below.
	prometheus
	curl	# the metrics tests' scrapes and Prometheus's query API
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Installed just now: no prometheus.service left running or enabled (an admin's own, installed
# before, is not touched).
if [[ " ${missing[*]} " == *" prometheus "* ]]; then
	if [ -d /run/systemd/system ]; then
		systemctl disable --now prometheus.service
	else
		/etc/init.d/prometheus stop >/dev/null 2>&1 || true
		systemctl disable prometheus.service 2>/dev/null || true
		update-rc.d prometheus disable >/dev/null
	fi
fi
