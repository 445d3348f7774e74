#!/bin/sh
# The EP libraries across the GPUs of one host, at W = 2, 4 and 8 (issue
# 35, part 4): for each world, every arm's correctness over the L2
# matrix's workloads of that world, a stress run (the matrix's random
# workloads, many iterations in one instance: `epgate stress` takes one
# rank), and a profile of the arms side by side with its gates and page.
# One command on the GPU machine, from the repository root:
#
#   sh suites/gpu/multi-device.sh DEEPEP_SRC NCCL_BUNDLE EPGATE_DIR [W...]
#   sh suites/gpu/multi-device.sh --dry-run [W...]
#
# DEEPEP_SRC, NCCL_BUNDLE, EPGATE_DIR as for suites/gpu/deepep-device.sh
# (whose build step builds DeepEP and the bridge first: MD_BUILD=0 skips
# it on a warm machine). The arms: DeepEP V2 (`deepep`, elastic),
# DeepEP intranode (`deepep,mode=intranode`), NCCL EP (LL and HT,
# libeg-nccl-ep.so) and torch_ep over NCCL (`memory=cuda`, the group of
# torch_common.group() the adapters share); a world beyond the GPUs that
# nvidia-smi lists is skipped saying so. --dry-run runs the very same
# steps on this host, with the build tree's epgate, each arm played by
# the torch reference adapter over gloo (`torch_ep`, memory=host) and the
# fabric transport, so that a broken step is found before a GPU is
# booked (suites/gpu/multi-dry.sh runs it in make check-long). Worlds:
# the arguments, else 2 4 8. MD_ITERS (2) and MD_STRESS_ITERS (GPU 200,
# dry 3) set the iterations; MD_TOKENS and MD_HIDDEN the profile's shape
# (GPU 128 tokens a rank of hidden 2048, dry 16 of 128); MD_L2=TEXT
# takes the world's workloads whose name goes on with TEXT (all);
# MD_STEP_TIMEOUT (540 s) each step's limit; MD_WORKLOADS=FILE other
# workloads than the L2 matrix's, sections named wW-... as its (its
# small shapes are beyond some of DeepEP's limits: those cases skip,
# saying which); MD_DRY_FAULT=NAME plays the first arm by
# torch_ep_faulty's fault NAME (the dry run's own planted fault).
# Logs and a table of the steps go to $OUT. Exit: 0 no step failed, 1 one
# did, 77 no GPU (or no world fits), 99 bad arguments.
DRY=0
if [ "${1:-}" = --dry-run ]; then
	DRY=1
	shift
elif [ $# -lt 3 ]; then
	echo "usage: sh suites/gpu/multi-device.sh DEEPEP_SRC NCCL_BUNDLE EPGATE_DIR [W...]" >&2
	echo "       sh suites/gpu/multi-device.sh --dry-run [W...]" >&2
	exit 99
fi
EG_SRCDIR=${EG_SRCDIR:-$PWD}
. "$EG_SRCDIR/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
. "$EG_SRCDIR/suites/gpu/deepep-lib.sh"
trap - EXIT
LOG=${OUT:-${TMPDIR:-/tmp}/multi-device.$$}
mkdir -p "$LOG" || exit 99
rm -rf "$EG_TMP"
EG_TMP=$LOG
T0=$(date +%s)
SUM=$LOG/steps.txt
: >"$SUM"
step() {
	printf "%-30s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" |
		tee -a "$SUM"
	[ "$2" = FAIL ] && eg_fails=$((eg_fails + 1))
	return 0
}
: "${MD_ITERS:=2}" "${MD_STEP_TIMEOUT:=540}"

# ---- the machine: arms, transport, epgate ------------------------------
# ARMS: "label engine" lines; each label names the step's files
if [ "$DRY" = 1 ]; then
	[ $# -gt 0 ] || set -- 2 4 8
	: "${EG_EPGATE:=$EG_SRCDIR/epgate}" "${MD_STRESS_ITERS:=3}"
	# the profile's shape scaled to 8 processes on a few CPU cores, and
	# a short raw phase (its alltoallv met the deadline at W = 8 on two
	# loaded cores with the GPU shape)
	: "${MD_HIDDEN:=128}" "${MD_TOKENS:=16}"
	RAW="raw: {msgs: 16, msg_size: 8, size: 16K, iters: 3, warmup: 1}"
	[ -x "$EG_EPGATE" ] || { echo "multi-device: no $EG_EPGATE (build first)" >&2; exit 99; }
	TRANSPORT=fabric
	# each GPU arm played by torch_ep in the layout its library returns
	ARMS="deepep-v2 plugin:python,module=torch_ep${MD_DRY_FAULT:+_faulty,fault=$MD_DRY_FAULT}
deepep-intranode plugin:python,module=torch_ep,keys=content
nccl-ep-ll plugin:python,module=torch_ep,layout=expert
nccl-ep-ht plugin:python,module=torch_ep,layout=rank
torch-nccl plugin:python,module=torch_ep,memory=host"
	ngpu=8
	echo "== multi-device --dry-run: logs in $LOG; every arm is torch_ep over gloo on this host"
else
	DEEPEP=$1 BUNDLE=$2 EGD=$3
	shift 3
	[ $# -gt 0 ] || set -- 2 4 8
	: "${MD_STRESS_ITERS:=200}" "${PYTHON:=/opt/torch/.venv/bin/python3}"
	: "${MD_HIDDEN:=2048}" "${MD_TOKENS:=128}"
	RAW=
	WORK=${TMPDIR:-/tmp}/deepep-work
	if [ "${MD_BUILD:-1}" = 1 ]; then
		OUT=$LOG/build DPE_STEPS=build sh "$EG_SRCDIR/suites/gpu/deepep-device.sh" \
			"$DEEPEP" "$BUNDLE" "$EGD" >"$LOG/build.out" 2>&1
		rc=$?
		step "0 build DeepEP, bridge" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "exit $rc (build/steps.txt)"
		[ "$rc" -eq 77 ] && exit 77
	fi
	# the build step unpacked a bundled epgate there, with the bridge
	# built for this machine's venv beside it
	case $EGD in *.tar.xz | *.txz) EGD=$WORK/eg ;; esac
	if ! nep_setup "$BUNDLE" "$EGD" "$WORK" >"$LOG/setup.txt" 2>&1; then
		echo "multi-device: $(cat "$LOG/setup.txt")" >&2
		exit 99
	fi
	dpe_env "$NEP_ROOT" "$WORK/deepep-src" "$PYTHON"
	EPGATE_TIMEOUT=${EPGATE_TIMEOUT:-900} # DeepEP's JIT compiles at first use
	export EPGATE_TIMEOUT
	TRANSPORT=nccl
	ARMS="deepep-v2 plugin:python,module=deepep
deepep-intranode plugin:python,module=deepep,mode=intranode
nccl-ep-ll plugin:$NEP_SO,mode=ll
nccl-ep-ht plugin:$NEP_SO,mode=ht
torch-nccl plugin:python,module=torch_ep,memory=cuda"
	ngpu=$(nep_gpus)
	if [ "$ngpu" -lt 2 ]; then
		step "0 setup" SKIP "$ngpu GPU(s): the smallest world here is 2"
		exit 77
	fi
	echo "== multi-device: logs in $LOG; $ngpu GPUs; epgate $EG_EPGATE"
fi
L2M=${MD_WORKLOADS:-$EG_SRCDIR/fixtures/workloads/l2-matrix.ini}

# run LABEL: the last command's verdict from its exit status and results
verdict() { # rc
	case $1 in
	0) echo ok ;;
	77) echo SKIP ;;
	*) echo FAIL ;;
	esac
}
# l2 NAME W ENGINE FILTER ITERS: one job of W ranks into LOG/NAME.*
l2() {
	rm -f "$LOG/$1.jsonl"
	timeout "$MD_STEP_TIMEOUT" "$EG_EPGATE" launch -n "$2" --timeout "$MD_STEP_TIMEOUT" -- \
		"$EG_EPGATE" l2-rank --engine "$3" --iters "$5" --workload "$L2M" \
		--filter "$4" --results "$LOG/$1.jsonl" >"$LOG/$1.log" 2>&1
	rc=$?
	p=$(grep -c '"status":"pass"' "$LOG/$1.jsonl" 2>/dev/null)
	f=$(grep -c '"status":"fail"' "$LOG/$1.jsonl" 2>/dev/null)
	s=$(grep -c '"status":"skip"' "$LOG/$1.jsonl" 2>/dev/null)
	n=$(grep -c "^\[$4" "$L2M")
	why="exit $rc; $p pass, $f fail, $s skip of $n ($1.jsonl)"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && why="$why: $(grep -v 'python adapter' "$LOG/$1.log" | tail -n 1 | cut -c1-100)"
	step "$1" "$(verdict "$rc")" "$why"
}

for W in "$@"; do
	case $W in 2 | 4 | 8) ;; *)
		echo "multi-device: world $W: want 2, 4 or 8" >&2
		exit 99
		;;
	esac
	if [ "$W" -gt "$ngpu" ]; then
		step "w$W" SKIP "world $W beyond the $ngpu GPUs here"
		continue
	fi
	# correctness, then stress, arm by arm
	echo "$ARMS" | while read -r label eng; do
		l2 "l2-$label.w$W" "$W" "$eng" "w$W-${MD_L2:-}" "$MD_ITERS"
	done
	echo "$ARMS" | while read -r label eng; do
		l2 "stress-$label.w$W" "$W" "$eng" "w$W-rand" "$MD_STRESS_ITERS"
	done
	# the profile: every arm at this world, one node, side by side
	prof=$LOG/multi-w$W.profile
	{
		echo "profile: multi-w$W"
		echo "description: \"the EP libraries at W=$W on one host (suites/gpu/multi-device.sh)\""
		echo "transport: $TRANSPORT"
		echo "launcher: local"
		echo "gates: gates/local.gate"
		echo "timeout: 120"
		echo "repetitions: {warmup: 2, iters: ${MD_BENCH_ITERS:-10}}"
		[ -n "$RAW" ] && echo "$RAW"
		echo "base: {world: $W, nodes: 1, num_comms: 1, concurrency: $MD_TOKENS, hidden: $MD_HIDDEN,"
		echo "       experts: $((W * 8)), topk: 4, dtype: bf16, routing: uniform}"
		echo "sweeps:"
		echo "  - name: w$W"
		printf "    arms: ["
		echo "$ARMS" | awk '{ printf "%s\"%s\"", (NR > 1 ? ", " : ""), $2 }'
		echo "]"
		echo "    axes: {concurrency: [$MD_TOKENS]}"
	} >"$prof"
	rm -rf "$LOG/bench-w$W"
	timeout "$MD_STEP_TIMEOUT" "$EG_EPGATE" bench profile "$prof" \
		--reports "$LOG/bench-w$W" >"$LOG/bench-w$W.out" 2>&1
	rc=$?
	step "bench-w$W" "$(verdict "$rc")" "exit $rc; $(grep -o '[0-9]* of [0-9]* point(s) measured' "$LOG/bench-w$W.out" | head -n 1); $(tail -n 1 "$LOG/bench-w$W.out" | cut -c1-80) (bench-w$W/*/report.html)"
done
# the steps of the subshells above counted their failures there: count
# them here from the table
eg_fails=$(grep -c '^[^ ]* *FAIL ' "$SUM")
echo "== multi-device: $(wc -l <"$SUM") steps, $eg_fails failed; table in $SUM"
[ "$eg_fails" -eq 0 ] || exit 1
exit 0
