# A real systemd as PID 1 for system tests: systemd-nspawn boots the host's
# own /usr over a throwaway tmpfs root (--volatile=yes), in about a second.
# Source after tests/lib.sh; needs root and systemd-container.
#
#   nspawn_start DIR [OPTION...]
#                        boot; DIR is bound read-only at /opt/ci; OPTIONs are
#                        more systemd-nspawn options (--network-interface=)
#   ct CMD...            run CMD inside, as a plain root shell would
#   ct_unit CMD...       run CMD inside a transient unit: under the container's
#                        seccomp filter and with its cgroup, like a service
#   nspawn_stop          halt, then kill whatever is left; registered with
#                        on_exit by nspawn_start, so it also runs on failure
#   nspawn_as NAME       several containers: the functions above act on
#                        container NAME from now on (a new one if unknown);
#                        without nspawn_as there is one, as before
#
# Why the flags (systemd 252, no systemd or D-Bus on the host):
#   --register=no --keep-unit   no machined and no system bus to talk to
#   systemd.firstboot=off       the empty /etc would make firstboot prompt
#   --system-call-filter=...    nspawn's seccomp filter blocks bpf() and
#                               perf_event_open() even with all capabilities
#   --capability=CAP_BPF,...    nspawn's default bounding set lacks them; root
#                               gets by with CAP_SYS_ADMIN, a unit that keeps
#                               only CAP_BPF and CAP_PERFMON does not
#   --overlay=/usr/local::...   /usr is read-only; `make install` writes here
#   --private-network           keeps the container's networkd off the host's
#                               interfaces
# NSPAWN_UNIFIED=1 boots the container on the unified cgroup hierarchy
# (cgroup2 alone at /sys/fs/cgroup, what current distributions boot with)
# although the host's is hybrid: nspawn mounts it so when told by
# SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1, and systemd.unified_cgroup_hierarchy=1
# says the same to the container's systemd.
# The container's cgroups go under a cgroup of this run, in both hierarchies
# of the host's hybrid layout, so that parallel runs do not collide and
# everything left over can be found and killed.

NSPAWN_CG=tracerd-test-$$-$RANDOM
NSPAWN_PID=
CT_PID=
CT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

nspawn_cgroups() {
	local h
	for h in systemd unified; do
		[ -d "/sys/fs/cgroup/$h" ] && echo "/sys/fs/cgroup/$h/$NSPAWN_CG"
	done
}

# The container's PID 1: the child of nspawn in another PID namespace whose
# comm is systemd (the first child can be nspawn's short-lived helper).
nspawn_find_init() {
	local c
	for c in $(cat /proc/"$NSPAWN_PID"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = systemd ] || continue
		[ "$(readlink /proc/"$c"/ns/pid)" != "$(readlink /proc/self/ns/pid)" ] || continue
		CT_PID=$c
		return 0
	done
	return 1
}

# The state of each container nspawn_as has switched away from, by name.
declare -A NSPAWN_SAVED=()
NSPAWN_NAME=

nspawn_as() {
	[ -n "$NSPAWN_NAME" ] && NSPAWN_SAVED[$NSPAWN_NAME]="$NSPAWN_CG ${NSPAWN_PID:--} ${CT_PID:--}"
	NSPAWN_NAME=$1
	if [ -n "${NSPAWN_SAVED[$1]:-}" ]; then
		read -r NSPAWN_CG NSPAWN_PID CT_PID <<<"${NSPAWN_SAVED[$1]}"
		[ "$NSPAWN_PID" = - ] && NSPAWN_PID=
		[ "$CT_PID" = - ] && CT_PID=
	else
		NSPAWN_CG=tracerd-test-$$-$RANDOM NSPAWN_PID= CT_PID=
	fi
	return 0
}

nspawn_start() {
	local bind=$1 cg i state
	shift
	for cg in $(nspawn_cgroups); do mkdir -p "$cg" || return 1; done
	if [ -n "$NSPAWN_NAME" ]; then on_exit nspawn_as "$NSPAWN_NAME" \; nspawn_stop; else on_exit nspawn_stop; fi
	# Interrupted or terminated, exit, so that the EXIT trap stops the container.
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# The host's prometheus.service (deps.sh: the package, for prometheus.sh)
	# masked: the first boot's presets enable it, and without its /etc files
	# it failed (Result: resources) and restarted in every container.
	local init_args=(systemd.firstboot=off systemd.mask=prometheus.service) unified=()
	if [ "${NSPAWN_UNIFIED:-0}" = 1 ]; then
		init_args+=(systemd.unified_cgroup_hierarchy=1)
		unified=(SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1)
	fi
	# The launcher moves itself into the run's cgroups, then becomes nspawn.
	env "${unified[@]}" NSPAWN_CGS="$(nspawn_cgroups)" sh -c \
		'for cg in $NSPAWN_CGS; do echo $$ >"$cg/cgroup.procs" || exit 1; done; exec "$@"' sh \
		systemd-nspawn --quiet --directory=/ --volatile=yes --boot --register=no --keep-unit \
		--private-network --system-call-filter='bpf perf_event_open' --capability=CAP_BPF,CAP_PERFMON \
		--overlay=/usr/local::/usr/local --bind-ro="$bind:/opt/ci" "$@" \
		--machine="$NSPAWN_CG" "${init_args[@]}" </dev/null >"$TMP/nspawn$NSPAWN_NAME.log" 2>&1 &
	NSPAWN_PID=$!
	for ((i = 0; i < 200; i++)); do
		nspawn_find_init && break
		kill -0 "$NSPAWN_PID" 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$CT_PID" ]; then
		tail -20 "$TMP/nspawn$NSPAWN_NAME.log" >&2
		return 1
	fi
	# "degraded" is fine: Debian's presets enable units that fail in here.
	# Until PID 1 listens on its private socket, systemctl fails at once.
	for ((i = 0; i < 300; i++)); do
		state=$(timeout 30 nsenter --target "$CT_PID" --all -- env -i PATH="$CT_PATH" \
			systemctl is-system-running --wait 2>/dev/null)
		case $state in
		running|degraded) return 0 ;;
		maintenance|stopping|offline) break ;;
		esac
		kill -0 "$NSPAWN_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "container did not boot: '$state'" >&2
	tail -20 "$TMP/nspawn$NSPAWN_NAME.log" >&2
	return 1
}

ct() {
	nsenter --target "$CT_PID" --all -- env -i PATH="$CT_PATH" "$@"
}

# Processes entered with nsenter do not carry nspawn's seccomp filter: what
# must behave as inside the container (bpf, perf_event_open) runs here.
ct_unit() {
	ct systemd-run --quiet --wait --pipe --collect --service-type=exec -- "$@"
}

nspawn_stop() {
	local i cg
	[ -n "$NSPAWN_PID" ] || return 0
	# SIGTERM makes nspawn halt the container in order (SIGRTMIN+3 to init).
	kill -TERM "$NSPAWN_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$NSPAWN_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$NSPAWN_PID" 2>/dev/null
	# If nspawn died first, its init lives on: kill it, then every process
	# left in the run's cgroups, by pid.
	[ -n "$CT_PID" ] && kill -KILL "$CT_PID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		local left=
		for cg in $(nspawn_cgroups); do
			left+=$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)
		done
		[ -z "$left" ] && break
		kill -KILL $left 2>/dev/null
		sleep 0.1
	done
	for cg in $(nspawn_cgroups); do
		[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	wait "$NSPAWN_PID" 2>/dev/null
	NSPAWN_PID=
}
