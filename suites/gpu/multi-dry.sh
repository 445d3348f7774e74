#!/bin/sh
# The multi-GPU script's dry run on this host (suites/gpu/multi-device.sh
# --dry-run; issue 35, part 4): the same steps as on the GPU machine at
# W = 2, 4 and 8 -- each arm's L2 correctness, its stress run, the
# profile of the arms with gates and page -- every arm played by the
# torch reference adapter over gloo; every step ok, every world's page
# written. Its own planted fault (the first arm played by torch_ep_faulty
# with a stale receive buffer) fails exactly that arm's steps and the
# script (exit 1); bad arguments exit 99.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/py-lib.sh"
py_need_torch
MD=$EG_SRCDIR/suites/gpu/multi-device.sh
export EG_EPGATE
# dry NAME ARGS...: the dry run into EG_TMP/NAME; rc, table in $t
dry() {
	name=$1
	shift
	OUT=$EG_TMP/$name MD_L2=base sh "$MD" --dry-run "$@" >"$EG_TMP/$name.out" 2>&1
	rc=$?
	t=$EG_TMP/$name/steps.txt
}
row() { grep "^$1 " "$t" | awk '{ print $2 }'; }

dry all 2 4 8
n=$(wc -l <"$t" 2>/dev/null || echo 0)
ok=$(awk '$2 == "ok"' "$t" 2>/dev/null | wc -l)
if [ "$rc" -eq 0 ] && [ "$n" -eq 33 ] && [ "$ok" -eq 33 ]; then
	eg_ok "multi-device.sh --dry-run 2 4 8: exit 0, $ok of 33 steps ok (5 arms x L2 and stress, and a profile, per world)"
else
	eg_not_ok "multi-device.sh --dry-run 2 4 8: exit $rc, $ok of $n steps ok (want 33)"
	grep -v ' ok ' "$t" 2>/dev/null | sed 's/^/# /'
	tail -n 5 "$EG_TMP/all.out" | sed 's/^/# /'
fi
for W in 2 4 8; do
	res=$(ls "$EG_TMP"/all/bench-w$W/*/bench-multi-w$W.json 2>/dev/null | head -n 1)
	got=$(grep -c '"step_us": {"median": [0-9]' "$res" 2>/dev/null)
	if [ "${got:-0}" -eq 5 ] && [ -s "$(dirname "$res")/report.html" ] &&
		grep -q '^ok [0-9]* - step-time-budget' "$(dirname "$res")/bench-gates.tap" &&
		[ "$(grep -c '"status":"pass"' "$EG_TMP/all/l2-torch-nccl.w$W.jsonl")" -eq 1 ]; then
		eg_ok "world $W: 5 arms measured at W=$W, gates judged, report.html written; each arm's L2 and stress passed"
	else
		eg_not_ok "world $W: ${got:-0} of 5 points measured in ${res:-no results}"
	fi
done

# the planted fault: only the first arm's steps fail, and the script
MD_DRY_FAULT=stale
export MD_DRY_FAULT
dry fault 2
unset MD_DRY_FAULT
if [ "$rc" -eq 1 ] && [ "$(row l2-deepep-v2.w2)" = FAIL ] &&
	[ "$(row stress-deepep-v2.w2)" = FAIL ] &&
	[ "$(awk '$2 == "FAIL"' "$t" | wc -l)" -eq 2 ] &&
	grep -q '"stage":"dispatch","iteration":1,"wrong":{"x":[1-9]' "$EG_TMP/fault/l2-deepep-v2.w2.jsonl"; then
	eg_ok "MD_DRY_FAULT=stale: exit 1, the first arm's L2 and stress steps FAIL ($(grep '^l2-deepep-v2.w2 ' "$t" | cut -c39-100)), the rest ok"
else
	eg_not_ok "MD_DRY_FAULT=stale: exit $rc, want the first arm's two steps FAIL"
	sed 's/^/# /' "$t" 2>/dev/null
fi

# bad arguments
sh "$MD" >"$EG_TMP/usage.out" 2>&1
rc1=$?
OUT=$EG_TMP/bad sh "$MD" --dry-run 3 >"$EG_TMP/w3.out" 2>&1
rc2=$?
if [ "$rc1" -eq 99 ] && grep -q '^usage: sh suites/gpu/multi-device.sh' "$EG_TMP/usage.out" &&
	[ "$rc2" -eq 99 ] && grep -q 'world 3: want 2, 4 or 8' "$EG_TMP/w3.out"; then
	eg_ok "bad arguments: exit 99 ($(head -n 1 "$EG_TMP/usage.out" | cut -c1-60); $(cat "$EG_TMP/w3.out" | tail -n 1))"
else
	eg_not_ok "bad arguments: exit $rc1 and $rc2 (want 99)"
fi
eg_done
