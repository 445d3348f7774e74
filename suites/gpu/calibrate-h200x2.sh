#!/bin/sh
# The calibration on two H200s (docs/gates.md, "Calibration"), and the
# multi-comm recovery at both sizes:
#
#   suites/gpu/calibrate-h200x2.sh EPGATE OUT [BUDGET_S]
#
# 1. one campaign of h200x2-xnode: transport SO from K=1 to K=8 at 128
#    tokens per rank (reported) and at 4096 with 256 experts (gated by
#    multicomm-recovery), printed from the results;
# 2. the calibration campaigns of h200x2-nvlink and h200x2-xnode (5 clean
#    for the history, then clean / planted 10% slowdown of the all-to-all
#    / A/A / A/B), each within half of the budget (default 1200 s: give
#    it several device calls, OUT keeps what was measured);
# 3. `epgate bench calibrate` on each (table, targets).
# Exit: 77 with fewer than 2 GPUs, else the worst of the steps.
E=${1:?usage: calibrate-h200x2.sh EPGATE OUT [BUDGET_S]}
OUT=${2:?usage: calibrate-h200x2.sh EPGATE OUT [BUDGET_S]}
B=${3:-1200}
D=$(dirname "$0")
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -lt 2 ]; then
	echo "calibrate-h200x2: fewer than 2 GPUs here: skip"
	exit 77
fi
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT/recovery" || exit 99
"$E" bench profile h200x2-xnode --results "$OUT/recovery/xnode.json" \
	--reports "$OUT/recovery" >"$OUT/recovery/xnode.out" 2>&1
rc=$?
cat >"$OUT/recovery/both.gate" <<'EOG'
profile: h200x2-xnode
gates:
  - {name: recovery-128, sentence: "K=8 over K=1 at 128 tokens per rank (reported).", rule: recovery, metric: so_gbps, arms: [a2a], axis: num_comms, filter: {suite: xnode-num-comms}, low: 1, high: 8, min_factor: 0.001}
  - {name: recovery-4096, sentence: "K=8 over K=1 at 4096 tokens per rank, 256 experts.", rule: recovery, metric: so_gbps, arms: [a2a], axis: num_comms, filter: {suite: xnode-num-comms-4096}, low: 1, high: 8, min_factor: 2.5}
EOG
"$E" gate --gates "$OUT/recovery/both.gate" --tap "$OUT/recovery/both.tap" \
	--junit "$OUT/recovery/both.xml" "$OUT/recovery/xnode.json"
worst=$rc
for p in h200x2-nvlink h200x2-xnode; do
	EG_BUDGET=$((B / 2)) EG_HISTORY=5 EG_LAUNCHES=8 EG_JUDGED=5 EG_AB_LAUNCHES=6 \
		sh "$D/../gates/calibrate.sh" "$E" "$p" "$OUT/$p" 20 5
	r=$?
	[ "$r" -gt "$worst" ] && worst=$r
done
exit "$worst"
