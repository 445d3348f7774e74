#!/bin/sh
# The README's ways to run epgate, tested: `make install` (into a
# DESTDIR here) gives a command that works from any folder with its
# data where it was installed -- check, launch of `epgate` itself, a
# profile's plan, a gate file -- and from the build tree `./epgate
# launch -n 2 -- epgate ...` runs this epgate's ranks with no epgate on
# PATH.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
I=$EG_TMP/inst
E=$EG_TMP/empty
mkdir -p "$E"
SYS=/usr/bin:/bin

# --- from the build tree: no epgate on PATH, the launch still finds it
(cd "$E" && PATH=$SYS "$EG_EPGATE" launch -n 2 -- epgate l2-rank \
	--filter w2-base --iters 1) >"$EG_TMP/tree.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'l2-rank: PASS: 1 passed' "$EG_TMP/tree.out"; then
	eg_ok "./epgate launch -n 2 -- epgate l2-rank from the tree, epgate not on PATH: exit 0"
else
	eg_not_ok "./epgate launch -n 2 -- epgate l2-rank from the tree: exit $rc"
	sed 's/^/# /' "$EG_TMP/tree.out"
fi

# --- make install
make -C "$EG_BUILDDIR" install DESTDIR="$I" >"$EG_TMP/install.out" 2>&1
rc=$?
bin=$(find "$I" -path '*/bin/epgate' -type f 2>/dev/null | head -n 1)
data=$(find "$I" -path '*/share/epgate' -type d 2>/dev/null | head -n 1)
hdr=$(find "$I" -path '*/include/epgate/plugin.h' -type f 2>/dev/null | head -n 1)
if [ "$rc" -eq 0 ] && [ -x "$bin" ] && [ -f "$data/profiles/local.profile" ] &&
	[ -f "$data/fixtures/workloads/l1-matrix.ini" ] && [ -f "$data/gates/local.gate" ] &&
	[ -n "$hdr" ]; then
	eg_ok "make install: ${bin#$I}, its data in ${data#$I}, the plugin ABI header"
else
	eg_not_ok "make install: exit $rc"
	tail -n 10 "$EG_TMP/install.out" | sed 's/^/# /'
fi
# inst CMD...: the installed epgate on PATH, its installed data, from an
# empty folder
inst() {
	(cd "$E" && PATH="$(dirname "$bin"):$SYS" EPGATE_DATADIR=$data "$@") \
		>"$EG_TMP/inst.out" 2>&1
}
for cmd in "epgate check --quick" \
	"epgate launch -n 2 -- epgate l2-rank --filter w2-base --iters 1" \
	"epgate bench list local" \
	"epgate check --l2 --filter w2-base"; do
	# shellcheck disable=SC2086
	inst $cmd
	rc=$?
	if [ "$rc" -eq 0 ]; then
		eg_ok "installed: $cmd (from an empty folder): exit 0"
	else
		eg_not_ok "installed: $cmd: exit $rc"
		tail -n 8 "$EG_TMP/inst.out" | sed 's/^/# /'
	fi
done
if [ -d "$E/reports/runs" ] && [ -z "$(ls -A "$E" | grep -v '^reports$')" ]; then
	eg_ok "its reports went under the folder it ran in (reports/runs)"
else
	eg_not_ok "reports of the installed epgate: $(ls -A "$E")"
fi
eg_done
