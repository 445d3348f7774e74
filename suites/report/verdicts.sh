#!/bin/sh
# Every verdict true on every path (docs/reports.md, "One verdict"): what
# a command decides (its exit status and last line), what it keeps
# (summary.json) and what its page says (the banner of report.html, the
# first line of summary.md) agree, for `gate`, `bench profile`, `check`
# and the pages `epgate report` makes of their folders, whose exit status
# and last line are the page's verdict; what the pages draw
# matches the data (lines in x order, change points beside their run's
# verdict); a job that dies is said as such; a calibration's last line
# counts every gate calibrated; a regression gate against a history
# states its power.  Each check plants the fault it is about.
. "${EG_SRCDIR:-.}/suites/lib.sh"

S=$EG_SRCDIR
count() { grep -o "$1" "$2" | wc -l; }
# the banner's verdict and text, and summary.md's first line
banner() { sed -n 's/.*<div class="banner [a-z]*" id="verdict" data-verdict="\([a-z]*\)">\([^<]*\)<.*/\1 \2/p' "$1"; }

# --- chart lines join the points in x order, not in the order they were
# measured (a campaign's file holds them shuffled: num_comms 4, 1, 2)
printf '#!/bin/sh\ncp "$1" "%s/charts.gp"\nexit 1\n' "$EG_TMP" >"$EG_TMP/gp"
chmod +x "$EG_TMP/gp"
unsorted() { # data blocks of a chart script whose x goes back
	awk '/<< EOD$/ { b = $1; n = 0; next } /^EOD$/ { b = ""; next }
	     b != "" { if (n && $1 < prev) print b; prev = $1; n++ }' "$1" | sort -u | wc -l
}
L=$S/fixtures/campaigns/local/20261201T034834Z-clean.json
EPGATE_GNUPLOT=$EG_TMP/gp "$EG_EPGATE" report --results "$L" \
	--gates "$S/gates/local.gate" -o "$EG_TMP/order.html" >/dev/null 2>&1
# planted: the same script with one series' points swapped back
sed '/^\$c[0-9]*s0 << EOD$/{n;h;n;G}' "$EG_TMP/charts.gp" >"$EG_TMP/swapped.gp"
if [ -s "$EG_TMP/charts.gp" ] && [ "$(unsorted "$EG_TMP/charts.gp")" -eq 0 ] &&
	[ "$(unsorted "$EG_TMP/swapped.gp")" -gt 0 ]; then
	eg_ok "charts of a shuffled campaign: every line in x order ($(grep -c '<< EOD$' "$EG_TMP/charts.gp") series; a planted swap is seen)"
else
	eg_not_ok "chart lines out of x order in $(unsorted "$EG_TMP/charts.gp") series"
fi

# --- a calibration's last line and exit status count every gate
# calibrated: the H200's history gate missing detection is not hidden by
# the A/B gates meeting theirs (suites/gates/calibrate.sh on campaigns
# already measured: 0 rounds, no warm-up)
C=$S/fixtures/campaigns
M=$EG_TMP/cal
mkdir -p "$M/campaigns"
cp "$C"/h200x1/*.json "$M/campaigns/"
for f in "$C"/h200x1-steps6/*-a[ab].json; do
	cp "$f" "$M/campaigns/5$(basename "$f")"
done
EG_HISTORY=5 EG_JUDGED=3 EG_QUICK=1 sh "$S/suites/gates/calibrate.sh" "$EG_EPGATE" h200x1 "$M" 0 0 >"$EG_TMP/cal.out" 2>&1
rc=$?
last=$(tail -n 1 "$EG_TMP/cal.out")
"$EG_EPGATE" bench calibrate "$C/h200x1-steps6" --gates "$S/gates/h200x1.gate" --quick >"$EG_TMP/cal6.out" 2>&1
rc6=$?
if [ "$rc" -eq 1 ] && grep -q 'h200x1.gate: false alarms 0 of [0-9]* (target met), planted caught [0-9]* of [0-9]* (target missed)' "$EG_TMP/cal.out" &&
	grep -q '^a/b gates .*planted caught 20 of 20 (target met)$' "$EG_TMP/cal.out" &&
	echo "$last" | grep -q '^calibration: TARGETS MISSED: .*h200x1.gate detection [0-9]* of [0-9]*; met: a/b gates$' &&
	[ "$rc6" -eq 0 ] && [ "$(tail -n 1 "$EG_TMP/cal6.out")" = "calibration: targets met by every gate calibrated (a/b gates)" ]; then
	eg_ok "calibration: '$last', exit 1; the A/B jobs alone: targets met, exit 0"
else
	eg_not_ok "calibration: exit $rc, last line '$last'; A/B alone exit $rc6"
	tail -n 4 "$EG_TMP/cal.out" | sed 's/^/# /'
fi

# one_verdict WHAT RC OUT RUN WORD: the exit status, the last line of OUT,
# RUN/summary.json, the banner of RUN/report.html, the first line of
# RUN/summary.md and `epgate report RUN` (its exit status, and its last
# line: the banner's) all say WORD (PASS, FAIL, ERROR, SKIP)
one_verdict() {
	what=$1 rc=$2 out=$3 run=$4 word=$5
	case $word in PASS) want=0 ;; FAIL) want=1 ;; SKIP) want=77 ;; *) want=99 ;; esac
	last=$(tail -n 1 "$out")
	"$EG_EPGATE" report "$run" >"$EG_TMP/report.out" 2>&1
	rrc=$?
	rlast=$(tail -n 1 "$EG_TMP/report.out")
	b=$(banner "$run/report.html")
	sj=$({ tr -d ' \n' <"$run/summary.json"; } 2>/dev/null)
	lc=$(echo "$word" | tr 'A-Z' 'a-z')
	if [ "$rc" -eq "$want" ] && echo "$last" | grep -q "^$word: .*(exit $want)\$" &&
		echo "$sj" | grep -q "\"exit\":$want,\"verdict\":\"$word\"" &&
		echo "$b" | grep -q "^$lc $word: .*(exit $want)\$" &&
		[ "$(head -n 1 "$run/summary.md")" = "## epgate: $word" ] &&
		[ "$rrc" -eq "$want" ] && [ "$rlast" = "${b#* }" ]; then
		eg_ok "$what: exit $rc, '$last', summary.json, the banner '${b#* }', summary.md and epgate report (exit $rrc) agree"
	else
		eg_not_ok "$what: exit $rc (want $want), last '$last', banner '$b', summary.md '$(head -n 1 "$run/summary.md" 2>/dev/null)', epgate report exit $rrc, '$rlast'"
	fi
}

# --- epgate gate's run folder: the page judges what the gate run judged
# (the campaign it names, by the gate file it used) and draws it
G=$S/gates/p5en-ep16.gate
SEED=$S/fixtures/campaigns/p5en-ep16.recorded.json
"$EG_EPGATE" gate --gates "$G" --reports "$EG_TMP/gr" "$SEED" >"$EG_TMP/g.out" 2>/dev/null
rc=$?
R=$(ls -d "$EG_TMP"/gr/*/ | head -n 1)
R=${R%/}
"$EG_EPGATE" report "$R" >/dev/null 2>&1
one_verdict "epgate gate" "$rc" "$EG_TMP/g.out" "$R" FAIL
if banner "$R/report.html" | grep -q '^fail FAIL: 3 of 16 gates failed, 3 inconclusive, 1 skipped (exit 1)$' &&
	grep -q '<h2>Failures (3)</h2>' "$R/report.html" &&
	[ "$(count 'class="failure" data-kind="gate"' "$R/report.html")" -eq 3 ] &&
	[ "$(count '<figure class="chart"' "$R/report.html")" -ge 8 ] &&
	[ "$(count 'class="gate fail"' "$R/report.html")" -eq 3 ]; then
	eg_ok "the gate run's page: its 16 verdicts, 3 failures and $(count '<figure class="chart"' "$R/report.html") charts of the campaign judged"
else
	eg_not_ok "the gate run's page: '$(banner "$R/report.html")', $(count '<figure class="chart"' "$R/report.html") charts"
fi
# planted: the record gone (a folder from before it), then a record whose
# counts are not what the gates give
mkdir -p "$EG_TMP/old"
cp "$R/gate.tap" "$R/gate.junit.xml" "$R/summary.json" "$EG_TMP/old/"
"$EG_EPGATE" report "$EG_TMP/old" >/dev/null 2>&1
cp -r "$R" "$EG_TMP/lied"
sed 's/"fail": 3/"fail": 2/' "$R/gate.judged.json" >"$EG_TMP/lied/gate.judged.json"
"$EG_EPGATE" report "$EG_TMP/lied" >/dev/null 2>&1
if banner "$EG_TMP/old/report.html" | grep -q '^fail FAIL: 3 of 16 gates failed, 3 inconclusive, 1 skipped (exit 1)$' &&
	grep -q 'id="page-note">gate.judged.json: judged here, the gates of p5en-ep16 give other verdicts than the gate run counted (fail: 3 here, 2 then)' "$EG_TMP/lied/report.html"; then
	eg_ok "planted: without its record the page counts the gates' JUnit (FAIL, not NOTHING RAN); a record that disagrees is said"
else
	eg_not_ok "planted records: old '$(banner "$EG_TMP/old/report.html")', lied: $(grep -o 'id="page-note">[^<]*' "$EG_TMP/lied/report.html")"
fi

# --- bench profile FILE --gates FILE: the page judges by the gate file
# the run used, not gates/<profile>.gate; a failing one fails everywhere
printf '%s\n' 'profile: mini' 'description: "two points and a gate file of its own"' \
	'transport: fabric' 'provider: auto' 'launcher: local' 'timeout: 20' \
	'repetitions: {warmup: 1, iters: 3}' \
	'base: {world: 2, nodes: 2, num_comms: 1, concurrency: 8, hidden: 128, experts: 4, topk: 2, dtype: bf16, routing: uniform}' \
	'sweeps:' '  - name: concurrency' '    arms: [a2a]' '    axes: {concurrency: [8, 16]}' \
	>"$EG_TMP/mini.profile"
mini() { # BUDGET_US TAG: a run into EG_TMP/TAG, R its folder
	printf '%s\n' 'profile: mini' 'gates:' '  - name: step-budget' \
		"    sentence: \"Every step takes under $1 us.\"" '    rule: bound' \
		'    metric: step_us' "    max: $1" >"$EG_TMP/mini.gate"
	(cd "$EG_TMP" && "$EG_EPGATE" bench profile ./mini.profile --gates ./mini.gate \
		--launches 1 --reports "$EG_TMP/$2") >"$EG_TMP/$2.out" 2>"$EG_TMP/$2.err"
	rc=$?
	R=$(ls -d "$EG_TMP/$2"/*/ 2>/dev/null | head -n 1)
	R=${R%/}
}
mini 100000000 mini
one_verdict "bench profile ./mini.profile --gates ./mini.gate" "$rc" "$EG_TMP/mini.out" "$R" PASS
if grep -q 'Gates of mini <span class="meta">(.*/mini.gate)</span>' "$R/report.html" &&
	! grep -q 'no gate file' "$R/report.html" "$R/summary.md" &&
	[ "$(count 'class="gate pass"' "$R/report.html")" -eq 1 ]; then
	eg_ok "its page judges by ./mini.gate, the one the run used: 1 gate, passed"
else
	eg_not_ok "the page of the mini run: $(grep -o 'Gates of mini.*</h3>' "$R/report.html")"
fi
mini 1 mini-fail
one_verdict "planted: the same with a budget of 1 us" "$rc" "$EG_TMP/mini-fail.out" "$R" FAIL

# --- a bench job that dies: said as such in its last progress line, and
# the run's verdict is an error everywhere
EPGATE_FAULT=kill:1:dispatch:10 "$EG_EPGATE" bench profile "$S/suites/slurm/slurm-tiny.profile" \
	--launches 1 --reports "$EG_TMP/dies" >"$EG_TMP/dies.out" 2>"$EG_TMP/dies.err"
rc=$?
R=$(ls -d "$EG_TMP"/dies/*/ | head -n 1)
R=${R%/}
died=$(sed -n 's/^epgate bench: job \(.*\) exited [0-9]* after \([0-9]*\) of \([0-9]*\) point(s).*/\1|\2|\3/p' "$EG_TMP/dies.err")
job=${died%%|*} rest=${died#*|}
got=${rest%%|*} of=${rest#*|}
if [ -n "$died" ] && [ "$got" -lt "$of" ] &&
	grep -q "^\[slurm-tiny\] $job: ended, $got of $of point(s) measured, $((of - got)) failed in " "$EG_TMP/dies.err" &&
	! grep -q "^\[slurm-tiny\] $job: done" "$EG_TMP/dies.err"; then
	eg_ok "a job that died after $got of $of points: 'ended, $got of $of point(s) measured, $((of - got)) failed', not 'done'"
else
	eg_not_ok "the job that died: '$died'; $(grep "^\[slurm-tiny\] .*: \(done\|ended\)" "$EG_TMP/dies.err" | tr '\n' ';')"
fi
one_verdict "bench profile with a job killed" "$rc" "$EG_TMP/dies.out" "$R" ERROR
if banner "$R/report.html" | grep -q "; $((of - got)) of [0-9]* points failed (exit 99)\$"; then
	eg_ok "its banner counts the $((of - got)) points lost"
else
	eg_not_ok "banner: $(banner "$R/report.html")"
fi

# --- epgate check's run folder (TAP, JUnit, summary.json): its page
# says the word of check's last line, a planted fault and without
check_page() { # TAG WORD ARGS...
	tag=$1 word=$2
	shift 2
	"$EG_EPGATE" check --quick --reports "$EG_TMP/$tag" "$@" >"$EG_TMP/$tag.out" 2>&1
	rc=$?
	R=$(ls -d "$EG_TMP/$tag"/*/ | head -n 1)
	"$EG_EPGATE" report "${R%/}" >"$EG_TMP/$tag.report" 2>&1
	rrc=$?
	lc=$(echo "$word" | tr 'A-Z' 'a-z')
	if tail -n 1 "$EG_TMP/$tag.out" | grep -q "^$word: .*(exit $rc)\$" &&
		banner "$R/report.html" | grep -q "^$lc $word: " && [ "$rrc" -eq "$rc" ] &&
		[ "$(tail -n 1 "$EG_TMP/$tag.report")" = "$(banner "$R/report.html" | cut -d' ' -f2-)" ] &&
		[ "$(head -n 1 "$R/summary.md")" = "## epgate: $word" ]; then
		eg_ok "check $*: exit $rc, '$(tail -n 1 "$EG_TMP/$tag.out")', the page '$(banner "$R/report.html" | cut -d' ' -f2-)', epgate report exit $rrc"
	else
		eg_not_ok "check $*: exit $rc, '$(tail -n 1 "$EG_TMP/$tag.out")', the page '$(banner "$R/report.html")', epgate report exit $rrc: $(tail -n 1 "$EG_TMP/$tag.report")"
	fi
}
check_page ck-fault FAIL --engine fault:drop-row
check_page ck-pass PASS

# --- a check whose library crashes (a planted abort on odd token counts,
# one case of three): the page's banner, summary.md, summary.json and
# check's last line count the cases alike, the CRASH as crashed, not
# failed; the suites table has a crashed column (docs/reports.md,
# "Status mapping")
printf '%s\n' 'world = 1' 'hidden = 64' 'experts = 8' 'topk = 2' '[c-even]' 'tokens = 16' \
	'[c-odd]' 'tokens = 17' '[c-small]' 'tokens = 8' >"$EG_TMP/crash.ini"
"$EG_EPGATE" check --engine "plugin:${EG_BUILDDIR:-.}/plugins/faults/libeg-fault-abort.so" \
	--workload "$EG_TMP/crash.ini" --reports "$EG_TMP/ck-crash" >"$EG_TMP/ck-crash.out" 2>&1
rc=$?
R=$(ls -d "$EG_TMP"/ck-crash/*/ | head -n 1)
R=${R%/}
"$EG_EPGATE" report "$R" >"$EG_TMP/ck-crash.report" 2>&1
rrc=$?
last=$(tail -n 1 "$EG_TMP/ck-crash.out")
b=$(banner "$R/report.html")
md=$(sed -n 3p "$R/summary.md")
# "F C" of a line: its failed and crashed counts
fc_last=$(echo "$last" | sed -n 's/^FAIL: [0-9]* passed, \([0-9]*\) failed, \([0-9]*\) crashed (exit 1)$/\1 \2/p')
fc_page() { echo "$1" | sed -n 's/.*FAIL: \([0-9]*\) of [0-9]* test cases failed, \([0-9]*\) crashed, [0-9]* skipped (exit 1).*/\1 \2/p'; }
if [ "$rc" -eq 1 ] && [ "$fc_last" = "0 1" ] && [ "$(fc_page "$b")" = "$fc_last" ] &&
	[ "$(fc_page "$md")" = "$fc_last" ] && echo "$b" | grep -q '^fail ' &&
	[ "$rrc" -eq 1 ] && [ "$(fc_page "$(tail -n 1 "$EG_TMP/ck-crash.report")")" = "$fc_last" ] &&
	grep -q '"crashed": 1' "$R/summary.json" &&
	grep -q '<tr class="suite" data-suite="epgate-l1"><td>epgate-l1</td><td class="num">3</td><td class="num">2</td><td class="num">0</td><td class="num">0</td><td class="num st-fail">1</td>' "$R/report.html"; then
	eg_ok "a crashing library: '$last'; the banner '${b#* }', summary.md and summary.json count 1 crashed, 0 failed"
else
	eg_not_ok "a crashing library: exit $rc, last '$last', banner '$b', summary.md '$md'"
	grep -o '<tr class="suite"[^\n]*</tr>' "$R/report.html" | head -n 2 | sed 's/^/# /'
fi

# the page shows what a maintainer acts on: the case, the signal, the
# library's own assert text and the command that runs the case again
crash_page() { # FILE: all four there
	grep -q 'SIGABRT' "$1" &&
		grep -q 'planted abort: the template takes even token counts only' "$1" &&
		grep -q 'epgate check --engine=plugin:[^<]*libeg-fault-abort.so[^<]*--name=c-odd[^<]*--tokens=17' "$1"
}
# planted: the same page with the library's message lost
sed 's/planted abort: the template takes even token counts only/[message lost]/g' \
	"$R/report.html" >"$EG_TMP/lost.html"
if crash_page "$R/report.html" && ! crash_page "$EG_TMP/lost.html"; then
	eg_ok "a crashing library's page: c-odd with SIGABRT, the library's assert text and its repro line (a page that lost the text fails)"
else
	eg_not_ok "a crashing library's page lacks the signal, the assert text or the repro"
fi

# --- the history page: each change point beside its gate's verdict at
# that run, the same as the verdict table's; repro lines as typed here
# (relative, not /home/...), wrapped inside the page
(cd "$S" && "$EG_EPGATE" report --history fixtures/history -o "$EG_TMP/h.html") >/dev/null 2>&1
matrix() { # "gate run verdict" of the verdict table
	sed -n 's/.*<tr data-gate="\([^"]*\)">\(.*\)/\1 \2/p' "$1" |
		while read -r g rest; do
			echo "$rest" | grep -o 'data-run="[^"]*" data-verdict="[a-z]*"' |
				sed "s/data-run=\"\([^\"]*\)\" data-verdict=\"\([a-z]*\)\"/$g \1 \2/"
		done | sort -u
}
changes() { # "gate run verdict" of the change points
	sed -n 's/<tr class="change"><td>\([0-9TZ]*\)<\/td>.*<code>\([a-z0-9-]*\)<\/code><\/a><\/td>.*data-verdict="\([a-z]*\)".*/\2 \1 \3/p' "$1" | sort -u
}
stray() { # change points whose verdict is not the table's
	changes "$1" >"$EG_TMP/c.v"
	matrix "$1" >"$EG_TMP/m.v"
	comm -23 "$EG_TMP/c.v" "$EG_TMP/m.v" | wc -l
}
sed 's/<td class="verdict" data-verdict="pass">/<td class="verdict" data-verdict="fail">/' "$EG_TMP/h.html" >"$EG_TMP/h-planted.html"
worse_pass=$(grep -c 'data-verdict="pass"><span class="badge pass">pass</span></td><td class="dir worse">' "$EG_TMP/h.html")
if [ "$(changes "$EG_TMP/h.html" | wc -l)" -gt 0 ] && [ "$(stray "$EG_TMP/h.html")" -eq 0 ] &&
	[ "$worse_pass" -gt 0 ] && [ "$(stray "$EG_TMP/h-planted.html")" -gt 0 ]; then
	eg_ok "history: $(changes "$EG_TMP/h.html" | wc -l) change points, each with its gate's verdict at that run ($worse_pass worse while the gate passed); a planted FAIL is seen"
else
	eg_not_ok "history: $(stray "$EG_TMP/h.html") change points with another verdict than the table's"
fi
if [ "$(count '<pre class="repro">' "$EG_TMP/h.html")" -gt 0 ] &&
	! grep '<pre class="repro">' "$EG_TMP/h.html" | grep -q "$(cd "$S" && pwd)/" &&
	grep -q '<pre class="repro">epgate gate --gates gates/p5en-ep16.gate ' "$EG_TMP/h.html" &&
	grep -q 'pre.repro{[^}]*white-space:pre-wrap;overflow-wrap:anywhere}' "$EG_TMP/h.html"; then
	eg_ok "history: repro lines relative to here (gates/p5en-ep16.gate), wrapped inside the page"
else
	eg_not_ok "history repro: $(grep -o '<pre class="repro">[^<]*' "$EG_TMP/h.html" | head -n 1)"
fi

# --- gate power: a regression gate against a history states its minimum
# detectable effect, on stdout, in its TAP diagnostics and on the page
HI=$S/fixtures/campaigns/h200x1-interleave
i=0
for f in "$HI"/*-clean.json; do
	[ "$i" -lt 10 ] || break
	m=$(grep -o '"machine": *"[^"]*"' "$f" | head -n 1 | sed 's/.*: *"\(.*\)"/\1/')
	t=$(grep -o '"created": *"[^"]*"' "$f" | head -n 1 | sed 's/.*: *"\(.*\)"/\1/' | tr -d ':-')
	mkdir -p "$EG_TMP/hist/h200x1/$m" && cp "$f" "$EG_TMP/hist/h200x1/$m/$t.json"
	i=$((i + 1))
done
"$EG_EPGATE" gate --gates "$S/gates/h200x1.gate" --history "$EG_TMP/hist" \
	--reports "$EG_TMP/pw" "$HI/031-clean.json" >"$EG_TMP/pw.out" 2>/dev/null
R=$(ls -d "$EG_TMP"/pw/*/ | head -n 1)
"$EG_EPGATE" report "${R%/}" >/dev/null 2>&1
rows=$(grep -c '^[A-Z]* *[a-z0-9-]*-regression .*; MDE [0-9]*% (10 campaigns)$' "$EG_TMP/pw.out")
diags=$(grep -c '^  mde_pct: [0-9.]*$' "$R/gate.tap")
page=$(grep -c 'data-gate="[a-z0-9-]*-regression" data-verdict="pass">.*; MDE [0-9]*% (10 campaigns)' "$R/report.html")
if [ "$rows" -eq 3 ] && [ "$diags" -eq 3 ] && [ "$page" -ge 1 ]; then
	eg_ok "gate power: $rows regression gates against 10 campaigns state their MDE ($(grep -o 'MDE [0-9]*%' "$EG_TMP/pw.out" | tr '\n' ' ')) on stdout, in TAP and on the page ($page passing)"
else
	eg_not_ok "gate power: $rows rows, $diags diagnostics, $page on the page"
	sed 's/^/# /' "$EG_TMP/pw.out"
fi

eg_done
