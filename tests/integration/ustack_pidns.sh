#!/usr/bin/env bash
# User stack frames (StackTrace=user) when tracerd runs in a PID namespace
# of its own, as in a container: BPF gives the initial namespace's tgid,
# /proc numbers processes as tracerd's namespace does (bpf/stack.bpf.h,
# TRACERD_REC_NS_TGID).
#  1. A new PID namespace (unshare --pid --mount-proc: its own /proc) runs
#     tracerd and ustack_prog (frame pointers: main -> a -> b ->
#     fcntl(F_SETLK)): the frames name b, a and main in the program's file,
#     and none says "(process exited)".
#  2. ustack_prog on the host, outside that namespace, traced by the same
#     tracerd: its frames are marked "(process not in tracerd's PID
#     namespace)", and the summary counts exactly those.
#  3. tracerd in a PID namespace whose /proc is the host's (unshare --pid
#     alone): it keeps to the kernel's pids, and a host process is named.
#  4. A booted container (systemd-nspawn, tests/nspawn.sh): tracerd as a
#     unit and ustack_prog inside it, the frames named.
source "$(dirname "$0")/../lib.sh"
need_root ustack_pidns
COMM=uspn-$$
PROG=$TMP/$COMM
cp "$PWD/$BUILD/tests/tools/ustack_prog" "$PROG"
BIN=$TRACERD
cat >"$TMP/conf" <<CONF
[Daemon]
FlushIntervalMSec=20
StatsIntervalSec=0
[Selection]
Name=ustack
Events=filelock:fcntl_setlk
Filter=comm == "$COMM"
StackTrace=user
CONF

# The namespace's init (a sleep); killing it kills everything in the namespace.
unshare --pid --fork --mount-proc --kill-child sleep 600 2>/dev/null &
UNSHARE=$!
disown "$UNSHARE"	# killed at exit: no job notice
on_exit "kill -KILL $UNSHARE"
NSINIT=
for ((i = 0; i < 100; i++)); do
	NSINIT=$(cat /proc/"$UNSHARE"/task/*/children 2>/dev/null | tr -d " ")
	[ -n "$NSINIT" ] && [ "$(readlink /proc/"$NSINIT"/ns/pid)" != "$(readlink /proc/self/ns/pid)" ] && break
	NSINIT=
	sleep 0.05
done
[ -n "$NSINIT" ] || { not_ok "ustack_pidns: a PID namespace"; exit 0; }
on_exit "kill -KILL $NSINIT"

# start_forked OUT CMD...: CMD (nsenter, unshare) forks tracerd into a PID
# namespace, stdout to OUT, stderr to OUT.err; waits until it has attached.
# Sets TPID, tracerd's pid here, by which it is signalled.
start_forked() {
	local out=$1 fork i; shift
	"$@" "$BIN" --config "$TMP/conf" --foreground >"$out" 2>"$out.err" &
	fork=$!
	on_exit "kill -KILL $fork"
	for ((i = 0; i < 300; i++)); do
		grep -q attached "$out.err" 2>/dev/null && break
		kill -0 "$fork" 2>/dev/null || break
		sleep 0.05
	done
	TPID=$(cat /proc/"$fork"/task/*/children 2>/dev/null | tr -d " ")
	if ! grep -q attached "$out.err" || [ -z "$TPID" ]; then
		cat "$out.err" >&2
		return 1
	fi
	on_exit "kill -INT $TPID"
	note "tracerd: pid $TPID here, $(sed -n 's/^NSpid:\t//p' /proc/"$TPID"/status | tr '\t' ' ') in its namespaces"
}
stop_forked() {
	local i
	kill -INT "$TPID"
	for ((i = 0; i < 200; i++)); do kill -0 "$TPID" 2>/dev/null || return 0; sleep 0.05; done
}

OUT=$TMP/a.out
start_forked "$OUT" nsenter --target "$NSINIT" --pid --mount -- ||
	{ not_ok "ustack_pidns: tracerd starts in the namespace"; exit 0; }

blocks() { grep -c '<user stack trace>' "$OUT"; }
# run_prog N WHERE...: ustack_prog fires N events, then lives until tracerd
# has printed N more blocks (so its frames are resolved while it lives).
run_prog() {
	local n=$1 before i; shift
	before=$(blocks)
	mkfifo "$TMP/in"
	"$@" "$PROG" "$n" <"$TMP/in" >"$TMP/prog.out" &
	local pid=$!
	exec 7>"$TMP/in"
	for ((i = 0; i < 200; i++)); do
		[ "$(blocks)" -ge $((before + n)) ] && break
		sleep 0.05
	done
	exec 7>&-
	wait "$pid"
	rm -f "$TMP/in"
}
run_prog 5 nsenter --target "$NSINIT" --pid --mount --
frames() { awk '/<user stack trace>/ { on = 1; next } /^ => / && on { print; next } { on = 0 }' "$1"; }
frames "$TMP/a.out" >"$TMP/ns.frames"
names() { sed -n "s|^ => $PROG\[+0x[0-9a-f]*\] \([a-z]*\)+0x[0-9a-f]*\$|\1|p" "$1" | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' '; }
note "in the namespace: $(head -3 "$TMP/ns.frames" | tr '\n' '|')"
check "in tracerd's PID namespace: the frames name b, a, main and $PROG, 5 each" \
	test "$(names "$TMP/ns.frames")" = "a=5 b=5 main=5 "
check "in tracerd's PID namespace: no frame says (process exited)" \
	test "$(grep -c 'process exited' "$TMP/ns.frames")" = 0

# 2. On the host: not a process tracerd's /proc knows.
run_prog 5
frames "$TMP/a.out" | tail -n +"$(($(wc -l <"$TMP/ns.frames") + 1))" >"$TMP/host.frames"
stop_forked
note "on the host: $(head -3 "$TMP/host.frames" | tr '\n' '|')"
nhost=$(wc -l <"$TMP/host.frames")
marked=$(grep -Ec "^ => <[0-9a-f]{16}> \(process not in tracerd's PID namespace\)\$" "$TMP/host.frames")
check "on the host: each of 15 or more frames marked (process not in tracerd's PID namespace)" \
	test "$nhost" -ge 15 -a "$marked" = "$nhost"
check "summary: the frames outside the namespace counted apart ($marked), none as exited" \
	grep -Eq "summary: user stack frames: [0-9]+ named, .* 0 of exited processes, 0 of processes whose maps tracerd cannot read, $marked of processes outside tracerd's PID namespace;" \
	"$TMP/a.out.err"
grep "summary: user stack frames" "$TMP/a.out.err" | sed 's/^/# /'

# 3. A /proc that is not tracerd's namespace's (unshare --pid without
# --mount-proc: the host's, which calls tracerd by another pid): the loader
# leaves the namespace out and frames are looked up by the kernel's pid, as
# before, so a host process is named.
OUT=$TMP/c.out
start_forked "$OUT" unshare --pid --fork --kill-child -- ||
	{ not_ok "ustack_pidns: tracerd starts under unshare --pid"; exit 0; }
run_prog 5
stop_forked
frames "$OUT" >"$TMP/c.frames"
note "the host's /proc: $(head -3 "$TMP/c.frames" | tr '\n' '|')"
check "the host's /proc in tracerd's namespace: a host process's frames name b, a, main, 5 each" \
	test "$(names "$TMP/c.frames")" = "a=5 b=5 main=5 "

# 4. A booted container: tracerd as a unit inside it (the container's
# seccomp filter and capabilities), ustack_prog beside it.
source "$(dirname "$0")/../nspawn.sh"
mkdir "$TMP/ci"
cp "$BIN" "$PROG" "$TMP/conf" "$TMP/ci/"
if ! nspawn_start "$TMP/ci"; then
	not_ok "ustack_pidns: the container boots"
	exit 0
fi
ct mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
ct systemd-run --quiet --unit=tracerd-ustack --service-type=exec -p StandardOutput=file:/run/t.out \
	-p StandardError=file:/run/t.err -- /opt/ci/tracerd --config /opt/ci/conf --foreground
for ((i = 0; i < 300; i++)); do
	ct grep -q attached /run/t.err 2>/dev/null && break
	sleep 0.05
done
if ! ct grep -q attached /run/t.err; then
	ct cat /run/t.err >&2
	not_ok "ustack_pidns: tracerd starts in the container"
	exit 0
fi
sleep 1 | ct /opt/ci/"$COMM" 5 >/dev/null
ct systemctl stop tracerd-ustack
ct cat /run/t.out >"$TMP/ct.out"
ct cat /run/t.err >"$TMP/ct.err"
frames "$TMP/ct.out" >"$TMP/ct.frames"
note "in the container: $(head -3 "$TMP/ct.frames" | tr '\n' '|')"
PROG=/opt/ci/$COMM
check "in a booted container: the frames name b, a, main and $PROG, 5 each" \
	test "$(names "$TMP/ct.frames")" = "a=5 b=5 main=5 "
