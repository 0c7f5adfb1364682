#!/usr/bin/env bash
# One program per class, however many events: selecting all 45 events of
# xfs_da_class loads as many BPF programs as selecting one (emitted, with a
# filter or without, or the shared class program). Every event of
# the class that a directory workload on a loop-mounted xfs fires reaches
# tracerd, exactly as often as a tracefs instance sees it.
. "$(dirname "$0")/../lib.sh"
need_root class_sharing

CLASS=xfs_da_class
events=$("$TRACERD" --list-classes 'xfs:*' 2>/dev/null | grep "^$CLASS " | cut -d: -f2- | sed 's/^ *//')
n=$(wc -w <<<"$events")
note "$CLASS: $n events"
check "$CLASS has at least 10 events" [ "$n" -ge 10 ]

progs_for() { # CONFIG-EVENTS [FILTER] -> programs held by tracerd
	printf '[Selection]\nName=xfs\nEvents=%s\n%s\n' "$1" "${2:+Filter=$2}" >"$TMP/c.conf"
	# In $(...): lib.sh's on_exit would not reach the parent, so stop it here.
	start_tracerd "$TMP/c.conf" "$TMP/o" || { stop_tracerd; return 1; }
	bpf_progs_of "$TRACERD_PID"
	stop_tracerd
}
one=$(progs_for "$(cut -d' ' -f1 <<<"$events")")
all=$(progs_for "$events")
note "BPF programs with 1 event: $one, with $n events: $all"
check "same programs for 1 and $n events of $CLASS" [ "${one:-0}" -ge 1 -a "$one" = "$all" ]
check "without a filter, one emitted program for the class" \
	grep -q "Events= (no Filter=) compiled to BPF: 1 program(s) for $n events" "$TMP/o.err"
# The shared class program (TRACERD_TEST_INTERPRET) is as many programs:
# it takes the emitted one's place (it is loaded only when some event runs
# it; the accept program is there either way).
cls=$(TRACERD_TEST_INTERPRET=xfs progs_for "$events")
note "BPF programs with $n events in the shared class program: $cls"
check "the shared class program for $n events: as many programs ($cls)" [ "$cls" = "$all" ]
# With a Filter=, one emitted program for the class, not one per event.
filt="ino > 1 && namelen < 200 && name ~ \"file*\""
fall=$(progs_for "$events" "$filt")
note "BPF programs with $n events and Filter=$filt: $fall"
check "the class's $n events with a filter: one emitted program too" [ "$fall" = "$all" ]
check "the filter was emitted, not interpreted" grep -q "Filter= compiled to BPF: 1 program(s) for $n events" "$TMP/o.err"

mount_image xfs 320M || { not_ok "xfs image"; exit 0; }
make_instance "tracerd-class-$$" || { not_ok "tracefs instance"; exit 0; }
for e in $events; do echo 1 >"$INSTANCE/events/xfs/${e#xfs:}/enable"; done
on_exit "echo 0 > $INSTANCE/events/enable"
printf '[Daemon]\nRingBufferSize=64M\n[Selection]\nName=xfs\nEvents=%s\n' "$events" >"$TMP/c.conf"
start_tracerd "$TMP/c.conf" "$TMP/out" || { not_ok "tracerd attaches $n events"; exit 0; }

# Grow a directory through shortform, block, leaf and node formats, then
# look up, rename over, and shrink it back.
d=$TMP/mnt/dir
mkdir "$d"
for i in $(seq 1 3000); do : >"$d/file-with-a-long-name-$i"; done
ls -l "$d" >/dev/null
for i in $(seq 1 200); do mv "$d/file-with-a-long-name-$i" "$d/file-with-a-long-name-$((i + 1000))"; done
rm -f "$d"/*
rmdir "$d"
sync
sleep 0.5
echo 0 >"$INSTANCE/events/enable"
stop_tracerd

grep -o ' xfs_[a-z0-9_]*: ' "$INSTANCE/trace" | sort | uniq -c | awk '{print $2, $1}' | tr -d : | sort >"$TMP/kernel"
grep -o ' xfs_[a-z0-9_]*: ' "$TMP/out" | sort | uniq -c | awk '{print $2, $1}' | tr -d : | sort >"$TMP/tracerd"
fired=$(wc -l <"$TMP/kernel")
note "events of $CLASS fired: $fired; per event (kernel / tracerd):"
join -a1 -a2 -e0 -o 0,1.2,2.2 "$TMP/kernel" "$TMP/tracerd" | sed 's/^/#   /'
check "at least 10 events of $CLASS fired" [ "$fired" -ge 10 ]
check "tracerd saw every fired event exactly as often as the kernel" diff "$TMP/kernel" "$TMP/tracerd"
check "no lost records" grep -q "xfs: .* 0 lost" "$TMP/out.err"
