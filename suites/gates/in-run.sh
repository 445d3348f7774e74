#!/bin/sh
# The in-run gates judge every launch of a point (issue 27: they once
# judged the first launch of N, and the sweep table printed it): on the
# null backend's modeled steps (sim:US, a 2% spread drawn per step, so
# each launch's median differs), a profile of 4 launches per point with
# a bound gate. The gate's result in the run equals `epgate gate` run
# again on the results file; the sweep table's medians are the ones the
# gate read. A reading of one launch of the four (the fault) differs
# from the re-run's reading of all four at these precisions.
. "${EG_SRCDIR:-.}/suites/lib.sh"

E=$EG_EPGATE
cat >"$EG_TMP/b.profile" <<'EOF2'
profile: inrun
transport: null
repetitions: {warmup: 1, iters: 6, launches: 4}
base: {world: 1, nodes: 1}
sweeps:
  - {name: s, arms: ["sim:50"], axes: {concurrency: [8, 16]}}
EOF2
printf '%s\n' 'profile: inrun' 'gates:' '  - name: budget' \
	'    sentence: "Every step under 1 ms."' '    rule: bound' \
	'    metric: step_us' '    max: 1000' >"$EG_TMP/b.gate"
"$E" bench profile "$EG_TMP/b.profile" --gates "$EG_TMP/b.gate" \
	--reports "$EG_TMP/runs" >"$EG_TMP/b.out" 2>&1
rc=$?
RUN=$(ls -d "$EG_TMP"/runs/*/ 2>/dev/null | head -n 1)
"$E" gate --gates "$EG_TMP/b.gate" "${RUN}bench-inrun.json" --reports "$EG_TMP/g" >"$EG_TMP/g.out" 2>&1
grc=$?
inrun=$(grep '^PASS  *budget ' "$EG_TMP/b.out")
again=$(grep '^PASS  *budget ' "$EG_TMP/g.out")
if [ "$rc" -eq 0 ] && [ "$grc" -eq 0 ] && [ -n "$inrun" ] && [ "$inrun" = "$again" ]; then
	eg_ok "the in-run gate and epgate gate on the results agree: ${inrun#*step_us }"
else
	eg_not_ok "in-run '$inrun' (exit $rc), again '$again' (exit $grc)"
	tail -n 8 "$EG_TMP/b.out" | sed 's/^/# /'
fi
# the table's median per point: "  concurrency=N  sim:50  MEDIAN  [..."
table() { sed -n 's/^  concurrency=\([0-9]*\)  *sim:50  *\([0-9.]*\)  *\[.*/\1 \2/p' "$EG_TMP/b.out" | sort -n; }
t=$(table | awk '{ print $2 }' | sort -n | tr '\n' ' ')
lo=$(echo "$inrun" | sed -n 's/.*step_us  *\([0-9.]*\) \.\. \([0-9.]*\) over 2 points.*/\1 \2 /p')
if [ "$(table | wc -l)" -eq 2 ] && [ -n "$lo" ] &&
	awk -v t="$t" -v g="$lo" 'BEGIN { split(t, a, " "); split(g, b, " ")
		exit !((a[1] - b[1])^2 < 1e-6 && (a[2] - b[2])^2 < 1e-6) }'; then
	eg_ok "the sweep table's medians ($t) are the ones the gate read"
else
	eg_not_ok "the table's medians '$t', the gate's '$lo'"
fi
# planted: the results as one launch of the four reads them (each
# metric's first launch alone) -- the reading the in-run gates once had --
# judged again: the result is not the run's
python3 - "${RUN}bench-inrun.json" "$EG_TMP/one.json" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
for p in d["points"]:
    p["passes"] = p["passes"][:1]
    for m in p["metrics"].values():
        if isinstance(m, dict) and m.get("launches") and m.get("samples"):
            m["samples"] = m["samples"][:m["launches"][0]]
            m["launches"] = m["launches"][:1]
            m["n"] = len(m["samples"])
            m["median"] = statistics.median(m["samples"])
json.dump(d, open(sys.argv[2], "w"))
PY
"$E" gate --gates "$EG_TMP/b.gate" "$EG_TMP/one.json" --reports "$EG_TMP/g" >"$EG_TMP/one.out" 2>&1
one=$(grep '^[A-Z]*  *budget ' "$EG_TMP/one.out")
if [ -n "$one" ] && [ "$one" != "$inrun" ]; then
	eg_ok "planted: one launch of four reads ${one#*step_us }, not the run's"
else
	eg_not_ok "planted one-launch reading: '$one'"
	tail -n 5 "$EG_TMP/one.out" | sed 's/^/# /'
fi
eg_done
