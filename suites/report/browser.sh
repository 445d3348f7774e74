#!/bin/sh
# The report in a real browser (docs/reports.md, "Tested in a browser"):
# the pages of the shipped campaigns (the field report's seed and the
# measured h200x2 ones) opened in headless Chromium by browser.py, which
# checks what a person sees against `epgate gate` and the results files;
# then a page with planted faults (a changed number, a changed verdict,
# a broken image) must fail exactly those checks. Needs Debian's
# chromium, chromium-driver, python3-selenium and python3-yaml (CI
# installs them, .ci/run); without them it skips. EPGATE_SCREENSHOTS=DIR
# keeps a full-page PNG of each page there.
. "${EG_SRCDIR:-.}/suites/lib.sh"

S=$EG_SRCDIR
PY=python3
python3 -c 'import selenium, yaml' 2>/dev/null ||
	{ [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; }
if ! $PY -c 'import selenium, yaml' 2>/dev/null ||
	! command -v chromium >/dev/null 2>&1 ||
	! command -v chromedriver >/dev/null 2>&1; then
	echo "1..0 # SKIP needs chromium, chromium-driver, python3-selenium, python3-yaml (sh setup.sh --report-tools)"
	exit 0
fi
shots=${EPGATE_SCREENSHOTS:-}

page() { # NAME RESULTS GATES: the page, whose exit status is the gates'
	"$EG_EPGATE" gate --gates "$3" "$2" --tap "$EG_TMP/$1.tap" \
		--junit "$EG_TMP/$1.xml" >/dev/null 2>&1
	grc=$?
	"$EG_EPGATE" report --results "$2" --gates "$3" -o "$EG_TMP/$1.html" \
		>/dev/null 2>&1
	[ "$?" -eq "$grc" ] && [ "$grc" -le 1 ]
}
for p in seed:p5en-ep16.recorded:p5en-ep16 nvlink:h200x2-nvlink.measured:h200x2-nvlink \
	xnode:h200x2-xnode.measured:h200x2-xnode; do
	name=${p%%:*}
	rest=${p#*:}
	res=$S/fixtures/campaigns/${rest%%:*}.json
	gates=$S/gates/${rest#*:}.gate
	if ! page "$name" "$res" "$gates"; then
		eg_not_ok "$name: epgate report failed"
		continue
	fi
	set -- --results "$res" --tap "$EG_TMP/$name.tap"
	[ -n "$shots" ] && set -- "$@" --screenshot "$shots/report-$name.png"
	$PY "$S/suites/report/browser.py" "$EG_TMP/$name.html" "$@" >"$EG_TMP/$name.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		eg_ok "$name in Chromium: $(grep -c '^ok' "$EG_TMP/$name.out") checks pass ($(sed -n 's/^ok [0-9]* - //p' "$EG_TMP/$name.out" | tr '\n' ';' | cut -c1-300))"
	else
		eg_not_ok "$name in Chromium: exit $rc"
		grep -v '^ok' "$EG_TMP/$name.out" | head -n 20 | sed 's/^/# /'
	fi
done

# planted faults: one number, one verdict, one image that is not there
sed -e '0,/data-value="980">980/s//data-value="980">981/' \
	-e '0,/data-gate="xnode-vllm-parity" data-verdict="pass"/s//data-gate="xnode-vllm-parity" data-verdict="fail"/' \
	-e 's|</footer>|<img src="nowhere.png" alt=""></footer>|' \
	"$EG_TMP/seed.html" >"$EG_TMP/planted.html"
$PY "$S/suites/report/browser.py" "$EG_TMP/planted.html" --results \
	"$S/fixtures/campaigns/p5en-ep16.recorded.json" --tap "$EG_TMP/seed.tap" \
	>"$EG_TMP/planted.out" 2>&1
rc=$?
for want in 'the page loads with no console error' 'the page fetches nothing' \
	'all 16 gates shown' 'numbers in the tables are the results'; do
	if [ "$rc" -eq 1 ] && grep -q "^not ok [0-9]* - .*$want" "$EG_TMP/planted.out"; then
		eg_ok "planted fault caught: not ok - $want"
	else
		eg_not_ok "planted fault not caught by \"$want\" (exit $rc)"
		head -n 20 "$EG_TMP/planted.out" | sed 's/^/# /'
	fi
done
eg_done
