#!/usr/bin/env bash
# Syscall string arguments (SyscallStrings=): openat on known paths, and on
# an address no process maps. The exact paths after their pointers on stdout,
# in the store (--read, --json, --read --filter); Filter=filename ~ "/etc/*"
# keeps exactly the /etc ones; the unmapped one shows as unreadable, never as
# a path, and is counted; SyscallStrings=no shows the pointers alone. The
# journal's TRACE_FILENAME_STR= is checked by systemd.sh (a real journald).
. "$(dirname "$0")/../lib.sh"
need_root syscall_strings

OPEN=$PWD/${BUILD:-build}/tests/tools/open_paths
# A copy with a comm of this run's own, for the filters to pick its records.
COMM=tss-$$
cp "$OPEN" "$TMP/$COMM"
RUN_DIR=$TMP/d$RANDOM
mkdir -p "$RUN_DIR"
PATHS=(/etc/passwd /etc/hostname "$RUN_DIR/no such file" "$RUN_DIR/q\"uote" /etc/os-release)

conf() { # conf FILE OUTPUT FILTER [SyscallStrings]
	cat >"$1" <<CONF
[Daemon]
FlushIntervalMSec=20
Output=$2
[Store]
Directory=$TMP/store
[Selection]
Name=open
Events=syscalls:sys_enter_openat
Filter=comm == "$COMM"$3
CONF
	[ -z "${4:-}" ] || echo "SyscallStrings=$4" >>"$1"
}

# The workload's openat records, the dynamic loader's first ones left out.
workload() { "$TMP/$COMM" "${PATHS[@]}" -unmapped >"$TMP/pid"; }
mine() { grep -v -e 'ld\.so\.cache' -e '/lib/' -e '/lib64/' "$@"; }

# 1. stdout: the strings after their pointers, in order.
conf "$TMP/a.conf" stdout ""
start_tracerd "$TMP/a.conf" "$TMP/a.out" || { not_ok "tracerd starts"; exit 0; }
workload
sleep 0.3
stop_tracerd
mine "$TMP/a.out" | sed -n 's/.*filename: 0x[0-9a-f]* \(.*\), flags.*/\1/p' >"$TMP/a.strs"
printf '"%s"\n' /etc/passwd /etc/hostname "$RUN_DIR/no such file" "$RUN_DIR/q\\\"uote" \
	/etc/os-release >"$TMP/want"
echo "(unreadable)" >>"$TMP/want"
note "stdout: $(mine "$TMP/a.out" | sed -n 3p)"
check "stdout: each path after its pointer, quoted and escaped; the unmapped one (unreadable)" \
	diff "$TMP/want" "$TMP/a.strs"
check "stdout: the unmapped pointer is printed, then (unreadable)" \
	grep -Eq 'filename: 0x[0-9a-f]+ \(unreadable\), flags' "$TMP/a.out"
check "summary: one unreadable string counted" \
	grep -Eq "syscalls:sys_enter_openat delivered=[0-9]+ .* unreadable=1( |$)" "$TMP/a.out.err"
check "summary: the selection's line says 1 syscall string unreadable" \
	grep -q "selection open: .*; 1 syscall strings unreadable" "$TMP/a.out.err"

# 2. Filter=filename ~ "/etc/*" keeps exactly the /etc paths.
conf "$TMP/b.conf" stdout ' && filename ~ "/etc/*"'
start_tracerd "$TMP/b.conf" "$TMP/b.out" || { not_ok "tracerd starts with a string filter"; exit 0; }
workload
sleep 0.3
stop_tracerd
sed -n 's/.*filename: 0x[0-9a-f]* "\([^"]*\)".*/\1/p' "$TMP/b.out" | grep -v ld.so.cache >"$TMP/b.strs"
printf '%s\n' /etc/passwd /etc/hostname /etc/os-release >"$TMP/b.want"
check 'Filter=filename ~ "/etc/*": exactly the three /etc paths' diff "$TMP/b.want" "$TMP/b.strs"
check "Filter=filename ~ ...: the unreadable string matches nothing" \
	bash -c "! grep -q unreadable '$TMP/b.out'"
conf "$TMP/b2.conf" stdout " && filename == \"/etc/hostname\""
start_tracerd "$TMP/b2.conf" "$TMP/b2.out" || { not_ok "tracerd starts with =="; exit 0; }
workload
sleep 0.3
stop_tracerd
check 'Filter=filename == "/etc/hostname": that one record' \
	[ "$(grep -c 'filename: 0x[0-9a-f]* "/etc/hostname"' "$TMP/b2.out")" = 1 -a "$(grep -c sys_openat "$TMP/b2.out")" = 1 ]

# 3. The store: --read as stdout showed it, --json's TRACE_FILENAME_STR,
# --read --filter on the stored strings.
conf "$TMP/c.conf" store ""
start_tracerd_store "$TMP/c.conf" "$TMP/c.out" || { not_ok "tracerd starts with the store"; exit 0; }
workload
sleep 0.3
stop_tracerd
"$TRACERD" --read "$TMP/store" >"$TMP/c.read"
mine "$TMP/c.read" | sed -n 's/.*filename: 0x[0-9a-f]* \(.*\), flags.*/\1/p' >"$TMP/c.strs"
check "--read: the stored strings, as stdout showed them" diff "$TMP/want" "$TMP/c.strs"
"$TRACERD" --read "$TMP/store" --json >"$TMP/c.json"
python3 - "$TMP/c.json" "${PATHS[@]}" <<'PY' >"$TMP/c.jcheck"
import json, sys
want = sys.argv[2:]
got, unreadable = [], 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    s = e.get("TRACE_FILENAME_STR")
    if s is not None and (s.startswith("/lib") or "ld.so" in s):
        continue
    if e.get("TRACE_FILENAME_STR_UNREADABLE") == "EFAULT" and s is None:
        unreadable += 1
    elif s is not None and e["TRACE_FILENAME"].startswith("0x"):
        got.append(s)
print("ok" if got == want and unreadable == 1 else "got %r, %d unreadable" % (got, unreadable))
PY
note "--json: $(cat "$TMP/c.jcheck")"
check "--json: TRACE_FILENAME_STR= the exact paths, beside the pointer; TRACE_FILENAME_STR_UNREADABLE=EFAULT" \
	grep -qx ok "$TMP/c.jcheck"
"$TRACERD" --read "$TMP/store" --filter 'filename ~ "/etc/*"' >"$TMP/c.filter"
sed -n 's/.*filename: 0x[0-9a-f]* "\([^"]*\)".*/\1/p' "$TMP/c.filter" | grep -v ld.so.cache >"$TMP/c.fstrs"
check '--read --filter filename ~ "/etc/*": exactly the three /etc paths' diff "$TMP/b.want" "$TMP/c.fstrs"
"$TRACERD" --read "$TMP/store" --filter "filename == \"${PATHS[2]}\"" >"$TMP/c.eq"
check "--read --filter filename == a path: that one record" \
	[ "$(grep -c sys_openat "$TMP/c.eq")" = 1 ]

# 4. SyscallStrings=no: the pointers alone, as the kernel prints them; a
# string filter is refused with the reason.
conf "$TMP/d.conf" stdout "" no
start_tracerd "$TMP/d.conf" "$TMP/d.out" || { not_ok "tracerd starts with SyscallStrings=no"; exit 0; }
workload
sleep 0.3
stop_tracerd
check "SyscallStrings=no: pointers alone" \
	bash -c "grep -q 'filename: 0x[0-9a-f]*, flags' '$TMP/d.out' && ! grep -q -e 'filename: 0x[0-9a-f]* [\"(]' '$TMP/d.out'"
check "SyscallStrings=no: nothing counted unreadable" \
	grep -Eq "syscalls:sys_enter_openat delivered=[0-9]+ .* unreadable=0( |$)" "$TMP/d.out.err"
conf "$TMP/e.conf" stdout ' && filename ~ "/etc/*"' no
"$TRACERD" --config "$TMP/e.conf" --check-config >"$TMP/e.out" 2>&1
check "SyscallStrings=no: a string filter on filename is refused, saying why" \
	grep -q "filename is a user string that this selection does not read (SyscallStrings=no, or Aggregate=)" "$TMP/e.out"
