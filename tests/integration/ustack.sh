#!/usr/bin/env bash
# User stack frames (StackTrace=user), the kernel as oracle: ftrace's
# userstacktrace with sym-userobj and sym-addr prints each frame of an event
# as " => FILE[+0xOFF] <IP>" (kernel/trace/trace_output.c, seq_print_user_ip),
# looked up in the live process.
#  1. The symbolizer alone (tests/tools/ustack_sym): the same FILE[+0xOFF]
#     for every IP ftrace recorded, read while the processes live.
#  2. tracerd with StackTrace=user on the same events, on stdout: each
#     record's <user stack trace> block has ftrace's frames, in order, and
#     names b, a and main in tests/tools/ustack_prog's file.
#  3. The store: the frames were resolved while the process lived, so
#     --read and --json name them after it has exited.
# Workloads: ustack_prog (frame pointers: main -> a -> b -> fcntl(F_SETLK))
# and python3 (libc and the interpreter without them: whatever frames the
# kernel's walk finds).
source "$(dirname "$0")/../lib.sh"
need_root ustack
SYM=$PWD/$BUILD/tests/tools/ustack_sym
# A copy with a comm of this run's own, for the filter to pick its records.
COMM=usp-$$
PROG=$TMP/$COMM
cp "$PWD/$BUILD/tests/tools/ustack_prog" "$PROG"

conf() { # conf FILE OUTPUT
	cat >"$1" <<CONF
[Daemon]
FlushIntervalMSec=20
Output=$2
[Store]
Directory=$TMP/store
[Selection]
Name=ustack
Events=filelock:fcntl_setlk
Filter=comm == "$COMM"
StackTrace=user
CONF
}
conf "$TMP/a.conf" stdout
start_tracerd "$TMP/a.conf" "$TMP/a.out" || { not_ok "ustack: tracerd starts"; exit 0; }

make_instance "tracerd_ustack_$$" || { not_ok "ustack: tracefs instance"; exit 0; }
echo 1 >"$INSTANCE/options/userstacktrace"
echo 1 >"$INSTANCE/options/sym-userobj"
echo 1 >"$INSTANCE/options/sym-addr"
echo 1 >"$INSTANCE/events/filelock/fcntl_setlk/enable"
on_exit "echo 0 >$INSTANCE/events/filelock/fcntl_setlk/enable"

# Each workload fires its events, says so, and lives until its stdin closes.
mkfifo "$TMP/in1" "$TMP/in2"
"$PROG" 20 <"$TMP/in1" >"$TMP/prog.out" &
pid1=$!
python3 -c '
import fcntl, os, sys, tempfile
f = tempfile.TemporaryFile()
for i in range(20):
    fcntl.lockf(f, fcntl.LOCK_UN)
print(os.getpid(), flush=True)
sys.stdin.read()' <"$TMP/in2" >"$TMP/py.out" &
pid2=$!
exec 7>"$TMP/in1" 8>"$TMP/in2"
on_exit "exec 7>&- 8>&-; wait"
for ((i = 0; i < 100; i++)); do
	[ -s "$TMP/prog.out" ] && [ -s "$TMP/py.out" ] && break
	sleep 0.05
done
echo 0 >"$INSTANCE/events/filelock/fcntl_setlk/enable"

# "TGID IP KERNEL-TEXT" per frame of our two processes (single-threaded: pid
# is tgid), from the block that follows each of their events.
awk -v p1="$pid1" -v p2="$pid2" '
	/<user stack trace>/ { split($1, c, "-"); pid = c[length(c)]; on = (pid == p1 || pid == p2); next }
	/^ => / && on { ip = $NF; gsub(/[<>]/, "", ip); line = $0; sub(/ <[0-9a-f]+>$/, "", line)
		print pid, ip, line; next }
	{ on = 0 }' "$INSTANCE/trace" >"$TMP/kernel"
cut -d' ' -f1,2 "$TMP/kernel" | "$SYM" >"$TMP/ours"
# tracerd has read the records (and resolved them) before the workloads go.
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c '<user stack trace>' "$TMP/a.out")" -ge 20 ] && break
	sleep 0.05
done
exec 7>&- 8>&-
wait "$pid1" "$pid2"
stop_tracerd

n=$(wc -l <"$TMP/kernel")
[ "$(grep -c "^$pid1 " "$TMP/kernel")" -ge 60 ] && [ "$(grep -c "^$pid2 " "$TMP/kernel")" -ge 20 ] ||
	{ not_ok "ustack: ftrace recorded too few frames ($n)"; exit 0; }

# 1. Same FILE[+0xOFF] (ours then names the symbol), or the same raw address
# (ftrace puts two spaces before it, tracerd one). An IP in no mapping is
# left out: ftrace's find_vma() then takes the next mapping up and prints an
# offset outside it, tracerd says "(not mapped)".
paste -d'\t' "$TMP/kernel" "$TMP/ours" | awk -F'\t' '
	{ k = $1; sub(/^[0-9]+ [0-9a-f]+ /, "", k); sub(/^ =>  </, " => <", k); o = $2 }
	o ~ /\(not mapped\)$/ { skipped++; next }
	{ sub(/\] .*/, "]", o); if (o != k) { bad++; if (bad <= 5) print "# kernel: " k "\n# ours:   " $2 } else good++ }
	END { printf "# %d frames equal, %d differ, %d not mapped left out\n", good, bad, skipped
	      exit !(bad == 0 && good > 0) }' >"$TMP/cmp"
rc=$?
cat "$TMP/cmp"
if [ $rc = 0 ]; then ok "ustack: every frame's file and offset equal ftrace's ($n frames)"
else not_ok "ustack: frames differ from ftrace's"; fi

# 2. tracerd's blocks: ftrace's frames of ustack_prog, event by event, then
# named: b, a, main in its file.
sed -n "s/ <[0-9a-f]*>\$//; s/^$pid1 [0-9a-f]* //p" "$TMP/kernel" >"$TMP/kernel.prog"
awk '/<user stack trace>/ { on = 1; next } /^ => / && on { print; next } { on = 0 }' \
	"$TMP/a.out" >"$TMP/tracerd.frames"
sed 's/\] .*/]/' "$TMP/tracerd.frames" >"$TMP/tracerd.prog"
note "stdout: $(head -3 "$TMP/tracerd.frames" | tr '\n' '|')"
check "stdout: StackTrace=user: 20 blocks, each frame's file and offset as ftrace's, in order" \
	diff "$TMP/kernel.prog" "$TMP/tracerd.prog"
names() { sed -n "s|^ => $PROG\[+0x[0-9a-f]*\] \([a-z]*\)+0x[0-9a-f]*\$|\1|p" "$1" | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' '; }
check "stdout: the frames name b, a, main and $PROG, 20 each" \
	test "$(names "$TMP/tracerd.frames")" = "a=20 b=20 main=20 "
check "summary: the user frames are counted, ours named" \
	grep -Eq "summary: user stack frames: [0-9]+ named, .* 0 of exited processes" "$TMP/a.out.err"

# 3. The store: resolved live, printed after the process has gone.
conf "$TMP/b.conf" store
start_tracerd_store "$TMP/b.conf" "$TMP/b.out" || { not_ok "ustack: tracerd starts (store)"; exit 0; }
mkfifo "$TMP/in3"
"$PROG" 5 <"$TMP/in3" >"$TMP/prog3.out" &
pid3=$!
exec 7>"$TMP/in3"
for ((i = 0; i < 100; i++)); do [ -s "$TMP/prog3.out" ] && break; sleep 0.05; done
sleep 0.5	# FlushIntervalMSec=20: the consumer has read them
exec 7>&-
wait "$pid3"
stop_tracerd
"$TRACERD" --read "$TMP/store" >"$TMP/read.out" 2>&1
awk '/<user stack trace>/ { on = 1; next } /^ => / && on { print; next } { on = 0 }' \
	"$TMP/read.out" >"$TMP/read.frames"
note "--read: $(head -3 "$TMP/read.frames" | tr '\n' '|')"
check "--read: the stored frames name b, a, main and $PROG after it exited, 5 each" \
	test "$(names "$TMP/read.frames")" = "a=5 b=5 main=5 "
"$TRACERD" --read "$TMP/store" --json >"$TMP/read.json" 2>&1
check "--json: TRACE_USER_STACK= holds the frames, a line each, b first" python3 -c '
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(recs) == 5, len(recs)
for r in recs:
    f = r["TRACE_USER_STACK"].split("\n")
    assert [re.sub(r".*\] (\w+)\+0x.*", r"\1", x) for x in f[:3]] == ["b", "a", "main"], f
' "$TMP/read.json"

# 4. As the unit runs it: a dynamic user with the unit's capabilities names
# a root process's frames only with CAP_SYS_PTRACE (units/tracerd.service
# grants it); without it the process's files are not its to open (through
# /proc/PID/root), so its frames show file and offset but no function.
UPRIV=$(mktemp -d /dev/shm/tracerd-ustack-priv.XXXXXX)
on_exit "rm -rf $UPRIV"
chown nobody "$UPRIV"
printf '[Daemon]\nOutput=stdout\nFlushIntervalMSec=20\nStatsIntervalSec=0\n[Selection]\nName=ustack\nEvents=filelock:fcntl_setlk\nFilter=comm == "%s"\nStackTrace=user\n' \
	"$COMM" >"$UPRIV/conf"
chmod 644 "$UPRIV/conf"
BIN=$TRACERD
as_unit() { # as_unit CAPS OUT: tracerd as nobody with CAPS, ustack_prog as root
	TRACERD=setpriv TRACERD_POINTER_KEY=$UPRIV/key run_tracerd "$2" --reuid=nobody --regid=nogroup \
		--clear-groups --inh-caps="$1" --ambient-caps="$1" "$BIN" --config "$UPRIV/conf" || return 1
	sleep 1 | "$PROG" 5 >/dev/null
	stop_tracerd
}
UNIT_CAPS=+bpf,+perfmon,+dac_read_search
if as_unit "$UNIT_CAPS,+sys_ptrace" "$UPRIV/ptrace.out"; then
	note "as the unit: $(grep -m3 '^ => ' "$UPRIV/ptrace.out" | tr '\n' '|')"
	check "as the unit (CAP_SYS_PTRACE): a root process's frames name b, a, main, 5 each" \
		test "$(names "$UPRIV/ptrace.out")" = "a=5 b=5 main=5 "
else
	not_ok "as the unit (CAP_SYS_PTRACE): tracerd starts"
fi
if as_unit "$UNIT_CAPS" "$UPRIV/noptrace.out"; then
	note "without: $(grep -m3 '^ => ' "$UPRIV/noptrace.out" | tr '\n' '|')"
	check "without CAP_SYS_PTRACE: 15 frames, none named (why the unit grants it)" \
		test "$(grep -c '^ => ' "$UPRIV/noptrace.out")" -ge 15 -a -z "$(names "$UPRIV/noptrace.out")"
else
	not_ok "without CAP_SYS_PTRACE: tracerd starts"
fi
