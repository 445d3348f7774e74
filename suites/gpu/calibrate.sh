#!/bin/sh
# The GPU calibration on one H200 (docs/gates.md, "Calibration"), in one
# device call of under 8 minutes:
#
#   suites/gpu/calibrate.sh EPGATE OUT [BUDGET_S]
#
# 5 clean campaigns of profiles/h200x1.profile (the history), then rounds
# of a clean campaign and one with a 10% slowdown planted in the
# all-to-all's dispatch (--plant slow:10%:a2a), until 20 of each or the
# budget (default 400 s) runs out; then `epgate bench calibrate` replays
# every comparison (history of 5, 3 launches judged, 2 re-measured) and
# prints the table.  Campaigns stay in OUT/campaigns (a second call with
# the same OUT adds to them), their trimmed copies (for
# fixtures/campaigns/h200x1/) in OUT/fixtures.  Exit: 77 without a GPU,
# else the calibration's (0 targets met, 1 missed).
E=${1:?usage: calibrate.sh EPGATE OUT [BUDGET_S]}
OUT=${2:?usage: calibrate.sh EPGATE OUT [BUDGET_S]}
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "calibrate: no GPU here: skip"
	exit 77
fi
export NCCL_NVLS_ENABLE=0
# w1 alone: the sweep the gates calibrate (the libraries' sweeps of
# h200x1 are measured by `bench profile h200x1`, not here)
EG_BUDGET=${3:-400} EG_KINDS=${EG_KINDS:-clean plant} EG_LAUNCHES=5 EG_JUDGED=3 \
	EG_HISTORY=5 EG_PLANT=slow:10%:a2a EG_SAVE="$OUT/fixtures" EG_SWEEP=w1 \
	sh "$(dirname "$0")/../gates/calibrate.sh" "$E" h200x1 "$OUT" 20 5
