#!/bin/sh
# A failing case says, without -v, a short diagnosis and one command that
# reproduces it -- engine, provider, world, num_comms, every option that
# mattered -- and that command, run as printed, fails the same way (L1
# and L2). l2-rank run by hand says its own count and failures.
. "${EG_SRCDIR:-.}/suites/lib.sh"
# as a user would run the printed line: epgate on PATH
B=$EG_TMP/bin
mkdir -p "$B" && ln -s "$EG_EPGATE" "$B/epgate" || exit 99
cd "$EG_TMP" || exit 99

# --- L1: a planted fault (docs/faults.md)
"$EG_EPGATE" check --engine=fault:stale --reports "$EG_TMP/runs" >l1.out 2>&1
rc=$?
fail=$(grep -m 1 '^FAIL ' l1.out)
repro=$(grep -m 1 '^  repro: ' l1.out | sed 's/^  repro: //')
if [ "$rc" -eq 1 ] && [ -n "$fail" ] &&
	echo "$repro" | grep -q '^epgate check --engine=fault:stale --iters=2 --name=' &&
	grep -q '^  first: ' l1.out && grep -q '^\.\.\. and [0-9]* more failure(s)' l1.out &&
	tail -n 1 l1.out | grep -q '^FAIL: 4 passed, 83 failed (exit 1)$'; then
	eg_ok "check --engine=fault:stale: without -v, '$fail' and its repro line"
else
	eg_not_ok "check --engine=fault:stale: exit $rc, failure '$fail', repro '$repro'"
	head -n 12 l1.out | sed 's/^/# /'
fi
PATH="$B:$PATH" sh -c "$repro --reports '$EG_TMP/runs'" >again.out 2>&1
rc=$?
name=$(echo "$fail" | sed 's/^FAIL \([^:]*\):.*/\1/')
if [ "$rc" -eq 1 ] && grep -qxF "$fail" again.out &&
	tail -n 1 again.out | grep -q '^FAIL: 0 passed, 1 failed (exit 1)$'; then
	eg_ok "the printed L1 repro, run as printed, fails the same way ($name)"
else
	eg_not_ok "the printed L1 repro, run as printed: exit $rc"
	sed 's/^/# /' again.out | head -n 10
fi

# --- L2: a planted multi-process fault, through check --l2
EPGATE_TIMEOUT=20 "$EG_EPGATE" check --l2 --engine fault:order --filter w4-rand \
	--zero_ranks=1 --reports "$EG_TMP/runs" >l2.out 2>&1
rc=$?
fail=$(grep -m 1 '^FAIL ' l2.out)
repro=$(grep -m 1 '^  repro: ' l2.out | sed 's/^  repro: //')
if [ "$rc" -eq 1 ] && [ -n "$fail" ] &&
	echo "$repro" | grep -q '^epgate launch -n 4 --ranks-per-node 2 -- epgate l2-rank --engine fault:order --provider shm --num-comms 1 --iters 2 --workload .* --filter w4-rand-bf16 --zero_ranks=1$' &&
	grep -q '^  L2  \[5/5\] ' l2.out; then
	eg_ok "check --l2 --engine fault:order: '$fail', a line per job, the repro"
else
	eg_not_ok "check --l2 --engine fault:order: exit $rc, repro '$repro'"
	head -n 12 l2.out | sed 's/^/# /'
fi
PATH="$B:$PATH" EPGATE_TIMEOUT=20 sh -c "$repro" >again2.out 2>&1
rc=$?
# the same stage and count, said by rank 0 of the replayed job
want=$(echo "$fail" | sed 's/^FAIL l2 [^:]*: \([^:]*\): \(.*\)$/FAIL \1: \2/')
if [ "$rc" -eq 1 ] && grep -qF "[0] $want" again2.out &&
	grep -q '^\[0\] epgate l2-rank: FAIL: 0 passed, 1 failed, 0 skipped of 1 workload(s)$' again2.out; then
	eg_ok "the printed L2 repro, run as printed: '$want', and l2-rank's own count"
else
	eg_not_ok "the printed L2 repro, run as printed: exit $rc, want '$want'"
	sed 's/^/# /' again2.out | head -n 12
fi
# l2-rank by hand, passing: its count
"$EG_EPGATE" launch -n 2 -- "$EG_EPGATE" l2-rank --filter w2-base --iters 1 >pass.out 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^\[0\] epgate l2-rank: PASS: 1 passed, 0 failed, 0 skipped of 1 workload(s)$' pass.out; then
	eg_ok "l2-rank by hand says its count: $(grep 'l2-rank: PASS' pass.out)"
else
	eg_not_ok "l2-rank by hand: exit $rc"
	sed 's/^/# /' pass.out
fi
eg_done
