#!/bin/sh
# A hang ends the job with 1, naming the rank and the phase (issue 37).
# The documented L2 line (docs/plugins.md) on the template's planted
# hangs: SPIN, where every rank spins in dispatch at 100% CPU and no rank
# waits in epgate's bootstrap (l2-rank's bound on the plugin's calls ends
# it), and HANG, where the last rank blocks (its peer's deadline names
# it). Then a healthy plugin under the same short deadline passes, and
# the launcher's own deadline ends ranks that never return, naming them.
# Nothing is timed against a clock but the launcher's --timeout: jobs
# that could hang run under --timeout 60 as a guard, which must not fire.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

fdir=$EG_BUILDDIR/plugins/faults
so=$EG_BUILDDIR/plugins/template/libeg-template.so
for f in "$fdir/libeg-fault-spin.so" "$fdir/libeg-fault-hang.so" "$so"; do
	[ -f "$f" ] || { echo "Bail out! no $f (make check-programs)"; exit 99; }
done
# copies under this test's own folder: a rank left running is found by
# the path in its arguments, whatever else runs beside this test
cp "$fdir/libeg-fault-spin.so" "$fdir/libeg-fault-hang.so" "$so" "$EG_TMP/"

leftovers() { ps -eo args= | grep -F "plugin:$EG_TMP/" | grep -vq grep; }
# the guard deadline did not fire
unguarded() { ! grep -q '^\[launch\] deadline 60.0 s expired' "$EG_TMP/$1.out"; }
has() { grep -q -- "$2" "$EG_TMP/$1.out"; }
show() { tail -n 20 "$EG_TMP/$1.out" | sed 's/^/# /'; }

# l2 NAME PLUGIN: the documented line (epgate launch -n N -- epgate
# l2-rank --engine plugin:...) at N = 2, EPGATE_TIMEOUT=2, the guard
# added; sets rc
l2() {
	EPGATE_TIMEOUT=2 "$EG_EPGATE" launch -n 2 --timeout 60 -- epgate \
		l2-rank --engine "plugin:$EG_TMP/$2" >"$EG_TMP/$1.out" 2>&1
	rc=$?
}

# SPIN: each rank's dispatch is bounded by EPGATE_TIMEOUT + 2 s
l2 spin libeg-fault-spin.so
said='^\[\([01]\)\] epgate: rank \1: plugin template: dispatch did not return within 4.0 s (EPGATE_TIMEOUT 2 s and a grace of 2 s) in w2-base, iteration 0, dispatch; the rank ends (exit 1)$'
step='^\[\([01]\)\] epgate l2-rank: rank \1: w2-base: dispatch: deadline expired (iteration 0)$'
if [ "$rc" -eq 1 ] && unguarded spin && has spin "$said" && has spin "$step" &&
	! leftovers; then
	eg_ok "documented line, every rank spinning in dispatch: exit 1: $(grep -m1 'did not return' "$EG_TMP/spin.out" | cut -c1-120)"
else
	eg_not_ok "documented line, every rank spinning in dispatch: exit $rc, want 1 and the rank, workload and phase named"
	show spin
fi

# HANG: rank 1 blocks in dispatch; rank 0's call, waiting in epgate's
# bootstrap, fails at EPGATE_TIMEOUT naming it (or rank 1's own bound
# says it first, on a loaded machine)
l2 hang libeg-fault-hang.so
if [ "$rc" -eq 1 ] && unguarded hang && ! leftovers &&
	has hang ': w2-base: dispatch: ' &&
	{ has hang 'still waits on ranks 1' ||
		has hang '^\[1\] epgate: rank 1: plugin template: dispatch did not return'; }; then
	eg_ok "documented line, rank 1 blocked in dispatch: exit 1: $(grep -o 'rank 0 still waits on ranks 1\|rank 1: plugin template: dispatch did not return' "$EG_TMP/hang.out" | head -n 1)"
else
	eg_not_ok "documented line, rank 1 blocked in dispatch: exit $rc, want 1 naming rank 1 and dispatch"
	show hang
fi

# the template, healthy, under the same bound: every workload passes
l2 ok libeg-template.so
if [ "$rc" -eq 0 ] && has ok '^\[0\] epgate l2-rank: PASS: 22 passed, 0 failed' &&
	! has ok 'did not return'; then
	eg_ok "documented line, the template under the same bound: $(grep -m1 -o 'PASS: .*' "$EG_TMP/ok.out")"
else
	eg_not_ok "documented line, the template under the same bound: exit $rc"
	show ok
fi

# the launcher's deadline: rank 0 ends, rank 1 never returns; exit 1,
# rank 1 named as still running and stopped
rec=$EG_TMP/rec
printf '#!/bin/sh\necho $$ >>"%s/never.pids"\nexec "$@"\n' "$EG_TMP" >"$rec"
chmod +x "$rec"
"$EG_EPGATE" launch -n 2 --timeout 2 -- "$rec" sh -c \
	'[ "$EPGATE_RANK" = 0 ] && exit 0; exec sleep 1000' \
	>"$EG_TMP/never.out" 2>&1
rc=$?
alive=$(while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done \
	<"$EG_TMP/never.pids")
if [ "$rc" -eq 1 ] && [ -z "$alive" ] &&
	has never '^\[launch\] deadline 2.0 s expired; stopping ranks 1 (SIGTERM' &&
	has never '^\[launch\] rank 1 stopped by signal 15$'; then
	eg_ok "launch --timeout 2, rank 1 never returns: exit 1, $(grep -m1 -o 'deadline.*stopping ranks 1' "$EG_TMP/never.out")"
else
	eg_not_ok "launch --timeout 2, rank 1 never returns: exit $rc (want 1), alive: ${alive:-none}"
	show never
	for p in $alive; do kill -9 "$p"; done
fi

# the default deadline is stated, and 0 is none
"$EG_EPGATE" launch --help >"$EG_TMP/help.out" 2>&1
"$EG_EPGATE" launch -n 1 --timeout 0 -- true >"$EG_TMP/zero.out" 2>&1
rc=$?
if has help '0: none (default: 600)' && [ "$rc" -eq 0 ]; then
	eg_ok "launch: the default deadline (600 s) in --help; --timeout 0 runs without one"
else
	eg_not_ok "launch: default deadline not stated, or --timeout 0 refused (exit $rc)"
	show help
	show zero
fi
eg_done
