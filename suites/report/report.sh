#!/bin/sh
# epgate report (docs/reports.md): the page of a campaign, of a run
# folder and of a history store, checked in its HTML (the browser test,
# browser.sh, checks what Chromium shows); its Markdown summary; the page
# without gnuplot; bad input. Its exit status and last line are the
# page's verdict (docs/reports.md, "One verdict"): 1 for the seed's
# failing gates, 0 for the measured campaigns', 77 for a page that judges
# nothing, 99 for bad input.
. "${EG_SRCDIR:-.}/suites/lib.sh"

S=$EG_SRCDIR
SEED=$S/fixtures/campaigns/p5en-ep16.recorded.json
G=$S/gates/p5en-ep16.gate
count() { grep -o "$1" "$2" | wc -l; }

# --- the seed campaign: every gate with epgate gate's verdict, charts
"$EG_EPGATE" gate --gates "$G" "$SEED" --tap "$EG_TMP/seed.tap" \
	--junit "$EG_TMP/seed.xml" >/dev/null 2>&1
"$EG_EPGATE" report --results "$SEED" --gates "$G" -o "$EG_TMP/seed.html" \
	>"$EG_TMP/out" 2>&1
rc=$?
want=$(sed -n 's/^\(not \)\{0,1\}ok [0-9]* - \([a-z0-9.-]*\): .*/\2/p' "$EG_TMP/seed.tap" | sort | tr '\n' ' ')
got=$(sed -n 's/.*<tr class="gate [a-z]*" id="[^"]*" data-profile="[^"]*" data-gate="\([^"]*\)".*/\1/p' "$EG_TMP/seed.html" | sort | tr '\n' ' ')
if [ "$rc" -eq 1 ] && [ -n "$want" ] && [ "$want" = "$got" ] &&
	[ "$(tail -n 1 "$EG_TMP/out")" = "FAIL: 3 of 16 gates failed, 3 inconclusive, 1 skipped (exit 1)" ]; then
	eg_ok "report of the seed campaign: all $(echo "$got" | wc -w) gates of the gate file; exit 1 and '$(tail -n 1 "$EG_TMP/out")', its gates' verdict"
else
	eg_not_ok "report of the seed campaign: exit $rc, gates [$got], want [$want]"
	sed 's/^/# /' "$EG_TMP/out"
fi
verdicts() { # gate verdict pairs: from the TAP, and from the page
	sed -n -e 's/^ok [0-9]* - \([a-z0-9.-]*\): .* # SKIP.*/\1 skip/p' \
		-e 's/^not ok [0-9]* - \([a-z0-9.-]*\): .* # TODO.*/\1 inconclusive/p' \
		-e '/ # SKIP\| # TODO/!s/^ok [0-9]* - \([a-z0-9.-]*\): .*/\1 pass/p' \
		-e '/ # SKIP\| # TODO/!s/^not ok [0-9]* - \([a-z0-9.-]*\): .*/\1 fail/p' \
		"$1" | sort
}
page_verdicts() {
	sed -n 's/.*data-gate="\([^"]*\)" data-verdict="\([a-z]*\)">.*/\1 \2/p' "$1" | sort
}
if [ "$(verdicts "$EG_TMP/seed.tap")" = "$(page_verdicts "$EG_TMP/seed.html")" ]; then
	eg_ok "the page's verdicts are epgate gate's (3 fail, 12 pass, 1 skip)"
else
	eg_not_ok "verdicts differ from epgate gate's"
	verdicts "$EG_TMP/seed.tap" >"$EG_TMP/seed.v"
	page_verdicts "$EG_TMP/seed.html" >"$EG_TMP/page.v"
	diff "$EG_TMP/seed.v" "$EG_TMP/page.v" | sed 's/^/# /'
fi
svg=$(count '<svg' "$EG_TMP/seed.html")
figs=$(count '<figure class="chart"' "$EG_TMP/seed.html")
if [ "$svg" -ge 8 ] && [ "$svg" -eq "$figs" ] &&
	[ "$(count 'class="failure" data-kind="gate"' "$EG_TMP/seed.html")" -eq 3 ] &&
	[ "$(count '<pre class="repro">epgate gate --gates ' "$EG_TMP/seed.html")" -eq 3 ]; then
	eg_ok "$figs charts, each an inline SVG; the 3 failing gates with their repro lines"
else
	eg_not_ok "$svg SVGs for $figs charts; failures: $(count 'data-kind="gate"' "$EG_TMP/seed.html")"
fi
# self-contained: nothing the page would fetch (the SVG namespace URIs
# are names, not fetches)
if ! grep -q -i '<script\|<link\|<img\|src=\|url(http\|@import' "$EG_TMP/seed.html"; then
	eg_ok "the page fetches nothing: no script, link, img, src or url(http)"
else
	eg_not_ok "the page refers to something outside it"
	grep -o -i '<script[^>]*\|<link[^>]*\|src=[^ ]*\|url(http[^)]*' "$EG_TMP/seed.html" | head -n 5 | sed 's/^/# /'
fi

# --- a planted change in the data shows on the page: EP8 ratio 0.90
sed 's/"median": 980.0, "ci_lo": 950.6, "ci_hi": 1009.0/"median": 900.0, "ci_lo": 873.0, "ci_hi": 927.0/' \
	"$SEED" >"$EG_TMP/ep8.json"
"$EG_EPGATE" report --results "$EG_TMP/ep8.json" --gates "$G" -o "$EG_TMP/ep8.html" >/dev/null 2>&1
if page_verdicts "$EG_TMP/ep8.html" | grep -q '^intra-node-parity fail$' &&
	grep -q 'data-point="ep8-a2a" data-metric="tok_s" data-value="900"' "$EG_TMP/ep8.html"; then
	eg_ok "EP8 at 0.90 of dense: intra-node-parity fails on the page, 900 tok/s in its table"
else
	eg_not_ok "the planted EP8 change does not show"
fi

# --- without gnuplot: tables and a note; with a broken one: its error
EPGATE_GNUPLOT=none "$EG_EPGATE" report --results "$SEED" --gates "$G" \
	-o "$EG_TMP/nog.html" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ] && [ "$(count '<svg' "$EG_TMP/nog.html")" -eq 0 ] &&
	grep -q 'id="chart-note">charts need gnuplot (Debian package gnuplot-nox)' "$EG_TMP/nog.html" &&
	[ "$(count 'data-metric=' "$EG_TMP/nog.html")" -eq "$(count 'data-metric=' "$EG_TMP/seed.html")" ]; then
	eg_ok "without gnuplot: exit 1 (the gates' verdict), no chart, the note, every number still in the tables"
else
	eg_not_ok "without gnuplot: exit $rc"
fi
printf '#!/bin/sh\necho "line 3: broken" >&2\nexit 1\n' >"$EG_TMP/badgp"
chmod +x "$EG_TMP/badgp"
EPGATE_GNUPLOT=$EG_TMP/badgp "$EG_EPGATE" report --results "$SEED" --gates "$G" \
	-o "$EG_TMP/badgp.html" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'id="chart-note">gnuplot: line 3: broken' "$EG_TMP/badgp.html"; then
	eg_ok "a gnuplot that fails: the page says its error and keeps the tables"
else
	eg_not_ok "failing gnuplot: exit $rc"
fi

# --- the measured campaigns: their profile's gate file found by name
for p in h200x2-nvlink h200x2-xnode; do
	"$EG_EPGATE" report --results "$S/fixtures/campaigns/$p.measured.json" \
		-o "$EG_TMP/$p.html" >"$EG_TMP/$p.out" 2>&1
	rc=$?
	n=$(grep -c '^  - name:' "$S/gates/$p.gate")
	if [ "$rc" -eq 0 ] && [ "$(count 'class="gate ' "$EG_TMP/$p.html")" -eq "$n" ] &&
		[ "$(count '<svg' "$EG_TMP/$p.html")" -ge 5 ] &&
		tail -n 1 "$EG_TMP/$p.out" | grep -q '^PASS: 0 of [0-9]* gates failed.* (exit 0)$'; then
		eg_ok "$p: its $n gates (gates/$p.gate, found from the profile) and $(count '<svg' "$EG_TMP/$p.html") charts; exit 0, '$(tail -n 1 "$EG_TMP/$p.out")'"
	else
		eg_not_ok "$p: exit $rc"
		sed 's/^/# /' "$EG_TMP/$p.out"
	fi
done
# a campaign of a profile without a gate file: nothing judged, exit 77
sed 's/"profile": "p5en-ep16"/"profile": "no-such-profile"/' "$SEED" >"$EG_TMP/nogates.json"
"$EG_EPGATE" report --results "$EG_TMP/nogates.json" -o "$EG_TMP/nogates.html" >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 77 ] && grep -q 'no-such-profile' "$EG_TMP/nogates.json" &&
	tail -n 1 "$EG_TMP/out" | grep -q '^SKIP: nothing was judged.* (exit 77)$' &&
	grep -q 'data-verdict="skip">SKIP: nothing was judged' "$EG_TMP/nogates.html"; then
	eg_ok "a campaign no gate file judges: the page and '$(tail -n 1 "$EG_TMP/out")', exit 77"
else
	eg_not_ok "a campaign no gate file judges: exit $rc, $(tail -n 1 "$EG_TMP/out")"
fi

# --- a run folder: suites from its JUnit files, every failed case with
# its repro, the gates judged again in process (their JUnit failures not
# listed twice), summary.md beside summary.json
R=$EG_TMP/run
mkdir -p "$R"
cp "$SEED" "$R/bench-p5en-ep16.json"
"$EG_EPGATE" gate --gates "$G" "$R/bench-p5en-ep16.json" --tap "$R/bench-gates.tap" \
	--junit "$R/bench-gates.junit.xml" >/dev/null 2>&1
"$EG_EPGATE" check --quick --engine fault:drop-row --tap "$R/l1.tap" \
	--junit "$R/l1.junit.xml" >/dev/null 2>&1
printf '{"schema": "epgate/run-summary/v1", "profile": "p5en-ep16", "exit": 1}\n' >"$R/summary.json"
"$EG_EPGATE" report "$R" >"$EG_TMP/out" 2>&1
rc=$?
cases=$(count '<failure ' "$R/l1.junit.xml")
repro=$(count '<pre class="repro">epgate check ' "$R/report.html")
if [ "$rc" -eq 1 ] && [ "$cases" -ge 1 ] &&
	[ "$(count 'data-kind="case"' "$R/report.html")" -eq "$cases" ] &&
	[ "$repro" -eq "$cases" ] &&
	[ "$(count 'data-kind="gate"' "$R/report.html")" -eq 3 ] &&
	grep -q '<tr class="suite" data-suite="gates.p5en-ep16">' "$R/report.html" &&
	grep -q 'data-verdict="fail">FAIL: 3 of 16 gates failed, 3 inconclusive, 1 skipped; '"$cases"' of [0-9]* test cases failed' "$R/report.html"; then
	eg_ok "run folder: report.html lists the $cases failed L1 cases with their repro lines and the 3 failing gates once"
else
	eg_not_ok "run folder: exit $rc, $cases failed cases, $repro repro lines"
	sed 's/^/# /' "$EG_TMP/out"
fi
md=$R/summary.md
if [ -f "$md" ] && head -n 1 "$md" | grep -q '^## epgate: FAIL$' &&
	grep -q '(report.html)' "$md" &&
	[ "$(grep -c '^| [^|]* \(pass\|fail\|skip\|inconclusive\|error\) | `' "$md")" -eq 16 ] &&
	grep -q '^| ❌ fail | `experts-so-not-worse` | Doubling the experts' "$md" &&
	grep -q "^### Failed cases ($cases)" "$md"; then
	eg_ok "summary.md: the verdict, the 16 gates with sentences and verdicts, the failed cases, the link to report.html"
else
	eg_not_ok "summary.md"
	sed 's/^/# /' "$md" | head -n 30
fi

# --- epgate bench profile writes report.html and summary.md in its folder
"$EG_EPGATE" bench profile "$S/suites/slurm/slurm-tiny.profile" \
	--reports "$EG_TMP/tiny" >"$EG_TMP/tiny.out" 2>&1
rc=$?
tr=$(ls -d "$EG_TMP"/tiny/*/ 2>/dev/null | head -n 1)
if [ "$rc" -eq 0 ] && [ -f "$tr/report.html" ] && [ -f "$tr/summary.md" ] &&
	[ "$(count 'class="gate pass"' "$tr/report.html")" -eq "$(grep -c '^ok [0-9]* - [^#]*$' "$tr/bench-gates.tap")" ] &&
	[ "$(count '<svg' "$tr/report.html")" -ge 3 ]; then
	eg_ok "bench profile: report.html ($(count '<svg' "$tr/report.html") charts, gates/local.gate found through bench-gates.junit.xml) and summary.md in the run folder"
else
	eg_not_ok "bench profile: exit $rc, no report.html in ${tr:-no folder}"
	tail -n 5 "$EG_TMP/tiny.out" | sed 's/^/# /'
fi

# --- history: verdicts run by run, change points where the data moved
H=$S/fixtures/history
"$EG_EPGATE" report --history "$H" -o "$EG_TMP/hist.html" >"$EG_TMP/out" 2>&1
rc=$?
row() { grep "<tr data-gate=\"$1\">" "$EG_TMP/hist.html" | grep -o 'data-verdict="[a-z]*"' | sed 's/data-verdict=//; s/"//g' | tr '\n' ' '; }
changes=$(sed -n 's/<tr class="change"><td>\([0-9TZ]*\)<\/td>.*<code>\([a-z0-9-]*\)<\/code><\/a><\/td><td><code>\([^<]*\)<\/code>.*\(worse\|better\)<\/td><\/tr>/\1 \2 \3 \4/p' "$EG_TMP/hist.html")
if [ "$rc" -eq 1 ] && tail -n 1 "$EG_TMP/out" | grep -q '^FAIL: [0-9]* of [0-9]* gates failed in the latest runs.*change points (exit 1)$' &&
	[ "$(row xnode-vllm-parity)" = "pass inconclusive pass fail fail " ] &&
	[ "$(row multicomm-serving-wins)" = "fail fail inconclusive inconclusive inconclusive " ] &&
	[ "$(echo "$changes" | grep -c '^20261123T020000Z xnode-vllm-parity vllm-decode-c[0-9]*-a2a worse$')" -eq 4 ] &&
	echo "$changes" | grep -q '^20261116T020000Z tok-s-regression mc-serving-k8-a2a better$' &&
	echo "$changes" | grep -q '^20261129T210637Z step-time-budget xnode-concurrency/a2a/concurrency=1024 worse$' &&
	! echo "$changes" | grep -q '20261109T020000Z'; then
	eg_ok "history: verdicts flip where the data did, change points on 16 Nov (better), 23 Nov and 29 Nov (worse), none for the 1% wobble; exit 1, the latest runs' verdict"
else
	eg_not_ok "history: exit $rc; vllm [$(row xnode-vllm-parity)], wins [$(row multicomm-serving-wins)]"
	echo "$changes" | head -n 20 | sed 's/^/# /'
	sed 's/^/# /' "$EG_TMP/out"
fi
mkdir -p "$EG_TMP/same/p5en-ep16/m"
for d in 01 02 03; do
	cp "$H/p5en-ep16/p5en-2x/20261102T020000Z.json" "$EG_TMP/same/p5en-ep16/m/202611${d}T000000Z.json"
done
"$EG_EPGATE" report --history "$EG_TMP/same" -o "$EG_TMP/same.html" >/dev/null 2>&1
if grep -q 'No change point' "$EG_TMP/same.html" &&
	[ "$(count '<tr class="change">' "$EG_TMP/same.html")" -eq 0 ]; then
	eg_ok "history of three identical runs: no change point"
else
	eg_not_ok "identical runs show a change point"
fi

# --- bad input: one line naming it, exit 99
bad() {
	want=$1
	shift
	"$EG_EPGATE" report "$@" >"$EG_TMP/bad.out" 2>&1
	rc=$?
	if [ "$rc" -eq 99 ] && grep -q -- "$want" "$EG_TMP/bad.out"; then
		eg_ok "report $*: exit 99, $(head -n 1 "$EG_TMP/bad.out")"
	else
		eg_not_ok "report $*: exit $rc, want 99 and \"$want\""
		sed 's/^/# /' "$EG_TMP/bad.out"
	fi
}
bad 'give one of RUN_DIR, --results FILE or --history DIR'
bad '-o FILE is required' --results "$SEED"
bad "$EG_TMP/none.json" --results "$EG_TMP/none.json" -o "$EG_TMP/x.html"
printf 'profile: p\ngates:\n  - name: g\n    rule: bund\n' >"$EG_TMP/bad.gate"
bad "bad.gate:4: unknown rule \"bund\"" --results "$SEED" --gates "$EG_TMP/bad.gate" -o "$EG_TMP/x.html"
bad "not a folder" --history "$EG_TMP/nowhere" -o "$EG_TMP/x.html"
bad 'unknown option "--colour"' --colour
printf '{"schema": "epgate/results/v1", "recorded": true, "context": {}, "points": []}\n' >"$EG_TMP/h.json"
mkdir -p "$EG_TMP/hbad/p/m" && cp "$EG_TMP/h.json" "$EG_TMP/hbad/p/m/yesterday.json"
bad 'yesterday.json: the name is not a UTC stamp' --history "$EG_TMP/hbad" -o "$EG_TMP/x.html"

# --- a screenshot, when Chromium is here
if command -v chromium >/dev/null 2>&1; then
	"$EG_EPGATE" report --results "$SEED" --gates "$G" -o "$EG_TMP/s.html" \
		--screenshot "$EG_TMP/s.png" >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(head -c 8 "$EG_TMP/s.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ]; then
		eg_ok "--screenshot: a PNG of the page ($(wc -c <"$EG_TMP/s.png") bytes)"
	else
		eg_not_ok "--screenshot: exit $rc"
		sed 's/^/# /' "$EG_TMP/out"
	fi
else
	eg_ok "--screenshot # SKIP no chromium here"
fi
eg_done
