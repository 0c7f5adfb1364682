#!/usr/bin/env bash
# Inter-event hist triggers (issue 31), bad input: each config below is the
# wakeup latency config with one line spoiled; the daemon must refuse it
# before it attaches anything, exit 78 (EX_CONFIG), its first message
# pointing at the spoiled line as FILE:LINE:COL:.
. "$(dirname "$0")/../lib.sh"
need_root latency_bad

SYNTH='Event=wakeup_latency u64 lat; pid_t pid; int prio'
WAKING='Aggregate=hist:keys=pid:ts0=common_timestamp.usecs if comm ~ "latw*"'
SWITCH='Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,next_prio) if next_comm ~ "latw*"'

# conf [SYNTH [WAKING [SWITCH]]]: the config, with those lines given.
conf() {
	cat <<EOF
[Daemon]
Output=stdout
[Synthetic]
${1:-$SYNTH}
[Selection]
Name=waking
Events=sched:sched_waking
${2:-$WAKING}
[Selection]
Name=switch
Events=sched:sched_switch
${3:-$SWITCH}
[Selection]
Name=latency
Events=synthetic:wakeup_latency
EOF
}

# bad NAME LINE: $TMP/bad.conf must be refused with exit 78, its message at LINE.
bad() {
	local rc got
	timeout -s INT 20 "$TRACERD" --config "$TMP/bad.conf" --foreground >/dev/null 2>"$TMP/bad.err"
	rc=$?
	got=$(grep -v '^libbpf: ' "$TMP/bad.err" | head -1)
	if [ "$rc" = 78 ] && [[ $got == "$TMP/bad.conf:$2:"[0-9]*": "* ]]; then ok "bad input: $1"; else
		not_ok "bad input: $1"; note "want (78): $TMP/bad.conf:$2:COL: ..."; note "got ($rc): $got"; fi
}

# The config as it is: accepted (--check-config), so that each case below
# fails for its one line.
conf >"$TMP/good.conf"
"$TRACERD" --check-config "$TMP/good.conf" >/dev/null 2>"$TMP/good.err"
rc=$?
check "the wakeup latency config itself is accepted (--check-config: $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/# /' "$TMP/good.err"

conf "" "" "${SWITCH//\$ts0/\$nosuch}" >"$TMP/bad.conf"
bad "an unknown variable (\$nosuch)" 12
conf "" "" "${SWITCH//sched.sched_waking/sched.sched_wakeup_new}" >"$TMP/bad.conf"
bad "onmatch() naming an event no selection has (sched.sched_wakeup_new)" 12
conf "$SYNTH"$'\nEvent=x u64 a; flot b' >"$TMP/bad.conf"
bad "a synthetic event field of an unknown type (flot)" 5
conf "" "" 'Aggregate=hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0:onmax($wakeup_lat).snapshot() if next_comm ~ "latw*"' >"$TMP/bad.conf"
bad ".snapshot() with no selection recording into the recorder" 12
