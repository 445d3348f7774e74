#!/bin/sh
# The calibration replayed (docs/gates.md, "Calibration"): the campaigns
# measured on the shared 2-core host (fixtures/campaigns/local/: clean
# runs of the local profile, runs with a 10% slowdown planted in the
# all-to-all, A/A and A/B jobs) judged again through the gate engine, as
# CI would: unchanged code must not fail (at most 1 in 20), the planted
# slowdowns must be caught (19 of 20) by the A/B gates, and only the
# gates of the slowed arm may fail.  Deterministic: the same verdicts on
# every run.
. "${EG_SRCDIR:-.}/suites/lib.sh"

F=$EG_SRCDIR/fixtures/campaigns/local
if [ ! -d "$F" ]; then
	echo "1..0 # SKIP no calibration fixtures"
	exit 0
fi
"$EG_EPGATE" bench calibrate "$F" --gates "$EG_SRCDIR/gates/local.gate" \
	--quick >"$EG_TMP/cal.out" 2>&1
rc=$?
sed 's/^/# /' "$EG_TMP/cal.out"
if [ "$rc" -eq 0 ] && grep -q '^calibration: targets met$' "$EG_TMP/cal.out"; then
	eg_ok "bench calibrate on the fixtures: targets met"
else
	eg_not_ok "bench calibrate on the fixtures (exit $rc)"
fi
# the A/B gates: >= 20 A/A jobs without a false alarm, >= 19 of 20 caught
line=$(grep '^a/b gates' "$EG_TMP/cal.out")
fa=$(echo "$line" | sed -n 's/.*false alarms \([0-9]*\) of \([0-9]*\).*/\1 \2/p')
det=$(echo "$line" | sed -n 's/.*planted caught \([0-9]*\) of \([0-9]*\).*/\1 \2/p')
set -- $fa $det
if [ $# -eq 4 ] && [ "$2" -ge 20 ] && [ "$1" -le 1 ] && [ "$4" -ge 20 ] &&
	[ $(($3 * 20)) -ge $(($4 * 19)) ]; then
	eg_ok "a/b: $1 false alarm(s) in $2 A/A jobs, $3 of $4 planted slowdowns caught"
else
	eg_not_ok "a/b targets: $line"
fi
# the shipped gate file against the history: no false alarm, and what
# failed on the planted slowdowns judges the all-to-all
line=$(grep '^/.*local.gate: false alarms' "$EG_TMP/cal.out")
if [ -n "$line" ] && echo "$line" | grep -q 'false alarms [01] of' &&
	! grep -q 'failed on the planted slowdowns:.*dense-' "$EG_TMP/cal.out"; then
	eg_ok "gates/local.gate against the history: $(echo "$line" | sed 's/.*: false/false/')"
else
	eg_not_ok "gates/local.gate against the history: $line"
fi
# deterministic: the same table twice
"$EG_EPGATE" bench calibrate "$F" --gates "$EG_SRCDIR/gates/local.gate" \
	--quick >"$EG_TMP/cal2.out" 2>&1
if cmp -s "$EG_TMP/cal.out" "$EG_TMP/cal2.out"; then
	eg_ok "the replay is deterministic"
else
	eg_not_ok "the replay is deterministic"
	diff "$EG_TMP/cal.out" "$EG_TMP/cal2.out" | head -n 5 | sed 's/^/# /'
fi
eg_done
