#!/bin/sh
# Every verdict true on every path (docs/reports.md, "One verdict"): what
# a command decides (its exit status and last line), what it keeps
# (summary.json) and what its page says (the banner of report.html, the
# first line of summary.md) agree, for `gate`, `bench profile` and the
# pages `epgate report` makes of their folders; what the pages draw
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

eg_done
