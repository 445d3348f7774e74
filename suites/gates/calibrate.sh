#!/bin/sh
# Calibration campaigns of a profile (docs/gates.md, "Calibration"):
#
#   suites/gates/calibrate.sh EPGATE PROFILE OUT [ROUNDS] [WARMUP]
#
# WARMUP clean campaigns first (the history the first comparisons need),
# then ROUNDS times, interleaved so that the machine's drift lands on
# every kind alike:
#   clean   epgate bench profile PROFILE            (unchanged code)
#   plant   ... --plant $EG_PLANT                   (a planted slowdown)
#   aa      epgate bench ab PROFILE --a ARM --b slow:0%:ARM
#   ab      epgate bench ab PROFILE --a ARM --b $EG_PLANT
# Each campaign's results go to OUT/campaigns/NNN-KIND.json, the runs'
# folders (logs) to OUT/runs; then `epgate bench calibrate` replays every
# comparison through the gate engine and prints the table.  Knobs (the
# environment): EG_PLANT (slow:10%:a2a), EG_LAUNCHES (9: 6 judged, 3
# re-measurement launches the replay adds to the points the gates cannot
# settle), EG_AB_LAUNCHES (8), EG_KINDS ("clean plant aa ab"), EG_HISTORY
# (campaigns in a history baseline, 10), EG_JUDGED (launches judged
# before re-measurement: the profile's launches), EG_BUDGET (seconds: no campaign
# is started that would end after it, judging by the longest so far; the
# table is printed on what was measured; a second call with the same OUT
# adds campaigns), EG_SAVE (a folder for the trimmed copies kept as
# fixtures: dispatch_us and step_us, 4 significant digits), EG_QUICK (1:
# no minimum-detectable-effect scan, `bench calibrate --quick`), EG_SWEEP
# (the sweeps measured, `--sweep`: h200x1's w1, the one its gates
# calibrate, not the libraries' sweeps; default every sweep).
# Exit status: that of `epgate bench calibrate`: 0 when every gate
# calibrated meets the targets (at most 1 false alarm in 20, at least 19
# of 20 planted caught): the gate file against the history and, with A/B
# jobs, the A/B gates; 1 when one of them misses, its last line naming
# which (`calibration: TARGETS MISSED: gates/h200x1.gate detection 3 of 9;
# met: a/b gates`).
set -u
E=${1:?usage: calibrate.sh EPGATE PROFILE OUT [ROUNDS] [WARMUP]}
P=${2:?profile}
OUT=${3:?output folder}
ROUNDS=${4:-20}
WARM=${5:-10}
PLANT=${EG_PLANT:-slow:10%:a2a}
ARM=${PLANT##*:}
L=${EG_LAUNCHES:-9}
LAB=${EG_AB_LAUNCHES:-8}
KINDS=${EG_KINDS:-clean plant aa ab}
HIST=${EG_HISTORY:-10}
SW=${EG_SWEEP:-}
BUDGET=${EG_BUDGET:-0}
mkdir -p "$OUT/campaigns" "$OUT/runs" || exit 99
n=$(ls "$OUT/campaigns" | wc -l)
start=$(date +%s)
longest=0
G=$(cd "$(dirname "$0")/../.." && pwd)/gates/$(basename "$P" .profile).gate

# one KIND: a campaign into OUT/campaigns/NNN-KIND.json
one() {
	kind=$1
	if [ "$BUDGET" -gt 0 ] &&
		[ $(($(date +%s) - start + longest)) -gt "$BUDGET" ]; then
		echo "# budget of $BUDGET s: no $kind campaign started"
		return 1
	fi
	f=$OUT/campaigns/$(printf '%03d' "$n")-$kind.json
	n=$((n + 1))
	t0=$(date +%s)
	case $kind in
	clean) "$E" bench profile "$P" --launches "$L" --no-gates \
		${SW:+--sweep "$SW"} --results "$f" --reports "$OUT/runs" ;;
	plant) "$E" bench profile "$P" --launches "$L" --no-gates \
		${SW:+--sweep "$SW"} --plant "$PLANT" --results "$f" \
		--reports "$OUT/runs" ;;
	aa) "$E" bench ab "$P" --a "$ARM" --b "slow:0%:$ARM" \
		${SW:+--sweep "$SW"} --launches "$LAB" --remeasure 0 \
		--results "$f" --reports "$OUT/runs" ;;
	ab) "$E" bench ab "$P" --a "$ARM" --b "$PLANT" --launches "$LAB" \
		${SW:+--sweep "$SW"} --remeasure 0 --results "$f" \
		--reports "$OUT/runs" ;;
	esac >>"$OUT/log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	[ "$dt" -gt "$longest" ] && longest=$dt
	echo "# $(date -u +%H:%M:%S) $kind exit $rc, $dt s: $f"
	# 77: nothing measurable here (no GPU): stop, the caller skips
	[ "$rc" -eq 77 ] && exit 77
	# a campaign that did not finish measuring is not a campaign
	case $rc in 0 | 1) ;; *) rm -f "$f" ;; esac
}

i=0
while [ "$i" -lt "$WARM" ] && one clean; do
	i=$((i + 1))
done
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	for k in $KINDS; do one "$k" || break 2; done
	i=$((i + 1))
done
set -- --history "$HIST"
[ -n "${EG_JUDGED:-}" ] && set -- "$@" --judged "$EG_JUDGED"
# EG_SAVE=DIR: the trimmed copies kept as fixtures, written there too
[ -n "${EG_SAVE:-}" ] && mkdir -p "$EG_SAVE" && set -- "$@" --save "$EG_SAVE"
[ -n "${EG_QUICK:-}" ] && set -- "$@" --quick
[ -f "$G" ] && set -- "$@" --gates "$G"
"$E" bench calibrate "$OUT/campaigns" "$@"
