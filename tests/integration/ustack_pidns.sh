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
#  3. A booted container (systemd-nspawn, tests/nspawn.sh): tracerd as a
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
unshare --pid --fork --mount-proc --kill-child sleep 600 &
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

# tracerd inside: nsenter forks it, and it is signalled by its own pid.
nsenter --target "$NSINIT" --pid --mount -- "$BIN" --config "$TMP/conf" --foreground >"$TMP/a.out" 2>"$TMP/a.out.err" &
NSENTER=$!
on_exit "kill -INT $NSENTER"
for ((i = 0; i < 300; i++)); do
	grep -q attached "$TMP/a.out.err" 2>/dev/null && break
	kill -0 "$NSENTER" 2>/dev/null || break
	sleep 0.05
done
TPID=$(cat /proc/"$NSENTER"/task/*/children 2>/dev/null | tr -d " ")
if ! grep -q attached "$TMP/a.out.err" || [ -z "$TPID" ]; then
	cat "$TMP/a.out.err" >&2
	not_ok "ustack_pidns: tracerd starts in the namespace"
	exit 0
fi
on_exit "kill -INT $TPID"
note "tracerd: pid $TPID on the host, $(sed -n 's/^NSpid:\t//p' /proc/"$TPID"/status | tr '\t' ' ') in its namespaces"

blocks() { grep -c '<user stack trace>' "$TMP/a.out"; }
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
kill -INT "$TPID"
for ((i = 0; i < 100; i++)); do kill -0 "$TPID" 2>/dev/null || break; sleep 0.05; done
note "on the host: $(head -3 "$TMP/host.frames" | tr '\n' '|')"
nhost=$(wc -l <"$TMP/host.frames")
marked=$(grep -Ec "^ => <[0-9a-f]{16}> \(process not in tracerd's PID namespace\)\$" "$TMP/host.frames")
check "on the host: each of 15 or more frames marked (process not in tracerd's PID namespace)" \
	test "$nhost" -ge 15 -a "$marked" = "$nhost"
check "summary: the frames outside the namespace counted apart ($marked), none as exited" \
	grep -Eq "summary: user stack frames: [0-9]+ named, .* 0 of exited processes, 0 of processes whose maps tracerd cannot read, $marked of processes outside tracerd's PID namespace;" \
	"$TMP/a.out.err"
grep "summary: user stack frames" "$TMP/a.out.err" | sed 's/^/# /'

# 3. A booted container: tracerd as a unit inside it (the container's
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
