#!/bin/sh
# `epgate bench ab` (docs/gates.md, "A/B in one job"): two arms at every
# point of one arm of a profile, in the same launches, step by step (A
# starts in even launches, B in odd ones), judged by the gate file it writes into
# the run folder (ab.gate: B against A, launch-paired, per point and over
# the points).  On the null backend's modeled steps (sim:US, a set length
# with a 2% spread and no busy loop: the verdicts hold under any load),
# so the run takes seconds: a B three times A's step fails; the files hold what
# the judgement needs; bad arms are refused.
. "${EG_SRCDIR:-.}/suites/lib.sh"

E=$EG_EPGATE
cat >"$EG_TMP/n.profile" <<'EOF2'
profile: abnull
transport: null
repetitions: {warmup: 1, iters: 6, launches: 4}
base: {world: 1, nodes: 1}
sweeps:
  - {name: s, arms: ["sim:50"], axes: {concurrency: [8, 16, 32]}}
EOF2
"$E" bench ab "$EG_TMP/n.profile" --a sim:50 --b sim:150 --arm sim:50 \
	--metric step_us --per-point --reports "$EG_TMP/runs" >"$EG_TMP/ab.out" 2>&1
rc=$?
RUN=$(ls -d "$EG_TMP"/runs/*/ 2>/dev/null | head -n 1)
if [ "$rc" -eq 1 ] && grep -q '^FAIL  *ab-step_us  *regression' "$EG_TMP/ab.out" &&
	grep -q '^FAIL  *ab-step_us-median  *regression' "$EG_TMP/ab.out"; then
	eg_ok "B with three times A's step fails, per point and over the points"
else
	eg_not_ok "bench ab, B three times slower (exit $rc)"
	tail -n 12 "$EG_TMP/ab.out" | sed 's/^/# /'
fi
if [ -s "${RUN}ab.gate" ] && grep -q 'versus: \["sim:150", "sim:50"\]' "${RUN}ab.gate" &&
	grep -q '"ab": {"a": "sim:50", "b": "sim:150"' "${RUN}bench-ab.json" &&
	grep -q '"id": "s/sim:150/concurrency=8"' "${RUN}bench-ab.json" &&
	grep -q '"passes": \[0, 1, 2, 3' "${RUN}bench-ab.json" &&
	grep -q '"launches": \[6, 6, 6, 6' "${RUN}bench-ab.json" &&
	grep -q 'correction: holm' "${RUN}bench-gates.tap"; then
	eg_ok "the run folder: ab.gate (versus), both arms with their launches, TAP"
else
	eg_not_ok "the run folder of bench ab"
	ls "$RUN" | sed 's/^/# /'
fi
# one verdict on every path: the exit status, the last line, summary.json,
# summary.md, the page's banner, and the gate run summary.json's repro
# line names (run again: the same verdict from the files alone)
last=$(tail -n 1 "$EG_TMP/ab.out")
js=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["totals"]; print(d["exit"], d["verdict"], t["passed"], t["failed"])' "${RUN}summary.json" 2>/dev/null)
md=$(sed -n 1p "${RUN}summary.md" 2>/dev/null)
ban=$(sed -n 's/.*<div class="banner [a-z]*" id="verdict" data-verdict="\([a-z]*\)">.*/\1/p' "${RUN}report.html" 2>/dev/null)
repro=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([f["repro"] for s in d["stages"] for f in s["failures"]][0])' "${RUN}summary.json" 2>/dev/null)
again=$(cd "$EG_TMP" && $(echo "$repro" | sed "s|^epgate |$E |") 2>&1 | tail -n 1)
again_rc=$(cd "$EG_TMP" && $(echo "$repro" | sed "s|^epgate |$E |") >/dev/null 2>&1; echo $?)
if [ "$last" = "FAIL: 6 passed, 2 failed, 0 skipped (exit 1)" ] && [ "$js" = "1 FAIL 6 2" ] &&
	[ "$md" = "## epgate: FAIL" ] && [ "$ban" = fail ] && [ "$again_rc" -eq 1 ] &&
	[ "$again" = "FAIL: 2 gates: 0 pass, 2 fail, 0 inconclusive, 0 skip (exit 1)" ]; then
	eg_ok "one verdict: exit 1, '$last', summary.json, summary.md, the banner and the repro run again"
else
	eg_not_ok "bench ab's verdicts disagree: exit $rc, '$last', summary.json '$js', '$md', banner '$ban', repro '$repro' gave $again_rc '$again'"
fi
# the two arms alternate: even launches A first, odd ones B first
log=$(ls "$RUN"/bench-p1.*.log 2>/dev/null | head -n 1)
if [ -n "$log" ] && grep 'bench: point' "$log" | head -n 1 | grep -q 'sim:150'; then
	eg_ok "odd launches measure B first"
else
	eg_not_ok "the order of the arms in launch 1"
	grep 'bench: point' "$log" 2>/dev/null | head -n 2 | sed 's/^/# /'
fi
# the two arms of each point are measured together, step by step (the
# order inside a step is test_bench's arms_step_by_step)
pairs=$(cat "$RUN"/bench-p*.log 2>/dev/null | grep -c 'bench: 2 points together, step by step: s/sim:\(50\|150\)/concurrency=\([0-9]*\) s/sim:\(50\|150\)/concurrency=\2$')
if [ "$pairs" -eq 12 ]; then
	eg_ok "every launch measures each point's two arms together ($pairs pairs in 4 launches of 3 points)"
else
	eg_not_ok "the arms measured together: $pairs pair lines, want 12"
fi
# a profile's own arms, interleave: steps -- each shape's two arms
# measured together, step by step, in every launch
sed 's/^transport: null$/transport: null\ninterleave: steps/; s/arms: \["sim:50"\]/arms: ["sim:50", "sim:100"]/' \
	"$EG_TMP/n.profile" >"$EG_TMP/il.profile"
"$E" bench profile "$EG_TMP/il.profile" --no-gates --reports "$EG_TMP/runs-il" >"$EG_TMP/il.out" 2>&1
rc=$?
pairs=$(cat "$EG_TMP"/runs-il/*/bench-p*.log 2>/dev/null |
	grep -c 'bench: 2 points together, step by step: s/sim:\(50\|100\)/concurrency=\([0-9]*\) s/sim:\(50\|100\)/concurrency=\2$')
if [ "$rc" -eq 0 ] && [ "$pairs" -eq 12 ]; then
	eg_ok "interleave: steps: each shape's arms together in every launch ($pairs pairs in 4 launches of 3 shapes)"
else
	eg_not_ok "interleave: steps: exit $rc, $pairs pair lines, want 12"
	tail -n 5 "$EG_TMP/il.out" | sed 's/^/# /'
fi
# a plan entry whose fourth field is not "+": refused by the rank
EPGATE_BENCH_PLAN=$(printf '0\tsim:50\tsim:50\tx\n') "$E" launch -n 1 -- \
	"$E" bench-rank --profile "$EG_TMP/n.profile" --spool "$EG_TMP/bad.spool" \
	>"$EG_TMP/plan.out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q 'EPGATE_BENCH_PLAN: bad entry .*(a fourth field is +)' "$EG_TMP/plan.out"; then
	eg_ok "a plan entry with a fourth field other than + is refused (exit 99)"
else
	eg_not_ok "a bad fourth plan field: exit $rc"
	sed 's/^/# /' "$EG_TMP/plan.out"
fi
"$E" bench ab "$EG_TMP/n.profile" --a sim:50 --b sim:50 --arm sim:50 \
	--reports "$EG_TMP/runs2" >"$EG_TMP/same.out" 2>&1
r1=$?
"$E" bench ab "$EG_TMP/n.profile" --a sim:50 --reports "$EG_TMP/runs2" \
	>"$EG_TMP/one.out" 2>&1
r2=$?
"$E" bench ab "$EG_TMP/n.profile" --a sim:50 --b sim:60 --arm a2a \
	--reports "$EG_TMP/runs2" >"$EG_TMP/none.out" 2>&1
r3=$?
# one --metric too many: refused before anything runs (no run folder)
"$E" bench ab "$EG_TMP/n.profile" --a sim:50 --b sim:60 $(for i in 1 2 3 4 5 6 7 8 9; do
	printf -- '--metric step_us '; done) --reports "$EG_TMP/runs3" >"$EG_TMP/many.out" 2>&1
r4=$?
if [ "$r4" -eq 99 ] && grep -q -- '--metric: at most 8' "$EG_TMP/many.out" && [ ! -d "$EG_TMP/runs3" ]; then
	eg_ok "refused: a ninth --metric (99, before any launch)"
else
	eg_not_ok "a ninth --metric: exit $r4"
	sed 's/^/# /' "$EG_TMP/many.out"
fi
if [ "$r1" -eq 99 ] && grep -q 'two different arms' "$EG_TMP/same.out" &&
	[ "$r2" -eq 99 ] && grep -q 'give both arms' "$EG_TMP/one.out" &&
	[ "$r3" -eq 99 ] && grep -q 'no point of arm a2a' "$EG_TMP/none.out"; then
	eg_ok "refused: the same arm twice, one arm, an arm with no point (99)"
else
	eg_not_ok "bench ab bad arms ($r1 $r2 $r3)"
fi
eg_done
