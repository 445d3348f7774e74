#!/bin/sh
# `epgate stress` on one H200 (docs/stress.md, "On the GPU"): NCCL EP's
# LL and HT modes over their world-1 cases, the CUDA template and the
# self engine, each for a time budget, in one call of about six minutes:
#
#   sh suites/gpu/stress-device.sh BUNDLE EPGATE_DIR [SECONDS]
#
# BUNDLE and EPGATE_DIR as for suites/gpu/nccl-ep-device.sh; SECONDS the
# budget of each NCCL EP mode (default 120; the cases share it, each at
# least 300 checked calls). Logs go to $OUT; a table of every case (calls,
# failures, rate and its interval, nondeterminism, resources) at the end.
# Every command has a timeout. Exit: 0 no case failed, 1 one did (a
# finding: its repro lines are in the logs), 77 no GPU, 99 bad arguments.
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: sh suites/gpu/stress-device.sh BUNDLE EPGATE_DIR [SECONDS]" >&2
	exit 99
fi
EG_SRCDIR=${EG_SRCDIR:-$PWD}
. "$EG_SRCDIR/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
trap - EXIT
LOG=${OUT:-${TMPDIR:-/tmp}/stress-device.$$}
mkdir -p "$LOG" || exit 99
rm -rf "$EG_TMP"
EG_TMP=$LOG
WORK=${TMPDIR:-/tmp}/stress-work.$$
trap 'rm -rf "$WORK"' EXIT
BUDGET=${3:-120}
T0=$(date +%s)
SUM=$LOG/steps.txt
: >"$SUM"
step() {
	printf "%-24s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" |
		tee -a "$SUM"
	[ "$2" = FAIL ] && eg_fails=$((eg_fails + 1))
	return 0
}

echo "== stress-device: logs in $LOG"
if ! nep_setup "$1" "$2" "$WORK" >"$LOG/setup.txt" 2>&1; then
	echo "stress-device: $(cat "$LOG/setup.txt")" >&2
	exit 99
fi
if [ "$(nep_gpus)" -lt 1 ]; then
	step "setup" SKIP "no GPU (nvidia-smi lists none)"
	exit 77
fi
nep_workloads "$LOG"
CT=
for f in "$(dirname "$EG_EPGATE")/plugins/template/libeg-cuda-template.so" \
	"$(dirname "$NEP_SO")/libeg-cuda-template.so"; do
	[ -f "$f" ] && CT=$f
done

# st LABEL SECONDS ENGINE ARGS...: one stress run into LOG/LABEL.*; with
# STRESS_CALLS=N, exactly N checked calls per case instead of the budget.
# STRESS_RUNS picks runs (default "ll ht cuda-template self");
# STRESS_ARGS is added to every run: the budget's floors (300 checked
# calls, 2048 calls of one instance a case) are met whatever the budget,
# which on the GPU at these shapes is past a device call (2026-12-07, one
# H100: LL's 5 first cases took 318 s), so e.g. STRESS_ARGS="--long 0
# --min-calls 100 --filter ll-base" for a run that fits
st() {
	label=$1 secs=$2 eng=$3
	shift 3
	case " ${STRESS_RUNS:-ll ht cuda-template self} " in
	*" $label "*) ;;
	*) return 0 ;;
	esac
	# shellcheck disable=SC2086 # STRESS_ARGS: words on purpose
	set -- "$@" ${STRESS_ARGS:-}
	if [ -n "${STRESS_CALLS:-}" ]; then
		set -- --calls "$STRESS_CALLS" "$@"
	else
		set -- --for "${secs}s" "$@"
	fi
	timeout $((secs * 3 + 600)) "$EG_EPGATE" stress --engine "$eng" \
		--tap="$LOG/$label.tap" \
		--junit="$LOG/$label.xml" --json="$LOG/$label.json" "$@" \
		>"$LOG/$label.out" 2>&1
	rc=$?
	case $rc in
	0) s=ok ;;
	1) s=FAIL ;;
	77) s=SKIP ;;
	*) s=FAIL ;;
	esac
	step "$label" "$s" "exit $rc; $(tail -n 1 "$LOG/$label.out")"
}

st ll "$BUDGET" "plugin:$NEP_SO,mode=ll" --workload "$LOG/ll-w1.ini"
EPGATE_TIMEOUT=900
export EPGATE_TIMEOUT
st ht "$BUDGET" "plugin:$NEP_SO,mode=ht" --workload "$LOG/ht-w1.ini"
unset EPGATE_TIMEOUT
if [ -f "$CT" ]; then
	st cuda-template 30 "plugin:$CT" \
		--workload "$EG_SRCDIR/fixtures/workloads/plugin-w1.ini" --overlap
else
	step "cuda-template" SKIP "no libeg-cuda-template.so with this epgate"
fi
st self 30 self --workload "$EG_SRCDIR/fixtures/workloads/l1-matrix.ini" \
	--filter w2- --overlap

# the table: one line per case of every run, from its JSON
{
	echo
	echo "== steps ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1); $(($(date +%s) - T0)) s)"
	cat "$SUM"
	echo
	echo "== every case (stress.json: calls, checked, failures, rate [95% interval], nondeterminism, resources)"
	for label in ll ht cuda-template self; do
		[ -f "$LOG/$label.json" ] || continue
		awk -v run="$label" '
		/"workload":/ { gsub(/[",]/, "", $2); w = $2 }
		/"status":/ { gsub(/[",]/, "", $2); st = $2 }
		/"calls":/ && w != "" && c == "" { gsub(/,/, "", $2); c = $2 }
		/"checked":/ && k == "" { gsub(/,/, "", $2); k = $2 }
		/"failures":/ && f == "" { gsub(/,/, "", $2); f = $2 }
		/"ci95":/ { getline lo; getline hi; gsub(/[ ,]/, "", lo); gsub(/[ ,]/, "", hi) }
		/"verdict":/ && nd == "" { sub(/.*"verdict": "/, ""); sub(/:.*/, ""); nd = $0 }
		/"detail":/ { sub(/.*"detail": "/, ""); sub(/",?$/, ""); rs = $0 }
		/"failures_not_listed":/ {
			printf "%-14s %-24s %-5s %7s %7s %5s [%s, %s] %-18s %s\n", run, w, st, c, k, f, lo, hi, nd, rs
			w = ""; c = ""; k = ""; f = ""; nd = ""; rs = ""
		}' "$LOG/$label.json"
	done
	echo "logs: $LOG"
} | tee "$LOG/summary.txt"
[ "$eg_fails" -eq 0 ] || exit 1
exit 0
