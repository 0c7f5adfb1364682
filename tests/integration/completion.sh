#!/usr/bin/env bash
# Bash completion (conf/bash-completion/tracerd, installed by make install):
# options from --help (a [Selection] key's too), and this kernel's event
# names after --describe, --list-events and -e, across the colon of
# "sys:event" (the line's --synthetic events too); the values of --output,
# --priority and --stack-trace.
. "$(dirname "$0")/../lib.sh"
BC=/usr/share/bash-completion/bash_completion
[ -r "$BC" ] || { not_ok "completion: $BC missing (scripts/deps.sh installs bash-completion)"; exit 0; }
mkdir -p "$TMP/bin" && ln -s "$TRACERD" "$TMP/bin/tracerd"

# complete WORDS...: the completions bash would offer for the last word.
complete_words() {
	PATH=$TMP/bin:$PATH bash --norc --noprofile -c '
		. "$1"; . "$2"; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_tracerd tracerd "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BC" conf/bash-completion/tracerd "$@"
}
got=$(complete_words tracerd --desc)
check "options: --desc completes to --describe (got: $got)" [ "$got" = --describe ]
got=$(complete_words tracerd --list | sort | paste -sd' ')
check "options: --list offers --list-classes and --list-events (got: $got)" [ "$got" = "--list-classes --list-events" ]
got=$(complete_words tracerd --describe sched:sched_swi)
check "events: sched:sched_swi completes to sched_switch (got: $got)" [ "$got" = sched_switch -o "$got" = sched:sched_switch ]
n=$(complete_words tracerd --list-events sched: | wc -l)
want=$(ls -d $TRACEFS/events/sched/*/ | wc -l)
check "events: sched: offers the $want sched events (got $n)" [ "$n" = "$want" ]
got=$(complete_words tracerd -e sched:sched_swi)
check "events: -e sched:sched_swi completes to sched_switch (got: $got)" [ "$got" = sched_switch -o "$got" = sched:sched_switch ]
got=$(complete_words tracerd -e sched:sched_process_exec --rate | sort | paste -sd' ')
check "options: --rate offers --rate-limit and --rate-limit-burst (got: $got)" [ "$got" = "--rate-limit --rate-limit-burst" ]
got=$(complete_words tracerd -e sched:sched_process_exec --aggregate-i)
check "options: --aggregate-i completes to --aggregate-interval-sec (got: $got)" [ "$got" = --aggregate-interval-sec ]
got=$(complete_words tracerd -e sched:sched_process_exec --output s | sort | paste -sd' ')
check "values: --output s offers stdout and store (got: $got)" [ "$got" = "stdout store" ]
got=$(complete_words tracerd -e sched:sched_switch --stack-trace '' | sort | paste -sd' ')
check "values: --stack-trace offers no, kernel, user and both (got: $got)" [ "$got" = "both kernel no user" ]
got=$(complete_words tracerd --synth)
check "options: --synth completes to --synthetic (got: $got)" [ "$got" = --synthetic ]
got=$(complete_words tracerd --synthetic '')
check "values: --synthetic offers nothing, it takes a definition (got: $got)" [ -z "$got" ]
got=$(complete_words tracerd --synthetic "'wakeup_latency u64 lat; pid_t pid'" -e synthetic:wak)
check "events: the line's --synthetic event completes (got: $got)" [ "$got" = wakeup_latency -o "$got" = synthetic:wakeup_latency ]
got=$(complete_words tracerd --config conf/tracerd.c)
check "files: --config completes a path (got: $got)" [ "$got" = conf/tracerd.conf ]
