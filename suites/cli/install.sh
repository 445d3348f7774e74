#!/bin/sh
# The README's ways to run epgate, tested: `make install` (into a
# DESTDIR here) gives a command that works from any folder with its
# data where it was installed -- check, launch of `epgate` itself, a
# profile's plan, a gate file -- read from PREFIX/share/epgate, never
# from the source tree compiled into it (no EPGATE_DATADIR: a profile
# moved away there is not found elsewhere); the Slurm batch script, the
# man page (every command, every exit status), the plugin template's
# source and plugin, and epgate.pc (`pkg-config --cflags epgate` builds
# the installed template, and `epgate plugin new`'s Makefile, against
# the installed plugin.h; a planted .pc naming another folder does
# not); and from the build tree `./epgate launch -n 2 -- epgate ...`
# runs this epgate's ranks with no epgate on PATH.
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
# inst CMD...: the installed epgate on PATH, from an empty folder, with
# no EPGATE_DATADIR: it finds its data itself
inst() {
	(cd "$E" && unset EPGATE_DATADIR && PATH="$(dirname "$bin"):$SYS" "$@") \
		>"$EG_TMP/inst.out" 2>&1
}

# --- its data: PREFIX/share/epgate, not the source tree built into it
inst epgate bench list local
got=$(sed -n 's/^profile local (\(.*\)): .*/\1/p' "$EG_TMP/inst.out")
if [ -n "$data" ] && [ "$got" = "$(cd "$data" && pwd -P)/profiles/local.profile" ]; then
	eg_ok "installed, no EPGATE_DATADIR: bench list local reads ${got#$I}"
else
	eg_not_ok "installed, no EPGATE_DATADIR: bench list local reads '$got', want ${data#$I}/profiles/local.profile"
	tail -n 3 "$EG_TMP/inst.out" | sed 's/^/# /'
fi
# planted: the installed profile moved away; the source tree's is there
# for the taking, and the installed epgate must not take it
mv "$data/profiles/local.profile" "$data/profiles/local.profile.away"
inst epgate bench list local
rc=$?
mv "$data/profiles/local.profile.away" "$data/profiles/local.profile"
(cd "$E" && unset EPGATE_DATADIR && PATH=$SYS "$EG_EPGATE" bench list local) >"$EG_TMP/tree.out" 2>&1
tree=$(sed -n 's/^profile local (\(.*\)): .*/\1/p' "$EG_TMP/tree.out")
if [ "$rc" -ne 0 ] && ! grep -q "$EG_SRCDIR" "$EG_TMP/inst.out" &&
	[ "$tree" = "$EG_SRCDIR/profiles/local.profile" ]; then
	eg_ok "planted: local.profile moved away in PREFIX/share: the installed epgate does not read the source tree's (exit $rc); the build tree's does"
else
	eg_not_ok "planted: local.profile moved away: the installed epgate exit $rc, $(tail -n 1 "$EG_TMP/inst.out"); the build tree's read '$tree'"
fi

# --- the other installed files
man=$(find "$I" -path '*/man1/epgate.1' -type f | head -n 1)
pc=$(find "$I" -path '*/pkgconfig/epgate.pc' -type f | head -n 1)
if [ -x "$data/slurm/epgate.sbatch" ] && [ -n "$man" ] && [ -n "$pc" ] &&
	[ -f "$data/template/template.c" ] && [ -f "$data/template/faults.h" ] &&
	[ -f "$data/template/intermittent.h" ] &&
	[ -n "$(find "$I" -path '*/lib/epgate/plugins/libeg-template.so')" ]; then
	eg_ok "installed: slurm/epgate.sbatch, ${man#$I}, ${pc#$I}, the template's source and plugin"
else
	eg_not_ok "installed: sbatch, man page, epgate.pc, template: $(find "$I" -type f | grep -v fixtures | sed "s|$I||" | tr '\n' ' ')"
fi
# the man page names every command of `epgate help` and every exit
# status; a planted page without one is caught
man_missing() { # PAGE: the commands and exit statuses it lacks
	for c in $("$EG_EPGATE" help | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p'); do
		grep -q "^\.B[R]* $c\( \|,\|$\)" "$1" || echo "$c"
	done
	for x in 0 1 77 99; do grep -q "^\.B $x\$" "$1" || echo "exit $x"; done
}
sed '/^\.B stress$/d' "$man" >"$EG_TMP/planted.1"
if [ -n "$man" ] && [ -z "$(man_missing "$man")" ] &&
	[ "$(man_missing "$EG_TMP/planted.1")" = stress ] &&
	{ ! command -v groff >/dev/null 2>&1 ||
		[ -z "$(groff -man -Tutf8 -ww -z "$man" 2>&1)" ]; }; then
	eg_ok "the man page names every command and exit status (a planted page without stress is caught)$(command -v groff >/dev/null 2>&1 && echo "; groff reads it without a warning")"
else
	eg_not_ok "the man page lacks: $(man_missing "$man" | tr '\n' ' '); planted: $(man_missing "$EG_TMP/planted.1" | tr '\n' ' ')"
fi
# pkg-config --cflags epgate: the installed template builds against the
# installed plugin.h, and the installed epgate loads it; a planted .pc
# naming another include folder does not build
pcdir=$(dirname "$pc")
cflags=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$I pkg-config --cflags epgate 2>&1 | sed "s/ *$//")
cp -r "$data/template" "$E/tpl"
${CC:-cc} -shared -fPIC $cflags -o "$E/tpl/libeg-mine.so" "$E/tpl/template.c" >"$EG_TMP/cc.out" 2>&1
ccrc=$?
inst epgate plugin info "plugin:$E/tpl/libeg-mine.so"
inforc=$?
mkdir -p "$EG_TMP/pcbad"
sed 's|^includedir=.*|includedir=/nowhere/include|' "$pc" >"$EG_TMP/pcbad/epgate.pc"
badflags=$(PKG_CONFIG_PATH=$EG_TMP/pcbad pkg-config --cflags epgate 2>&1)
${CC:-cc} -shared -fPIC $badflags -o "$EG_TMP/bad.so" "$E/tpl/template.c" >/dev/null 2>&1
badrc=$?
if [ "$cflags" = "-I$(dirname "$(dirname "$hdr")")" ] && [ "$ccrc" -eq 0 ] && [ "$inforc" -eq 0 ] && grep -q 'epgate-template' "$EG_TMP/inst.out" &&
	[ "$badrc" -ne 0 ]; then
	eg_ok "pkg-config --cflags epgate ($cflags) builds the installed template; the installed epgate loads it; a planted .pc does not build"
else
	eg_not_ok "pkg-config --cflags epgate: '$cflags', cc exit $ccrc, plugin info exit $inforc, planted .pc cc exit $badrc"
	sed 's/^/# /' "$EG_TMP/cc.out" | head -n 5
	tail -n 3 "$EG_TMP/inst.out" | sed 's/^/# /'
fi
rm -rf "$E/tpl"
# `epgate plugin new` from the installed epgate: its Makefile asks
# pkg-config, and builds against the installed header (the build tree's
# names the source tree instead)
inst epgate plugin new foo
rc=$?
(cd "$E" && PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$I make -C foo) >"$EG_TMP/make.out" 2>&1
mrc=$?
if [ "$rc" -eq 0 ] && [ "$mrc" -eq 0 ] && [ -f "$E/foo/libeg-foo.so" ] &&
	grep -q "pkg-config --cflags epgate" "$E/foo/Makefile" &&
	grep -q -- "$cflags" "$EG_TMP/make.out" &&
	! grep -q "$EG_SRCDIR" "$E/foo/Makefile"; then
	eg_ok "installed: plugin new foo && make -C foo builds against the installed plugin.h (pkg-config)"
else
	eg_not_ok "installed: plugin new foo: exit $rc, make exit $mrc"
	tail -n 5 "$EG_TMP/make.out" | sed 's/^/# /'
fi
rm -rf "$E/foo"

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
