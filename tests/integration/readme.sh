#!/usr/bin/env bash
# The README against the program, as a newcomer would take it: at most 200
# lines; every `build/tracerd` command it shows uses options that --help
# lists, and runs as written where that needs no workload (--list-events,
# --describe, --check-config), or is checked by --check-config with the same
# selection options (or -c FILE) where it would trace; every `make` target
# it names exists; every file it names is there. And no document names a
# machine's own paths (a developer's build folder, a home directory).
. "$(dirname "$0")/../lib.sh"
need_root readme
README=${README:-README.md}

n=$(wc -l <"$README")
check "README: $n lines, at most 200" [ "$n" -le 200 ]

# The commands of the README's code blocks, a line each.
awk '/^```/ { inblock = !inblock; next } inblock' "$README" >"$TMP/blocks"
grep -E '^(build/tracerd|make) ' "$TMP/blocks" >"$TMP/cmds"
check "README: shows tracerd commands ($(grep -c '^build/tracerd' "$TMP/cmds"))" \
	[ "$(grep -c '^build/tracerd' "$TMP/cmds")" -ge 5 ]

"$TRACERD" --help >"$TMP/help"
while read -r line; do
	eval "set -- $line"	# the shell's own word splitting, quotes and all
	prog=$1; shift
	case $prog in
	make)
		for target; do
			[[ $target == *=* ]] && continue
			check "README: make $target is a target of the Makefile" \
				grep -qE "^$target:" Makefile
		done
		continue ;;
	esac
	bad=
	for a; do
		[[ $a == --* ]] || continue
		grep -qE -- "(^| )${a%%=*}( |\$)" "$TMP/help" || bad+=" $a"
	done
	check "README: options of '$line' are in --help${bad:+ (not:$bad)}" [ -z "$bad" ]
	case $1 in
	--list-events|--list-classes|--describe|--check-config)
		out=$("$TRACERD" "$@" 2>&1); rc=$?
		check "README: '$line' exits 0 with output (rc $rc)" [ "$rc" = 0 ] && [ -n "$out" ] ;;
	--read)
		# The store is the machine's; an empty one reads as such.
		mkdir -p "$TMP/store"
		shift 2
		out=$("$TRACERD" --read "$TMP/store" "$@" 2>&1); rc=$?
		check "README: '$line' reads an empty store, exit 0 (rc $rc${out:+: $out})" [ "$rc" = 0 ] ;;
	*)
		# It would trace: its selection is checked instead.
		args=()
		for a; do [ "$a" = -f ] || args+=("$a"); done
		# (a config file's selections: that file is what is OK)
		want="command line: OK"
		for ((i = 0; i < ${#args[@]}; i++)); do
			case ${args[i]} in -c|--config) want="${args[i + 1]:-}: OK" ;; esac
		done
		out=$("$TRACERD" --check-config "${args[@]}" 2>&1); rc=$?
		check "README: '$line' passes --check-config (rc $rc)" \
			[ "$rc" = 0 ] && grep -qF "$want" <<<"$out" ;;
	esac
done <"$TMP/cmds"

# The files it names.
missing=
for f in $(grep -oE '(docs|bench|conf|scripts)/[A-Za-z0-9_./-]+\.(md|conf|sh|png)' "$README" | sort -u); do
	[ -e "$f" ] || missing+=" $f"
done
check "README: the files it names exist${missing:+ (missing:$missing)}" [ -z "$missing" ]

# No machine's own paths in the documents.
# (/proc/PID/root/ is the kernel's, not a home.)
paths=$(grep -nE "/work/|/home/[a-z]|(^|[ \`'\"(=])/root/[A-Za-z0-9._-]|/Users/" \
	README.md docs/*.md docs/man/* bench/README.md)
check "docs: no machine paths${paths:+ ($paths)}" [ -z "$paths" ]

# The checks can fail: a README with an option --help does not know.
[ -n "${README_SELF_TEST:-}" ] && exit 0
sed 's|--describe sched:sched_switch|--descibe sched:sched_switch|' "$README" >"$TMP/bad.md"
if ! cmp -s "$README" "$TMP/bad.md" &&
	README_SELF_TEST=1 README="$TMP/bad.md" bash "$0" 2>&1 | grep -q "^not ok - README: options of"; then
	ok "README: the check notices an option --help does not list"
else
	not_ok "README: the check does not notice an option --help does not list"
fi
