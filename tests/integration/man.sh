#!/usr/bin/env bash
# The man pages (docs/man, built into $BUILD/man by make): they render
# without a warning, tracerd.conf(5) has every key of the config table with
# its default, tracerd(8) every option of --help in the same words, every
# exit status and every signal tracerd handles; make install puts them where
# man finds them. And --version names the libraries and kernel it runs with.
. "$(dirname "$0")/../lib.sh"
B=${BUILD:-build}
GEN=$B/docs/man-keys
P8=$B/man/tracerd.8
P5=$B/man/tracerd.conf.5
for f in "$GEN" "$P8" "$P5"; do
	[ -e "$f" ] || { not_ok "man: $f missing (make builds it)"; exit 0; }
done
command -v man >/dev/null || { not_ok "man: no man command (scripts/deps.sh installs man-db)"; exit 0; }

# The page as text, one paragraph line per line (no wrapping), ASCII.
render() { LC_ALL=C MANWIDTH=1000 man -l "$1" 2>/dev/null | col -bx; }

for p in "$P8" "$P5"; do
	w=$(LC_ALL=C MANROFFSEQ= MAN_KEEP_STDERR=1 man --warnings -l "$p" 2>&1 >/dev/null)
	check "render: man --warnings -l $(basename "$p") prints no warning${w:+ (got: $w)}" [ -z "$w" ]
done

# keys_missing PAGE: every key of the table (man-keys --dump, not a list
# kept here) with its default, under its section's heading; prints what is
# missing or wrong, fails if anything is.
keys_missing() {
	local text sec key def want got bad=0
	text=$(render "$1")
	while IFS=$'\t' read -r sec key def; do
		case $def in
		-) want="Default: none; required." ;;
		"") want="Default: empty." ;;
		*) want="Default: $def." ;;
		esac
		# The entry's "Default:" line, in [SEC] SECTION, before the next key.
		got=$(awk -v head="[${sec^^}] SECTION" -v key="$key=" '
			/^[^ ]/ { insec = ($0 == head); found = 0; next }
			insec && /^       [^ ]/ { found = (index($0, "       " key) == 1); next }
			found && /^ +Default: / { sub(/^ +/, ""); print; exit }' <<<"$text")
		if [ "$got" != "$want" ]; then
			echo "$sec/$key: want '$want', got '${got:-no entry}'"
			bad=1
		fi
	done < <("$GEN" --dump)
	return $bad
}
# A key without a default is one the parser requires (no default: it stays
# unset), and the page says "Default: none; required." for it: its
# description must say required too. Unit= had no default, and the page
# called it required.
unsaid=
for k in $("$GEN" --dump | awk -F'\t' '$3 == "-" { print $2 }'); do
	# the entry's first line, \fBKey=\fP\fItype\fP, then its description
	awk -v head="\\\\fB$k=\\\\fP\\\\fI" 'index($0, head) == 1 { getline; print; exit }' "$P5" |
		grep -q "required" || unsaid+=" $k"
done
check "keys: every key without a default says it is required${unsaid:+ (not:$unsaid)}" [ -z "$unsaid" ]
n=$("$GEN" --dump | wc -l)
miss=$(keys_missing "$P5")
check "keys: all $n keys of the table are in tracerd.conf(5) with their defaults${miss:+ ($miss)}" [ -z "$miss" ]

# The check can fail: the page without its last key's entry heading.
last=$("$GEN" --dump | tail -n1 | cut -f2)
sed "/^\\\\fB$last=\\\\fP/d" "$P5" >"$TMP/dropped.5"
if ! cmp -s "$P5" "$TMP/dropped.5" && ! keys_missing "$TMP/dropped.5" >/dev/null; then
	ok "keys: the check notices a page without $last="
else
	not_ok "keys: the check does not notice a page without $last="
fi

# Options: each line of --help (continuation lines joined) appears in
# tracerd(8), option and description, word for word.
text8=$(render "$P8" | tr -s ' \t' ' ')
"$TRACERD" --help | awk '
	/^ +-/ { if (line) print line; line = $0; next }
	match($0, /^ +[^ -]/) && RLENGTH > 20 && line { sub(/^ +/, " "); line = line $0; next }
	{ if (line) print line; line = "" }
	END { if (line) print line }' >"$TMP/help"
nopt=0
while read -r line; do
	# "-c --config FILE   text", "--check-config [FILE] text", "--foreground   text"
	[[ $line =~ ^(-[a-z]\ )?(--[a-z-]+)(\ [^ ]+)?\ +(.*)$ ]] || { not_ok "options: cannot read --help line '$line'"; continue; }
	opt=${BASH_REMATCH[2]} desc=$(tr -s ' ' <<<"${BASH_REMATCH[4]}")
	nopt=$((nopt + 1))
	grep -qF -- "$opt" <<<"$text8" || not_ok "options: $opt is not in tracerd(8)"
	grep -qF -- "$desc" <<<"$text8" || not_ok "options: $opt's help text '$desc' is not in tracerd(8)"
done <"$TMP/help"
check "options: the $nopt options of --help read" [ "$nopt" -ge 8 ]

# Exit statuses: the EXIT_ constants of daemon/ and the numbers main.c
# returns, each an entry of EXIT STATUS.
statuses=$( (grep -rhoE '#define EXIT_[A-Z_]+ +[0-9]+' daemon/ | awk '{print $3}'
	grep -hoE 'return [0-9]+;' daemon/main.c | tr -dc '0-9\n') | sort -nu)
documented=$(render "$P8" | awk '/^[^ ]/ { in_sec = ($0 == "EXIT STATUS"); next }
	in_sec && /^       [0-9]+ / { print $1 }' | sort -nu)
for s in $statuses; do
	grep -qx "$s" <<<"$documented" || not_ok "exit status $s is not in tracerd(8)'s EXIT STATUS"
done
check "exit status: $(echo $statuses) all documented (got: $(echo $documented))" \
	bash -c 'for s in $1; do grep -qx "$s" <<<"$2" || exit 1; done' _ "$statuses" "$documented"

# Signals: what the event loop handles, each in SIGNALS.
signals=$(grep -hoE 'sd_event_add_signal\([^)]*SIG[A-Z0-9]+' daemon/*.c | grep -oE 'SIG[A-Z0-9]+$' | sort -u)
insig=$(render "$P8" | awk '/^[^ ]/ { in_sec = ($0 == "SIGNALS"); next } in_sec')
for s in $signals; do
	grep -qw "$s" <<<"$insig" || not_ok "signal $s is not in tracerd(8)'s SIGNALS"
done
check "signals: $(echo $signals) documented" [ -n "$signals" ]

# make install puts them where man looks; make uninstall takes them away.
root=$TMP/root
if make -s --no-print-directory BUILD="$B" DESTDIR="$root" install >"$TMP/install.log" 2>&1; then
	M=$root/usr/local/share/man
	p=$(man -M "$M" -w 8 tracerd 2>/dev/null)
	check "install: man -M finds tracerd(8) at $p" [ "$p" = "$M/man8/tracerd.8" ]
	p=$(man -M "$M" -w 5 tracerd.conf 2>/dev/null)
	check "install: man -M finds tracerd.conf(5) at $p" [ "$p" = "$M/man5/tracerd.conf.5" ]
	check "install: the installed tracerd.conf(5) is the generated one" cmp -s "$M/man5/tracerd.conf.5" "$P5"
	w=$(LC_ALL=C MANROFFSEQ= MAN_KEEP_STDERR=1 man --warnings -M "$M" tracerd 2>&1 >/dev/null)
	check "install: man tracerd renders without a warning${w:+ (got: $w)}" [ -z "$w" ]
	make -s --no-print-directory BUILD="$B" DESTDIR="$root" uninstall >>"$TMP/install.log" 2>&1
	check "uninstall: the man pages are gone" [ ! -e "$M/man8/tracerd.8" -a ! -e "$M/man5/tracerd.conf.5" ]
else
	not_ok "install: make install DESTDIR=$root failed: $(tail -3 "$TMP/install.log")"
fi

# --version: tracerd's, then the libraries' and the kernel's, one line each.
matches() { [[ $1 == $2 ]]; }	# matches STRING PATTERN (a glob)
mapfile -t v < <("$TRACERD" --version)
version=$(sed -n 's/^VERSION := *//p' Makefile)
check "version: 5 lines (got ${#v[@]})" [ "${#v[@]}" = 5 ]
check "version: '${v[0]}' is tracerd $version" [ "${v[0]}" = "tracerd $version" ]
# The libbpf that is installed, from the package or else the .so's name.
bpf=$(dpkg-query -W -f='${Version}' libbpf1 2>/dev/null | sed 's/^[0-9]*://; s/^\([0-9]*\.[0-9]*\).*/\1/')
[ -n "$bpf" ] || bpf=$(ldd "$TRACERD" | awk '/libbpf\.so/ {print $3}' | xargs readlink -f |
	sed -n 's/.*libbpf\.so\.\([0-9]*\.[0-9]*\).*/\1/p')
check "version: '${v[1]}' is the running libbpf $bpf" matches "${v[1]}" "libbpf $bpf "*
sd=$(pkg-config --modversion libsystemd)
check "version: '${v[2]}' is the libsystemd built with, $sd" matches "${v[2]}" "libsystemd $sd "*"built with"*
te=$(pkg-config --modversion libtraceevent)
check "version: '${v[3]}' is the libtraceevent built with, $te" matches "${v[3]}" "libtraceevent $te "*"built with"*
check "version: '${v[4]}' is the running kernel $(uname -r)" matches "${v[4]}" "kernel $(uname -r) "*
