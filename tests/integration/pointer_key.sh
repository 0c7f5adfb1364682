#!/usr/bin/env bash
# Pointer hashes cannot be reversed (issue 19.1). tracerd hashes %p with a
# secret random key per boot in /run/tracerd/pointer-key (0600), not with
# the world-readable boot id. kmem:kfree goes to stdout (Output=stdout) and, from a
# second selection, to the store; then:
#  - the key file is 0600 in a 0700 directory, and nobody cannot read it;
#  - `--read` as root on this boot prints the hashes stdout printed, with no
#    warning; with the key absent it warns once and prints other hashes;
#  - the issue's brute force, run as nobody with every key nobody can read
#    (the boot id and the machine id, two ways each, and the zero key),
#    reverses none of the pointers of stdout's and --read's hashes, while the
#    same search with the real key reverses every one of them (so the search
#    covers the pointers and can fail). The truth is `--read --raw-pointers`.
. "$(dirname "$0")/../lib.sh"
need_root pointer_key
BRUTE=$PWD/$BUILD/tests/tools/ptr_brute
KEYDIR=/run/tracerd
KEY=$KEYDIR/pointer-key
[ -e "$KEYDIR" ] || on_exit "rm -rf $KEYDIR"	# made by this test: gone after it
chmod 755 "$TMP"
mkdir -m 755 "$TMP/pub"		# what nobody may read: the hashes, the truth

cat >"$TMP/conf" <<EOF
[Daemon]
Output=stdout
FlushIntervalMSec=50
StatsIntervalSec=0
[Store]
Directory=$TMP/store
[Selection]
Name=kfree-store
Events=kmem:kfree
Output=store
[Selection]
Name=kfree-out
Events=kmem:kfree
EOF
start_tracerd_store "$TMP/conf" "$TMP/out" || { not_ok "tracerd starts"; exit 0; }
sleep 0.3	# both selections attached: the workload's calls go to both
for i in 1 2 3; do find /usr/share/doc -type f -name '*.gz' | head -300 | xargs cat >/dev/null; done
sleep 0.5
stop_tracerd
ok "tracerd ran with kmem:kfree to stdout and to the store"

# The key file: this boot's, 0600, root's (the directory's owner), unreadable
# to nobody.
check "the key file $KEY is mode 0600, owned by root, in a 0700 directory" \
	[ "$(stat -c '%a %u' "$KEY" 2>/dev/null)" = "600 0" -a "$(stat -c %a "$KEYDIR" 2>/dev/null)" = 700 ]
check "the key file names this boot" grep -qx "boot_id=$(cat /proc/sys/kernel/random/boot_id)" "$KEY"
fails() { ! "$@"; }
check "nobody cannot read the key file" fails setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$KEY" 2>/dev/null
check "tracerd said nothing about the key" fails grep -q "pointer key" "$TMP/out.err"

# The distinct pointer hashes of kfree lines. Both selections see the same
# kfree calls, but not exactly the same ones (they attach and detach one
# after the other): compare the share of --read's hashes that stdout has
# (with another key, none).
hashes() { kfree_ptrs "$1" | grep -v '^0*$' | sort -u; }
common() { echo $((100 * $(comm -12 "$1" "$2" | wc -l) / ($(wc -l <"$1") + 1))); }
hashes "$TMP/out" >"$TMP/out.h"
"$TRACERD" --read "$TMP/store" >"$TMP/read" 2>"$TMP/read.err"
hashes "$TMP/read" >"$TMP/read.h"
n=$(wc -l <"$TMP/read.h")
# Under load one output may lose records the other kept (each counts its
# own): the share is taken from the side that lost more.
pct=$(common "$TMP/read.h" "$TMP/out.h") rpct=$(common "$TMP/out.h" "$TMP/read.h")
[ "$rpct" -gt "$pct" ] && pct=$rpct
note "stdout: $(wc -l <"$TMP/out.h") distinct pointer hashes, --read: $n, $pct% in both; e.g. $(grep -m1 'ptr=[0-9a-f]*[1-9a-f]' "$TMP/read")"
note "$(grep -E 'kfree-(out|store).*delivered=' "$TMP/out.err" | xargs)"
# (It may say what the ring buffer lost: the store marks it.)
check "--read as root on this boot: no warning about the key" bash -c "! grep -q 'pointer' '$TMP/read.err'"
check "--read as root on this boot: the hashes stdout printed ($pct% of $n)" [ "$n" -ge 50 -a "$pct" -ge 90 ]

TRACERD_POINTER_KEY=$TMP/none/pointer-key "$TRACERD" --read "$TMP/store" >"$TMP/other" 2>"$TMP/other.err"
hashes "$TMP/other" >"$TMP/other.h"
note "key absent: $(cat "$TMP/other.err")"
check "--read without the key: one warning on stderr" \
	[ "$(grep -c 'pointers are hashed with a key of this run only' "$TMP/other.err")" = 1 ]
other=$(comm -12 "$TMP/other.h" "$TMP/out.h" | wc -l)
# 32-bit hashes of another key meet stdout's by chance: 1 in 2^32 per pair.
check "--read without the key: other hashes ($other of $(wc -l <"$TMP/other.h") in stdout, by chance)" \
	[ "$(wc -l <"$TMP/other.h")" -ge "$n" -a "$((other * 100))" -lt "$n" ]

# The brute force over every hash nobody could see: stdout's, root's --read,
# nobody's own --read of a copy of the store.
cp -r "$TMP/store" "$TMP/pub/store" && chmod -R a+rX "$TMP/pub/store"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$TRACERD" --read "$TMP/pub/store" >"$TMP/nobody" 2>"$TMP/nobody.err"
check "--read as nobody: the key is unreadable, and it says so" \
	grep -q "cannot be used (Permission denied): pointers are hashed with a key of this run only" "$TMP/nobody.err"
"$TRACERD" --read --raw-pointers "$TMP/store" >"$TMP/raw"
# The attacker's input: every hash, by where it was seen; beside those of
# --read, the truth (the same store's lines in the same order, raw), which
# only scores the result.
pairs() { paste -d' ' <(kfree_ptrs "$2") <(kfree_ptrs "$TMP/raw") | sed "s/^/$1 /"; }
{ kfree_ptrs "$TMP/out" | sed 's/^/stdout /'; pairs read "$TMP/read"; } >"$TMP/root.pairs"
{ cat "$TMP/root.pairs"; pairs read-as-nobody "$TMP/nobody"; } >"$TMP/pub/hashes"
t=$(date +%s%N)
setpriv --reuid=nobody --regid=nogroup --clear-groups "$BRUTE" zero \
	uuid:/proc/sys/kernel/random/boot_id uuid-le:/proc/sys/kernel/random/boot_id \
	uuid:/etc/machine-id uuid-le:/etc/machine-id <"$TMP/pub/hashes" >"$TMP/brute" 2>&1
note "brute force as nobody ($((($(date +%s%N) - t) / 1000000)) ms):"
sed 's/^/#   /' "$TMP/brute"
# The control: stdout's and root's --read's hashes, made with the secret key.
"$BRUTE" keyfile:"$KEY" <"$TMP/root.pairs" >"$TMP/control" 2>&1
sed 's/^/#   control: /' "$TMP/control"
check "brute force as nobody, 5 keys: no pointer reversed, candidates by chance only" \
	brute_verdict "$TMP/brute" unbroken 5
check "the same search with the secret key: every pointer reversed" brute_verdict "$TMP/control" broken 1
