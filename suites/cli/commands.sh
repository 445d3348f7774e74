#!/bin/sh
# The command table (src/main.c): `epgate help` lists every command of
# the table, the internal ones in their own section; `epgate help CMD` is
# `epgate CMD --help`; an unknown command exits 99 and names it. The
# checker of the listing is shown to catch a listing with a command left
# out.
. "${EG_SRCDIR:-.}/suites/lib.sh"

# The table as the source declares it: "name internal" per entry.
awk '/eg__cmds\[\] = \{/ { on = 1; next }
     on && /^};/ { on = 0 }
     on { e = e $0 }
     on && /\},[ \t]*$/ {
	n = e; sub(/^[^"]*"/, "", n); sub(/".*/, "", n)
	i = e; sub(/\},[ \t]*$/, "", i); sub(/.*,[ \t]*/, "", i)
	print n, i; e = "" }' "$EG_SRCDIR/src/main.c" >"$EG_TMP/table"
ncmd=$(wc -l <"$EG_TMP/table")
if [ "$ncmd" -ge 10 ] && grep -q '^bench-rank 1$' "$EG_TMP/table" &&
	grep -q '^bench 0$' "$EG_TMP/table"; then
	eg_ok "src/main.c's table has $ncmd commands"
else
	eg_not_ok "src/main.c's table read back ($ncmd entries)"
	sed 's/^/# /' "$EG_TMP/table"
fi

# listed HELP: every command of the table once, in its section.
listed() {
	awk -v table="$EG_TMP/table" '
	BEGIN { while ((getline l < table) > 0) { split(l, f, " "); want[f[1]] = f[2]; n++ } }
	/^internal commands/ { sect = 1; next }
	/^  [a-z0-9-]+ / { split($0, f, " "); seen[f[1]]++; where[f[1]] = sect }
	END {
		bad = 0
		for (c in want) {
			if (seen[c] != 1) { print "# " c ": listed " seen[c] + 0 " times"; bad = 1 }
			else if (where[c] != want[c]) { print "# " c ": in the wrong section"; bad = 1 }
		}
		for (c in seen) if (!(c in want)) { print "# " c ": not in the table"; bad = 1 }
		exit bad
	}' "$1"
}

"$EG_EPGATE" help >"$EG_TMP/help" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && listed "$EG_TMP/help"; then
	eg_ok "epgate help lists every command of the table, internal ones apart"
else
	eg_not_ok "epgate help lists every command of the table (exit $rc)"
	sed 's/^/# /' "$EG_TMP/help"
fi
# planted: a listing without one command, and one with a command moved
# into the wrong section, must fail the checker
grep -v '^  launch ' "$EG_TMP/help" >"$EG_TMP/help.missing"
sed 's/^internal commands.*/&\n  gate         moved/; /^  gate  *judges/d' \
	"$EG_TMP/help" >"$EG_TMP/help.moved"
if ! listed "$EG_TMP/help.missing" >/dev/null &&
	! listed "$EG_TMP/help.moved" >/dev/null; then
	eg_ok "planted: a command left out of the listing, or in the wrong section, is caught"
else
	eg_not_ok "planted: a command left out of the listing is caught"
fi

# help CMD is CMD --help, for every command of the table
while read -r cmd internal; do
	"$EG_EPGATE" help "$cmd" >"$EG_TMP/h1" 2>&1
	r1=$?
	"$EG_EPGATE" "$cmd" --help >"$EG_TMP/h2" 2>&1
	r2=$?
	if [ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && cmp -s "$EG_TMP/h1" "$EG_TMP/h2" &&
		grep -q '^usage: epgate' "$EG_TMP/h1"; then
		eg_ok "epgate help $cmd = epgate $cmd --help (internal: $internal)"
	else
		eg_not_ok "epgate help $cmd = epgate $cmd --help (exit $r1, $r2)"
	fi
done <"$EG_TMP/table"

# unknown commands: 99, named
for args in "frobnicate" "help frobnicate"; do
	# shellcheck disable=SC2086
	"$EG_EPGATE" $args >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 99 ] && grep -q 'unknown command "frobnicate"' "$EG_TMP/out"; then
		eg_ok "epgate $args: exit 99, names it"
	else
		eg_not_ok "epgate $args: exit $rc"
		sed 's/^/# /' "$EG_TMP/out"
	fi
done
"$EG_EPGATE" >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q '^usage: epgate' "$EG_TMP/out"; then
	eg_ok "epgate without a command: exit 99 and the usage"
else
	eg_not_ok "epgate without a command: exit $rc"
fi
if [ "$("$EG_EPGATE" version)" = "$("$EG_EPGATE" --version)" ] &&
	"$EG_EPGATE" version | grep -q '^epgate [0-9]'; then
	eg_ok "epgate version = epgate --version"
else
	eg_not_ok "epgate version"
fi
eg_done
