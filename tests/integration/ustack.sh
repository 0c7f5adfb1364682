#!/usr/bin/env bash
# User stack frames, the kernel as oracle: ftrace's userstacktrace with
# sym-userobj and sym-addr prints each frame of an event as
# " => FILE[+0xOFF] <IP>" (kernel/trace/trace_output.c, seq_print_user_ip),
# looked up in the live process; tracerd's symbolizer (tests/tools/ustack_sym)
# must print the same FILE[+0xOFF] for each IP, read while the processes
# live, and name b, a and main in tests/tools/ustack_prog's frames.
# Workloads: ustack_prog (frame pointers) and python3 (libc and the
# interpreter without them: whatever frames the kernel's walk finds).
source "$(dirname "$0")/../lib.sh"
need_root ustack
PROG=$PWD/$BUILD/tests/tools/ustack_prog
SYM=$PWD/$BUILD/tests/tools/ustack_sym

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
exec 7>&- 8>&-
wait

n=$(wc -l <"$TMP/kernel")
[ "$(grep -c "^$pid1 " "$TMP/kernel")" -ge 60 ] && [ "$(grep -c "^$pid2 " "$TMP/kernel")" -ge 20 ] ||
	{ not_ok "ustack: ftrace recorded too few frames ($n)"; exit 0; }
# Same FILE[+0xOFF] (ours then names the symbol), or the same raw address
# (ftrace puts two spaces before it, tracerd one).
# An IP in no mapping is left out: ftrace's find_vma() then takes the next
# mapping up and prints an offset outside it, tracerd says "(not mapped)".
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

# ustack_prog's first three frames of each event: b, a, main in its own file.
paste -d'\t' "$TMP/kernel" "$TMP/ours" | grep "^$pid1 " | cut -f2 >"$TMP/prog_frames"
want=$(printf '%s\n' b a main)
got=$(head -3 "$TMP/prog_frames" | sed -n "s|^ => $PROG\[+0x[0-9a-f]*\] \([a-z]*\)+0x[0-9a-f]*\$|\1|p")
if [ "$got" = "$want" ] && [ "$(grep -c "] b+0x" "$TMP/prog_frames")" = 20 ]; then
	ok "ustack: ustack_prog's frames name b, a, main and $PROG"
else
	not_ok "ustack: ustack_prog's frames: $(head -4 "$TMP/prog_frames" | tr '\n' '|')"
fi
