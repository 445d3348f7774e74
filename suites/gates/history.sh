#!/bin/sh
# The history of campaigns (docs/results-v1.md, "History"): `bench profile
# --history DIR` stores each campaign as DIR/<profile>/<machine>/<stamp>.json
# (atomically, EPGATE_MACHINE naming the machine), `epgate gate --history
# DIR [--last N]` takes the last N of the results' profile and machine as
# the baseline, and the regression rule judges against the spread between
# campaigns (history-t): a day's drift inside it passes, a slowdown beyond
# it fails; a single campaign as the baseline would have flagged the drift.
. "${EG_SRCDIR:-.}/suites/lib.sh"

E=$EG_EPGATE
H=$EG_TMP/hist
export EPGATE_MACHINE=test-box

# campaign FILE LEVEL: results of profile hist on test-box, one point of
# 4 launches x 5 steps around LEVEL us (launch levels +-2%)
campaign() {
	awk -v lvl="$2" -v f="$1" 'BEGIN {
		n = split("0.98 1.00 1.02 0.99", L, " ")
		s = ""; med = ""
		for (j = 1; j <= n; j++) for (i = 0; i < 5; i++) {
			v = sprintf("%.3f", lvl * L[j] * (1 + (i - 2) * 0.005)) + 0
			s = s (s == "" ? "" : ", ") sprintf("%.3f", v)
			x[++k] = v
		}
		for (a = 2; a <= k; a++) for (b = a; b > 1 && x[b - 1] > x[b]; b--) {
			t = x[b]; x[b] = x[b - 1]; x[b - 1] = t
		}
		printf "{\"schema\": \"epgate/results/v1\", \"recorded\": false,\n" > f
		printf "\"context\": {\"profile\": \"hist\", \"machine\": \"test-box\", \"created\": \"2026-12-01T00:00:00Z\"},\n" > f
		printf "\"points\": [\n  {\"id\": \"s/a2a/c=1\", \"suite\": \"s\", \"arm\": \"a2a\", \"axes\": {\"c\": 1}, \"passes\": [0, 1, 2, 3], \"metrics\": {\"step_us\": {\"median\": %.6f, \"n\": 20, \"samples\": [%s], \"launches\": [5, 5, 5, 5]}}}\n]}\n", (x[10] + x[11]) / 2, s > f
	}'
}

cat >"$EG_TMP/r.gate" <<'EOF'
profile: hist
gates:
  - name: step-regression
    sentence: "Step time does not regress by more than 5% against the history."
    rule: regression
    metric: step_us
    arms: [a2a]
EOF

# a history of 10 campaigns drifting by +-3% from day to day
mkdir -p "$H/hist/test-box"
i=0
for lvl in 1000 1030 975 1010 990 1025 980 1005 1020 995; do
	campaign "$H/hist/test-box/2026120${i}T000000Z.json" "$lvl"
	i=$((i + 1))
done
campaign "$EG_TMP/drift.json" 1028
campaign "$EG_TMP/slow.json" 1150

"$E" gate --gates "$EG_TMP/r.gate" --history "$H" --tap "$EG_TMP/d.tap" \
	--junit "$EG_TMP/d.xml" "$EG_TMP/drift.json" >"$EG_TMP/d.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'method: history-t' "$EG_TMP/d.tap" &&
	grep -q 'change_points:' "$EG_TMP/d.tap" && grep -q 'medians:' "$EG_TMP/d.tap"; then
	eg_ok "a 3% drift inside the history's spread does not fail (history-t; the series and its change points in the report)"
else
	eg_not_ok "drift against the history (exit $rc)"
	sed 's/^/# /' "$EG_TMP/d.out" "$EG_TMP/d.tap"
fi
"$E" gate --gates "$EG_TMP/r.gate" --history "$H" --tap "$EG_TMP/s.tap" \
	--junit "$EG_TMP/s.xml" "$EG_TMP/slow.json" >"$EG_TMP/s.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^FAIL  *step-regression .*1 of 1 regressed' "$EG_TMP/s.out"; then
	eg_ok "a 15% slowdown fails against the history"
else
	eg_not_ok "slowdown against the history (exit $rc)"
	sed 's/^/# /' "$EG_TMP/s.out"
fi
# the same drift against one campaign: the launches say "worse"
"$E" gate --gates "$EG_TMP/r.gate" --baseline "$H/hist/test-box/20261202T000000Z.json" \
	--tap "$EG_TMP/o.tap" --junit "$EG_TMP/o.xml" "$EG_TMP/drift.json" \
	>"$EG_TMP/o.out" 2>&1
rc=$?
if grep -q '^\(FAIL\|INCONCLUSIVE\)  *step-regression' "$EG_TMP/o.out"; then
	eg_ok "the drift against one campaign is not a pass (exit $rc): why the history"
else
	eg_not_ok "the drift against one campaign (exit $rc)"
	sed 's/^/# /' "$EG_TMP/o.out"
fi
# --last 2: too few campaigns for a spread: the launches are pooled
"$E" gate --gates "$EG_TMP/r.gate" --history "$H" --last 2 \
	--tap "$EG_TMP/l.tap" --junit "$EG_TMP/l.xml" "$EG_TMP/slow.json" \
	>"$EG_TMP/l.out" 2>&1
if grep -q 'campaigns: 2' "$EG_TMP/l.tap" && grep -q 'method: bootstrap' "$EG_TMP/l.tap"; then
	eg_ok "--last 2: two campaigns, their launches pooled"
else
	eg_not_ok "--last 2"
	sed 's/^/# /' "$EG_TMP/l.tap"
fi
# an empty history: the regression gate skips; bad options: 99
"$E" gate --gates "$EG_TMP/r.gate" --history "$EG_TMP/none" \
	--tap "$EG_TMP/n.tap" --junit "$EG_TMP/n.xml" "$EG_TMP/slow.json" \
	>"$EG_TMP/n.out" 2>&1
rc=$?
"$E" gate --gates "$EG_TMP/r.gate" --history "$H" --last 0 "$EG_TMP/slow.json" \
	>"$EG_TMP/b.out" 2>&1
rb=$?
"$E" gate --gates "$EG_TMP/r.gate" --history "$H" --baseline "$EG_TMP/slow.json" \
	"$EG_TMP/slow.json" >"$EG_TMP/b2.out" 2>&1
rb2=$?
if [ "$rc" -eq 77 ] && [ "$rb" -eq 99 ] && [ "$rb2" -eq 99 ] &&
	grep -q -- '--last' "$EG_TMP/b.out" && grep -q 'not both' "$EG_TMP/b2.out"; then
	eg_ok "no history: skip (77); --last 0 and --history with --baseline: 99"
else
	eg_not_ok "empty history and bad options ($rc $rb $rb2)"
fi

# the store: bench profile --history writes DIR/<profile>/<machine>/*.json
cat >"$EG_TMP/p.profile" <<'EOF'
profile: storetest
transport: null
repetitions: {warmup: 1, iters: 4, launches: 2}
base: {world: 1, nodes: 1}
sweeps:
  - {name: s, arms: ["work:20"], axes: {concurrency: [8, 16]}}
EOF
ok=1
for k in 1 2; do
	"$E" bench profile "$EG_TMP/p.profile" --no-gates --history "$EG_TMP/store" \
		--reports "$EG_TMP/runs" >"$EG_TMP/st$k.out" 2>&1 || ok=0
	# two campaigns in one second: the second stamp gets -2
done
n=$(ls "$EG_TMP/store/storetest/test-box/" 2>/dev/null | grep -c '^[0-9]\{8\}T[0-9]\{6\}Z\(-[0-9]*\)\{0,1\}\.json$')
f=$(ls "$EG_TMP/store/storetest/test-box/"*.json 2>/dev/null | head -n 1)
if [ "$ok" -eq 1 ] && [ "$n" -eq 2 ] && grep -q '"machine": "test-box"' "$f" &&
	grep -q '"passes": \[0, 1\]' "$f" && grep -q '^history: ' "$EG_TMP/st1.out" &&
	! ls "$EG_TMP/store/storetest/test-box/" | grep -q tmp; then
	eg_ok "bench profile --history stores each campaign under profile/machine/stamp.json"
else
	eg_not_ok "the store ($ok, $n files)"
	sed 's/^/# /' "$EG_TMP/st1.out" | tail -n 5
fi
sed 's/arms: \[a2a\]/arms: ["work:20"]/; s/profile: hist/profile: storetest/' \
	"$EG_TMP/r.gate" >"$EG_TMP/w.gate"
"$E" gate --gates "$EG_TMP/w.gate" --history "$EG_TMP/store" "$f" \
	--tap "$EG_TMP/x.tap" --junit "$EG_TMP/x.xml" >"$EG_TMP/x.out" 2>&1
if grep -q 'baseline: history' "$EG_TMP/x.tap" &&
	grep -q 'campaigns: 2' "$EG_TMP/x.tap"; then
	eg_ok "gate --history reads the stored campaigns as the baseline"
else
	eg_not_ok "gate --history on the store"
	sed 's/^/# /' "$EG_TMP/x.out"
fi
eg_done
