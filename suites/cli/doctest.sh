#!/bin/sh
# The documented commands, run as written (README.md, "Examples" says
# the convention): every line of a fenced block opened with ```sh
# runnable in README.md and docs/*.md runs from a fresh folder holding
# the tree's fixtures/, gates/, profiles/, slurm/ and the build's
# plugins/, with `epgate` on PATH (the build tree's) and the small data
# folder fixtures/run-mini as EPGATE_DATADIR; blocks opened with ```sh
# runnable=long only with EG_CHECK_LONG=1 (both kinds) or only (the long
# blocks alone: suites/cli/doctest-long.sh, make check-long), skipped
# with that reason otherwise. A line's trailing comment ("  # ...")
# says what it must do: "must fail" exits 1, "exit 0 or 1" either,
# "GPU" 0 or 77 (no GPU here: a skip), "Slurm", "root" and "network"
# are skipped saying so; any other line exits 0. Lines run in order in
# their block's folder, so a block may build on its earlier lines; a
# line ending in "\" goes on. Every other ```sh block is a synopsis:
# each `epgate CMD [SUB]` in it must be a command whose --help names
# every --option the line gives. The extraction is shown to catch a
# changed line, and the synopsis check a renamed option.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
: "${EG_CHECK_LONG:=0}"
# deadlines that scale with the machine's load where suites/lib.sh can
command -v eg_scale >/dev/null 2>&1 || eg_scale() { echo "$1"; }
B=$EG_TMP/bin
mkdir -p "$B" && ln -s "$EG_EPGATE" "$B/epgate" || exit 99

# blocks FILE...: "B<TAB>FILE:LINE<TAB>MODE" per ```sh block (MODE
# runnable, long or synopsis), then "C<TAB>LINE<TAB>COMMAND" per command
docs_blocks() {
	awk '
	FNR == 1 { on = 0 }
	/^```sh/ {
		mode = "synopsis"
		if ($0 ~ /^```sh runnable=long[ \t]*$/) mode = "long"
		else if ($0 ~ /^```sh runnable[ \t]*$/) mode = "runnable"
		printf "B\t%s:%d\t%s\n", FILENAME, FNR, mode
		on = 1; cmd = ""; next
	}
	on && /^```/ { on = 0; next }
	on {
		line = $0
		if (cmd == "") { start = FNR; if (line ~ /^[ \t]*#/ || line ~ /^[ \t]*$/) next }
		if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cmd = cmd line " "; next }
		cmd = cmd line
		printf "C\t%d\t%s\n", start, cmd
		cmd = ""
	}' "$@"
}
ls "$EG_SRCDIR"/docs/*.md >"$EG_TMP/files"
docs_blocks "$EG_SRCDIR/README.md" $(cat "$EG_TMP/files") >"$EG_TMP/blocks"
nrun=$(awk -F '\t' '$1 == "B" { m = $3 } $1 == "C" && m == "runnable"' "$EG_TMP/blocks" | wc -l)
nlong=$(awk -F '\t' '$1 == "B" { m = $3 } $1 == "C" && m == "long"' "$EG_TMP/blocks" | wc -l)
if [ "$nrun" -ge 20 ] && [ "$nlong" -ge 3 ]; then
	eg_ok "README.md and docs/*.md: $nrun runnable commands, $nlong long ones"
else
	eg_not_ok "runnable commands found: $nrun, long ones: $nlong"
fi
# planted: a changed line is the one run; a continued line is one command
sed 's/^epgate check --world=6 /epgate check --wrold=6 /' "$EG_SRCDIR/README.md" \
	>"$EG_TMP/README.planted"
printf '```sh runnable\nepgate a \\\n    --b  # c\n```\n' >"$EG_TMP/cont.md"
if docs_blocks "$EG_TMP/README.planted" | grep -q 'check --wrold=6' &&
	! docs_blocks "$EG_TMP/README.planted" | grep -q 'check --world=6 ' &&
	[ "$(docs_blocks "$EG_TMP/cont.md" | grep -c '^C')" -eq 1 ] &&
	docs_blocks "$EG_TMP/cont.md" | grep -q 'epgate a      --b  # c'; then
	eg_ok "planted: a changed line is the one run, a continued line one command"
else
	eg_not_ok "planted: the extraction"
fi

# a fresh folder for a block
work() {
	W=$EG_TMP/w$1
	mkdir -p "$W" || exit 99
	for d in fixtures gates profiles slurm; do ln -s "$EG_SRCDIR/$d" "$W/$d"; done
	ln -s "$EG_BUILDDIR/plugins" "$W/plugins"
}

# run_line WHERE CMD NOTE TIMEOUT: one command, its verdict
run_line() {
	where=$1 cmd=$2 note=$3
	case $note in
	*Slurm*) eg_ok "$where: $cmd # SKIP Slurm: suites/slurm/*.sh (make check-slurm)"; return ;;
	*root*) eg_ok "$where: $cmd # SKIP needs root"; return ;;
	*network*) eg_ok "$where: $cmd # SKIP needs a network"; return ;;
	esac
	(cd "$W" && PATH="$B:$PATH" EPGATE_DATADIR="$EG_SRCDIR/fixtures/run-mini" \
		EPGATE_TIMEOUT=$(eg_scale 30) timeout "$(eg_scale "$4")" sh -c "$cmd" \
		</dev/null) >"$EG_TMP/out" 2>&1
	rc=$?
	case $note in
	*"must fail"*) want=1 ;;
	*"exit 0 or 1"*) want="0 1" ;;
	*GPU*) want="0 77" ;;
	*) want=0 ;;
	esac
	case " $want " in
	*" $rc "*)
		if [ "$rc" -eq 77 ]; then
			eg_ok "$where: $cmd # SKIP $(tail -n 1 "$EG_TMP/out" | cut -c1-80)"
		else
			eg_ok "$where: $cmd: exit $rc"
		fi
		;;
	*)
		eg_not_ok "$where: $cmd: exit $rc, want $want"
		tail -n 8 "$EG_TMP/out" | sed 's/^/# /'
		;;
	esac
}

# synopsis LINE: each epgate command of the line (a part that starts
# with `epgate`, after VAR=value words; the one after a launcher's "--"
# too) exists and its --help names the line's options
synopsis() (
	set -f
	echo "$1" | sed 's/  #.*//; s/ -- /\n/g; s/ && /\n/g; s/ | /\n/g' | while IFS= read -r part; do
		set -- $(echo "$part" | sed 's/[][|]/ /g')
		while [ $# -gt 0 ] && case $1 in [A-Z_]*=*) true ;; *) false ;; esac; do shift; done
		[ $# -gt 1 ] && { [ "$1" = epgate ] || [ "$1" = ./epgate ]; } || continue
		shift
		c=$1
		shift
		sub=""
		case ${1:-} in [a-z]*) "$EG_EPGATE" "$c" "$1" --help </dev/null >/dev/null 2>&1 && sub=$1 ;; esac
		# bench's old spellings (`bench --engine E` is `bench engine E`)
		case "$c ${1:-}" in
		"bench --engine" | "bench --profile" | "bench --raw" | "bench --overhead")
			sub=${1#--} ;;
		esac
		if ! "$EG_EPGATE" "$c" $sub --help </dev/null >"$EG_TMP/help" 2>&1; then
			echo "BAD epgate $c $sub: no such command"
			continue
		fi
		echo "OK epgate $c $sub"
		for w in "$@"; do
			o=${w%%=*}
			case $o in --[a-z]*) ;; *) continue ;; esac
			grep -q -- "$o\b" "$EG_TMP/help" && continue
			# a workload key where the command takes them
			k=${o#--}
			case " name world experts topk hidden dtype tokens zero_ranks routing mask data seed iter steps " in
			*" $k "*) grep -q -- '--KEY=VALUE\|--KEY\b' "$EG_TMP/help" && continue ;;
			esac
			echo "BAD epgate $c $sub: $o is not in its --help"
		done
	done
)

i=0
long_said=""
while IFS="$(printf '\t')" read -r kind a b; do
	if [ "$kind" = B ]; then
		where=${a#"$EG_SRCDIR"/}
		mode=$b
		i=$((i + 1))
		[ "$mode" = synopsis ] || work "$i"
		continue
	fi
	cmd=$(echo "${b%%  #*}" | sed 's/ *$//')
	note=""
	case $b in *"  #"*) note=${b#*  #} ;; esac
	at="${where%:*}:$a"
	# the long blocks alone: what make check ran is not run again
	[ "$EG_CHECK_LONG" = only ] && [ "$mode" != long ] && continue
	case $mode in
	runnable) run_line "$at" "$cmd" "$note" 120 ;;
	long)
		if [ "$EG_CHECK_LONG" != 0 ]; then
			run_line "$at" "$cmd" "$note" 300
		else
			eg_ok "$at: $cmd # SKIP long: make check-long (EG_CHECK_LONG=1)"
		fi
		;;
	synopsis)
		synopsis "$cmd" >"$EG_TMP/syn"
		if grep -q '^BAD' "$EG_TMP/syn"; then
			eg_not_ok "$at (synopsis): $(grep '^BAD' "$EG_TMP/syn" | head -n 1 | cut -c5-)"
			sed 's/^/# /' "$EG_TMP/syn"
		elif grep -q '^OK' "$EG_TMP/syn"; then
			eg_ok "$at (synopsis): $(grep '^OK' "$EG_TMP/syn" | cut -c4- | tr '\n' ' ')"
		fi
		;;
	esac
done <"$EG_TMP/blocks"

# planted: a synopsis with a renamed option is caught
if synopsis 'epgate gate --gates G --baselines B R.json' | grep -q '^BAD' &&
	! synopsis 'epgate gate --gates G --baseline B R.json' | grep -q '^BAD' &&
	synopsis 'epgate gaet --gates G' | grep -q '^BAD.*no such command'; then
	eg_ok "planted: a synopsis naming an option its command lacks is caught"
else
	eg_not_ok "planted: the synopsis check"
fi
eg_done
