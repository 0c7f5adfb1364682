#!/usr/bin/env bash
# One writer per store Directory=: two tracerd processes on one directory
# would delete each other's open files by MaxUse= and lose records unseen.
# A second one is refused at start (exit 78, naming the directory and the
# holder's pid) and on reload (the running store stays and keeps every
# record); a reload that keeps the directory does not trip over its own
# lock; --read takes no lock and ignores the lock file.
. "$(dirname "$0")/../lib.sh"
need_root store_lock
EVENT=syscalls:sys_enter_sysfs
COMM=fire$$
fire_as "$COMM"
DIR=$(mktemp -d /dev/shm/tracerd-store-lock.XXXXXX)
on_exit "rm -rf $DIR"

# conf NAME DIR [STORE-LINES]: the store takes the selection's records; the
# daemon's messages (the reload results) go to stderr.
conf() {
	printf '[Daemon]\nOutput=stdout\nFlushIntervalMSec=50\nStatsIntervalSec=0\n[Store]\nDirectory=%s\n%b[Selection]\nName=st\nEvents=%s\nFilter=comm == "%s"\nOutput=store\n' \
		"$2" "${3:-}" "$EVENT" "$COMM" >"$TMP/$1.conf"
}
# start NAME: tracerd on NAME.conf, stderr to NAME.err; sets PID_<NAME>.
start() {
	local r
	run_tracerd "$TMP/$1" --config "$TMP/$1.conf"
	r=$?
	eval "PID_$1=$TRACERD_PID"
	return $r
}
# reload NAME N: SIGHUP, then waits for the Nth reload's result on stderr.
reload() {
	local i pid
	pid=$(eval echo "\$PID_$1")
	kill -HUP "$pid"
	for ((i = 0; i < 200; i++)); do
		[ "$(grep -cE 'reloaded |reload failed' "$TMP/$1.err")" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
lines() { "$TRACERD" --read "$1" 2>/dev/null | grep -c 'sys_sysfs(option: 3'; }

conf a "$DIR/one"
conf b "$DIR/one" 'MaxUse=1G\n'
if ! start a; then
	not_ok "tracerd starts with Output=store"
	exit 0
fi
"$FIRE" 1000 >/dev/null
check "the lock file names the writer's pid" [ "$(cat "$DIR/one/.lock")" = "$PID_a" ]

# --- a second writer at start
timeout 20 "$TRACERD" --config "$TMP/b.conf" >"$TMP/b.out" 2>"$TMP/b.err"
rc=$?
note "second writer: exit $rc: $(head -1 "$TMP/b.err")"
check "a second tracerd on the directory exits 78 at start ($rc)" [ "$rc" = 78 ]
check "it names the directory and the holder's pid" \
	grep -q "cannot open the store output: $DIR/one is written by another tracerd (pid $PID_a" "$TMP/b.err"
check "it attached nothing" [ "$(grep -c attached "$TMP/b.err")" = 0 ]

# --- --read beside the writer: no lock, the lock file is not a store file
# (the records reach the file within FlushIntervalMSec=)
for ((i = 0; i < 100; i++)); do [ "$(lines "$DIR/one")" -ge 1000 ] && break; sleep 0.05; done
"$TRACERD" --read "$DIR/one" >"$TMP/read.txt" 2>"$TMP/read.err"
rc=$?
check "--read beside the writer exits 0 and says nothing ($rc: $(head -1 "$TMP/read.err"))" \
	[ "$rc" = 0 -a ! -s "$TMP/read.err" ]
check "--read sees the writer's 1000 records" [ "$(grep -c 'sys_sysfs(option: 3' "$TMP/read.txt")" = 1000 ]

# --- a reload that keeps the directory, with other [Store] settings: the
# new store opens beside the running one, on the same lock
conf a "$DIR/one" 'MaxUse=1G\n'
check "a reload that keeps the directory completes" reload a 1
check "it is not refused by its own lock" grep -q "reloaded " "$TMP/a.err"
check "and fails nothing" [ "$(grep -c 'reload failed' "$TMP/a.err")" = 0 ]
"$FIRE" 1000 >/dev/null

# --- a reload onto a directory another tracerd writes into
conf c "$DIR/two"
sed -i "s/^Filter=.*/Filter=comm == \"none$$\"/" "$TMP/c.conf"	# records of its own: none
if start c; then
	conf a "$DIR/two"
	check "a reload onto another writer's directory completes" reload a 2
	check "it fails, naming the directory and the holder's pid" \
		grep -q "reload failed, keeping the running configuration: $TMP/a.conf: cannot open the store output: $DIR/two is written by another tracerd (pid $PID_c" "$TMP/a.err"
	"$FIRE" 1000 >/dev/null
	check "the other writer still holds its lock file" [ "$(cat "$DIR/two/.lock")" = "$PID_c" ]
	kill -INT "$PID_c"
	wait "$PID_c"
	check "the other writer got none of the first one's records" [ "$(lines "$DIR/two")" = 0 ]
else
	not_ok "a second tracerd on another directory starts"
fi
sleep 0.2
kill -INT "$PID_a"
wait "$PID_a"
check "the first writer exits 0 ($?)" [ $? = 0 ]
n=$(lines "$DIR/one")
check "its store kept all 3000 records, before and after both reloads ($n)" [ "$n" = 3000 ]
# Once its holder is gone, the directory is free again.
conf d "$DIR/one"
if start d; then
	ok "a new tracerd takes the directory once the writer stopped"
	check "the lock file names it" [ "$(cat "$DIR/one/.lock")" = "$PID_d" ]
	kill -INT "$PID_d"
	wait "$PID_d"
else
	not_ok "a new tracerd takes the directory once the writer stopped"
fi
