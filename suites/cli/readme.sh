#!/bin/sh
# The README's examples, run as written: every line of the ```sh block
# under "### Examples" in README.md, with `epgate` on PATH (the build
# tree's), from a folder holding the tree's fixtures/, gates/, profiles/
# and plugins/, and the small data folder fixtures/run-mini as
# EPGATE_DATADIR so that `epgate run` and the L2 ones take seconds. The
# comment at a line's end says what it must do: "must fail" exits 1,
# "exit 0 or 1" either, "GPU" 0 or 77 (no GPU), "Slurm" is left to make
# check-slurm; any other line exits 0. The extraction is shown to catch
# a changed line first.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
W=$EG_TMP/work
B=$EG_TMP/bin
mkdir -p "$W" "$B" && ln -s "$EG_EPGATE" "$B/epgate" || exit 99
for d in fixtures gates profiles slurm; do ln -s "$EG_SRCDIR/$d" "$W/$d"; done
ln -s "$EG_BUILDDIR/plugins" "$W/plugins"

# examples FILE: the example lines of a README, one per line
examples() {
	awk '/^### Examples/ { sect = 1; next }
	     /^##/ { sect = 0 }
	     sect && /^```sh/ { on = 1; next }
	     on && /^```/ { on = 0; next }
	     on && NF && !/^#/ { print }' "$1"
}
examples "$EG_SRCDIR/README.md" >"$EG_TMP/ex"
n=$(wc -l <"$EG_TMP/ex")
if [ "$n" -ge 15 ]; then
	eg_ok "README.md has $n examples"
else
	eg_not_ok "README.md's examples: $n found"
fi
# planted: a README whose example changed is seen as changed
sed 's/^epgate check --l2 --filter w2- /epgate check --l2 --filtre w2- /' \
	"$EG_SRCDIR/README.md" >"$EG_TMP/README.planted"
if examples "$EG_TMP/README.planted" | grep -q -- '--filtre' &&
	! examples "$EG_TMP/README.planted" | grep -q -- '--l2 --filter w2-'; then
	eg_ok "planted: a changed example is the one run"
else
	eg_not_ok "planted: a changed example is the one run"
fi

i=0
while IFS= read -r line; do
	i=$((i + 1))
	cmd=$(echo "${line%%  #*}" | sed "s/ *$//")
	note=""
	case $line in *"  #"*) note=${line#*  #} ;; esac
	case $note in
	*Slurm*)
		eg_ok "$cmd # SKIP Slurm: suites/slurm/*.sh (make check-slurm)"
		continue
		;;
	esac
	(cd "$W" && PATH="$B:$PATH" EPGATE_DATADIR="$EG_SRCDIR/fixtures/run-mini" \
		EPGATE_TIMEOUT=30 timeout 300 sh -c "$cmd" </dev/null) \
		>"$EG_TMP/out.$i" 2>&1
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
			eg_ok "$cmd # SKIP $(tail -n 1 "$EG_TMP/out.$i" | cut -c1-80)"
		else
			eg_ok "$cmd: exit $rc"
		fi
		;;
	*)
		eg_not_ok "$cmd: exit $rc, want $want"
		tail -n 8 "$EG_TMP/out.$i" | sed 's/^/# /'
		;;
	esac
done <"$EG_TMP/ex"
eg_done
