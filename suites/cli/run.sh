#!/bin/sh
# epgate run says one truth (issue 15): the exit code, the last line,
# summary.json and the closing reports list agree, and every stage (L1,
# L2, GPU, bench, gates) is in each -- with a failing gate, a failing
# engine and a passing run. The small data folder fixtures/run-mini
# (EPGATE_DATADIR) keeps each run to seconds.
. "${EG_SRCDIR:-.}/suites/lib.sh"
MINI=$EG_TMP/mini
cp -R "$EG_SRCDIR/fixtures/run-mini" "$MINI" && chmod -R u+w "$MINI" || exit 99

# run NAME ARGS...: epgate run; sets rc, out, dir (the run folder), sum
run() {
	name=$1
	shift
	out=$EG_TMP/$name.out
	EPGATE_DATADIR=$MINI "$EG_EPGATE" run --reports "$EG_TMP/runs-$name" "$@" \
		>"$out" 2>"$EG_TMP/$name.err"
	rc=$?
	dir=$(sed -n 's/^epgate run: profile local, run folder \(.*\)$/\1/p' "$out")
	sum=$dir/summary.json
}
# jq-free reads of summary.json: a top-level key, a stage's key
top() { sed -n "s/^  \"$1\": \(.*\),\{0,1\}$/\1/p" "$sum" | sed 's/,$//' | head -n 1; }
stage() {
	awk -v s="\"name\": \"$1\"" -v k="\"$2\": " '
	index($0, s) { on = 1 } on && index($0, k) { sub(/.*": /, ""); sub(/,$/, ""); print; exit }' "$sum"
}
# every file of the run folder is in summary.json's files and named by
# the closing reports list (by name, or by its PREFIX*.EXT group)
all_named() {
	for f in $(ls "$dir"); do
		grep -q "\"$f\"" "$sum" || { echo "# $f: not in summary.json"; return 1; }
		sed -n '/^reports: /,$p' "$out" | grep -q " $f\( \|$\)" && continue
		found=0
		for g in $(sed -n '/^reports: /,$p' "$out" | grep -o ' [^ ]*\*[^ ]*'); do
			case $f in $g) found=1 ;; esac
		done
		[ "$found" = 1 ] || { echo "# $f: not in the reports list"; return 1; }
	done
}
stages_all() {
	for s in l1 l2 gpu bench gates; do
		[ -n "$(stage $s status)" ] || { echo "# stage $s missing"; return 1; }
		grep -q "^  $(stage $s label | tr -d '"') " "$out" || { echo "# $s not in the table"; return 1; }
	done
}

# --- a gate that fails: exit 1, and everything says so
cat >>"$MINI/gates/local.gate" <<'YAML'
  - name: planted-no-time
    sentence: "Planted: every step takes no time at all."
    rule: bound
    metric: step_us
    max: 0
YAML
run gate
last=$(tail -n 1 "$out")
if [ "$rc" -eq 1 ] && [ "$(top exit)" = 1 ] && [ "$(top verdict)" = '"FAIL"' ] &&
	echo "$last" | grep -q '^FAIL: [0-9]* passed, 1 failed, .*(exit 1)$' &&
	[ "$(stage gates status)" = '"fail"' ] && [ "$(stage gates failed)" = 1 ] &&
	grep -q '"case": "planted-no-time"' "$sum" &&
	grep -q 'data-verdict="fail">FAIL: 1 of [0-9]* gates failed.* (exit 1)<' "$dir/report.html" &&
	[ "$(head -n 1 "$dir/summary.md")" = "## epgate: FAIL" ]; then
	eg_ok "a failing gate: exit 1, '$last', summary.json exit 1 naming the gate, the page's banner and summary.md FAIL"
else
	eg_not_ok "a failing gate: exit $rc, last line '$last', summary exit '$(top exit)'"
	tail -n 15 "$out" | sed 's/^/# /'
fi
if stages_all && all_named && grep -q '^  gates  .*bench-gates.junit.xml bench-gates.tap' "$out" &&
	grep -q '^  bench  bench-local.json' "$out" &&
	grep -q '"totals": {' "$sum" && grep -q '"bench-gates.tap"' "$sum"; then
	eg_ok "every stage in the table and summary.json; every file of the folder in both ($(ls "$dir" | wc -l) files)"
else
	eg_not_ok "every stage and every file named"
	sed -n '/^epgate run: FAIL/,$p' "$out" | sed 's/^/# /'
fi
# the gate table: the metric, the sentence, the failing points
if grep -q '^FAIL  *planted-no-time  *bound  *step_us ' "$out" &&
	grep -q '^  *"Planted: every step takes no time at all."$' "$out" &&
	grep -q '^  *failing: 2 of 2: mini/a2a/concurrency=8 [0-9.]*, mini/dense/concurrency=8 [0-9.]*$' "$out"; then
	eg_ok "the gate's row: metric, sentence and both failing points"
else
	eg_not_ok "the gate's row: metric, sentence and failing points"
	grep -A 3 'planted-no-time' "$out" | sed 's/^/# /'
fi

# --- an engine that fails L1: its failures with repro lines, exit 1
cp "$EG_SRCDIR/fixtures/run-mini/gates/local.gate" "$MINI/gates/local.gate"
run engine --engine fault:stale
if [ "$rc" -eq 1 ] && [ "$(stage l1 status)" = '"fail"' ] &&
	[ "$(stage l1 failed)" = 2 ] && grep -q '"repro": "epgate check --engine=fault:stale ' "$sum" &&
	grep -q '^FAIL one-w2: dispatch, iteration 1' "$out" &&
	grep -q '^  repro: epgate check --engine=fault:stale --iters=[0-9]* --name=one-w2 ' "$out" &&
	tail -n 1 "$out" | grep -q '^FAIL: .* 2 failed, .*(exit 1)$'; then
	eg_ok "L1 failing: exit 1, each failure said with its repro, in summary.json too"
else
	eg_not_ok "L1 failing: exit $rc, l1 $(stage l1 status)"
	tail -n 15 "$out" | sed 's/^/# /'
fi

# --- a passing run: PASS everywhere; the GPU stage says why it skipped
run pass
if [ "$rc" -eq 0 ] && [ "$(top exit)" = 0 ] && [ "$(top verdict)" = '"PASS"' ] &&
	tail -n 1 "$out" | grep -q '^PASS: [0-9]* passed, 0 failed, 0 skipped (exit 0)$' &&
	stages_all && all_named && [ -n "$(stage gpu reason)" ] &&
	grep -q '^  GPU    SKIP .*  [a-z]' "$out" &&
	grep -q 'data-verdict="pass">PASS: 0 of [0-9]* gates failed.* (exit 0)<' "$dir/report.html" &&
	[ "$(head -n 1 "$dir/summary.md")" = "## epgate: PASS" ]; then
	eg_ok "a passing run: exit 0, '$(tail -n 1 "$out")'; GPU: $(stage gpu reason)"
else
	eg_not_ok "a passing run: exit $rc"
	tail -n 15 "$out" | sed 's/^/# /'
fi
# progress: a line per L2 job as it ends, the sweep's table with its
# interval and ratio columns, in fixed-width units
if grep -q '^  L2     \[3/3\] a2a.w2.n1.tcp.k1: 1 passed, 0 failed, [0-9.]* s$' "$out" &&
	grep -q '^  point  *arm  *step ([mu]\{0,1\}s)  *95% CI  *dispatch ([mu]\{0,1\}s)  *combine ([mu]\{0,1\}s)  *[kM]\{0,1\}tok/s  *a2a/dense tok_s  *timed at  *bound$' "$out" &&
	grep -q '^  concurrency=8  *a2a  *[0-9.]*  *\[[0-9.]*, [0-9.]*\] ' "$out" &&
	! sed -n '/^  point /,/^epgate bench:/p' "$out" | grep -q '[0-9]e[+-][0-9]'; then
	eg_ok "progress per L2 job; the sweep's table with intervals, a2a/dense and units, no exponents"
else
	eg_not_ok "progress lines and the sweep's table"
	sed -n '/^  L2 /p;/^  point /,/^epgate bench:/p' "$out" | sed 's/^/# /'
fi
# the GPU stage's jobs run without a GPU (EPGATE_GPU_STAGE=run): each
# is a skip that says why, its reports named like the others'
if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	eg_ok "the GPU stage's jobs without a GPU # SKIP this host has GPUs"
else
	EPGATE_GPU_STAGE=run run gpu
	if [ "$rc" -eq 0 ] && [ "$(stage gpu status)" = '"skip"' ] && [ "$(stage gpu skipped)" = 3 ] &&
		grep -q '^  GPU    \[3/3\] gpu-a2a.w2.n2.xnode.k4: 0 passed, 0 failed, [0-9.]* s; skipped: epgate l2-gpu-rank: rank [01]: ' "$out" &&
		grep -q '^  GPU    gpu.junit.xml gpu.tap l2-gpu-\*.log (3)$' "$out" && all_named; then
		eg_ok "the GPU stage's 3 jobs without a GPU: skips that say why ($(stage gpu reason))"
	else
		eg_not_ok "the GPU stage's jobs without a GPU: exit $rc, gpu $(stage gpu status)"
		grep '^  GPU' "$out" | sed 's/^/# /'
	fi
fi

# the sweep's table for machines: --json (a JSON object per point), and
# --wide (every metric with its interval, the evidence)
EPGATE_DATADIR=$MINI "$EG_EPGATE" bench profile local --json --no-gates \
	--reports "$EG_TMP/runs-json" >"$EG_TMP/json.out" 2>/dev/null
rc=$?
nj=$(grep -c '^{"id":"mini/[a-z0-9]*/concurrency=8",.*"metrics":{.*"step_us":{"median":' "$EG_TMP/json.out")
EPGATE_DATADIR=$MINI "$EG_EPGATE" bench profile local --wide --no-gates \
	--reports "$EG_TMP/runs-json" >"$EG_TMP/wide.out" 2>/dev/null
rc2=$?
if [ "$rc" -eq 0 ] && [ "$nj" -eq 2 ] && grep -q '"a2a_over_dense":{"tok_s":' "$EG_TMP/json.out" &&
	[ "$rc2" -eq 0 ] && grep -q '^  point  *dispatch_us ([mu]s)  *dispatch_us 95% CI .* transport_class  *provider  *bound$' "$EG_TMP/wide.out"; then
	eg_ok "bench profile --json: a JSON object per point; --wide: every metric, its interval, the evidence"
else
	eg_not_ok "bench profile --json/--wide: exit $rc/$rc2, $nj JSON points"
	head -n 3 "$EG_TMP/json.out" "$EG_TMP/wide.out" | sed 's/^/# /'
fi
# one stream for the story: check's closing on stdout like run's; the
# gate table before what follows it on stderr, in one log
EPGATE_DATADIR=$MINI "$EG_EPGATE" check --reports "$EG_TMP/runs-check" \
	>"$EG_TMP/c.out" 2>"$EG_TMP/c.err"
rc=$?
"$EG_EPGATE" gate --gates "$EG_SRCDIR/gates/p5en-ep16.gate" --tap "$EG_TMP/g.tap" \
	--junit "$EG_TMP/g.xml" "$EG_SRCDIR/fixtures/campaigns/p5en-ep16.recorded.json" \
	>"$EG_TMP/g.log" 2>&1
if [ "$rc" -eq 0 ] && [ ! -s "$EG_TMP/c.err" ] &&
	tail -n 1 "$EG_TMP/c.out" | grep -q '^PASS: 2 passed, 0 failed (exit 0)$' &&
	[ "$(grep -n '^FAIL  *experts-so-not-worse ' "$EG_TMP/g.log" | cut -d: -f1)" -lt \
		"$(grep -n '^epgate gate: TAP ' "$EG_TMP/g.log" | cut -d: -f1)" ] &&
	tail -n 1 "$EG_TMP/g.log" | grep -q '^FAIL: 16 gates: 9 pass, 3 fail, 3 inconclusive, 1 skip (exit 1)$'; then
	eg_ok "check's closing on stdout (stderr empty); in a log the gate table comes before 'epgate gate: TAP', its verdict last"
else
	eg_not_ok "output streams: check exit $rc, stderr '$(head -n 1 "$EG_TMP/c.err")'"
	cat "$EG_TMP/g.log" | tail -n 4 | sed 's/^/# /'
fi

# bad --reports: said, 99, nothing run
EPGATE_DATADIR=$MINI "$EG_EPGATE" run --reports /proc/nope >"$EG_TMP/o" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q '^epgate run: --reports /proc/nope: cannot create the folder /proc/nope: ' "$EG_TMP/o" &&
	! grep -q 'input/output error' "$EG_TMP/o"; then
	eg_ok "run --reports /proc/nope: $(head -n 1 "$EG_TMP/o")"
else
	eg_not_ok "run --reports /proc/nope: exit $rc"
	sed 's/^/# /' "$EG_TMP/o"
fi
eg_done
