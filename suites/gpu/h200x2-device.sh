#!/bin/sh
# What the lent pair of H200s (nvidia-h200-x2) checks and measures, in
# device calls of under ten minutes each, from the repository root:
#
#   sh suites/gpu/h200x2-device.sh PART EG_BUNDLE [NCCLEP]
#
# EG_BUNDLE  an epgate build packed by suites/gpu/bundle.sh (.tar.xz)
# NCCLEP     NCCL + NCCL EP: a bundle of suites/gpu/ncclep-build.sh
#            (.tar.xz, include/nccl_ep.h), or an NVIDIA/nccl source tree
#            packed as .tar.xz, which is then built here (part gpu, in the
#            background while the functional checks run; about 4 minutes
#            on 32 cores): the bundle lands in $OUT and in .dev/ncclep/
#            of this tree for the next call on a warm machine
# PART:
#   gpu        the GPU unit tests, GPU L2 at W=2 (NVLink and two virtual
#              nodes, suites/gpu/l2-gpu.sh), a plugin on CUDA memory; the
#              a2a engine's dispatch against NCCL's alltoall at the same
#              bytes over NVLink (T = 128, 4096, 16384; K = 1, 4, 8) with
#              its phases; the W=1 dispatch's phases in five fresh
#              processes (where the launch-to-launch spread lives); one
#              campaign of h200x2-xnode with its gates and the multi-comm
#              recovery at 128 and 4096 tokens
#   calibrate  one campaign of h200x2-nvlink with its gates; then the
#              calibration of the two-GPU profile (profiles/h200x2.profile):
#              5 clean campaigns, then clean and planted-slowdown rounds
#              for what is left of EG_BUDGET
#   ncclep     NCCL EP through its plugin at W=2 beside its ep_bench
#              (suites/gpu/nccl-ep-device-x2.sh), and its modes as arms
#              beside a2a and dense (suites/gpu/h200x2-ncclep.profile);
#              the plugin is compiled here when EG_BUNDLE lacks it
# The parts other than ncclep run on the machine's own NCCL.
# EG_BUDGET: seconds from the start that a part plans within (560).
# Everything lands in $OUT: PART-summary.txt (the tables, printed last)
# and PART-logs.tar.xz (logs, results, campaigns).  Exit: 0 every step
# passed, 1 one failed, 77 fewer than two GPUs, 99 bad arguments.
usage() {
	echo "usage: sh suites/gpu/h200x2-device.sh gpu|calibrate|ncclep EG_BUNDLE [NCCLEP(.tar.xz)]" >&2
	exit 99
}
PART=${1:-}
case $PART in
gpu | calibrate) [ $# -eq 2 ] || [ $# -eq 3 ] || usage ;;
ncclep) [ $# -eq 3 ] || usage ;;
*) usage ;;
esac
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 2 ] || { echo "h200x2-device: ${ngpu:-0} GPU(s), needs 2: skip"; exit 77; }
T0=$(date +%s)
BUDGET=${EG_BUDGET:-560}
OUT=${OUT:-/tmp/h200x2-device}
mkdir -p "$OUT" || exit 99
W=/tmp/eg-x2.$$
L=$W/logs
mkdir -p "$W/eg" "$L" || exit 99
tar -xJf "$2" -C "$W/eg" || exit 99
NEP= NEPSRC=
if [ -n "${3:-}" ]; then
	mkdir -p "$W/nep" && tar -xJf "$3" -C "$W/nep" || exit 99
	if [ -f "$W/nep/makefiles/version.mk" ]; then
		NEPSRC=$W/nep
	else
		NEP=$(cd "$(dirname "$(find "$W/nep" -name nccl_ep.h | head -1)")/.." && pwd)
	fi
fi
export NCCL_NVLS_ENABLE=0 EPGATE_DATADIR=$PWD EG_SRCDIR=$PWD EG_BUILDDIR=$W/eg
export LD_LIBRARY_PATH=$W/eg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EG_EPGATE=$W/eg/epgate
E=$EG_EPGATE
fails=0
SUM=$OUT/$PART-summary.txt
: >"$SUM"
step() {
	printf "%-36s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" | tee -a "$SUM"
	[ "$2" = FAIL ] && fails=$((fails + 1))
	return 0
}
verdict() { # NAME RC LOG
	case $2 in
	0) step "$1" PASS "$(grep -c '^ok' "$3" 2>/dev/null) ok" ;;
	77) step "$1" SKIP "$(tail -n 1 "$3" | cut -c1-90)" ;;
	*) step "$1" FAIL "exit $2, log $(basename "$3"): $(grep -m1 '^not ok' "$3" | cut -c1-90)" ;;
	esac
}
left() { echo $((BUDGET - ($(date +%s) - T0))); }
finish() {
	tar -C "$W" -cJf "$OUT/$PART-logs.tar.xz" logs
	echo "== $PART: steps ($(($(date +%s) - T0)) s)"
	cat "$SUM"
	rm -rf "$W"
	[ "$fails" -eq 0 ] && exit 0
	exit 1
}
{
	nvidia-smi -L
	nvidia-smi topo -m
	[ -n "$NEP" ] && echo "NCCL EP: $NEP ($(cat "$NEP/SOURCE" 2>/dev/null | tr '\n' ' '))"
	ldd "$E"
} >"$L/env.txt" 2>&1
step "$PART: machine" INFO "$ngpu GPUs, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"

# json_rows FILE SUITE METRIC ARM: "axis=value median" per point
json_rows() {
	python3 - "$@" <<'EOF'
import json, sys
f, suite, metric, arm = sys.argv[1:5]
for p in json.load(open(f))["points"]:
    if p.get("suite") != suite or p.get("arm") != arm:
        continue
    m = p["metrics"].get(metric)
    ax = " ".join("%s=%s" % kv for kv in sorted(p["axes"].items()))
    print("  %-40s %s %s" % (ax, metric, "%.3f" % m["median"] if m else "-"))
EOF
}

# nep_built: wait for the background NCCL EP build; its bundle to $OUT
# and .dev/ncclep/ (kept on a warm machine), the plugin compiled for it
nep_built() {
	[ -n "${nep_pid:-}" ] || return 0
	wait "$nep_pid"
	rc=$?
	nep_pid=
	cp "$NEPSRC/ncclep-build.log" "$L/" 2>/dev/null
	if [ $rc -ne 0 ]; then
		step "NCCL EP build" FAIL "exit $rc, $(tail -n 3 "$L/ncclep-build.log" | tr '\n' ' ' | cut -c1-90)"
		return 1
	fi
	mkdir -p .dev/ncclep && cp "$W/ncclep-sm90.tar.xz" .dev/ncclep/ &&
		cp "$W/ncclep-sm90.tar.xz" "$OUT/"
	mkdir -p "$W/nepb" && tar -xJf "$W/ncclep-sm90.tar.xz" -C "$W/nepb"
	. suites/gpu/nccl-ep-lib.sh
	nep_build_plugin "$W/nepb/ncclep-sm90" "$PWD" .dev/ncclep/libeg-nccl-ep.so \
		>"$L/plugin-build.log" 2>&1
	rc=$?
	cp .dev/ncclep/libeg-nccl-ep.so "$OUT/" 2>/dev/null
	step "NCCL EP build + plugin" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" \
		"$(du -h "$W/ncclep-sm90.tar.xz" | cut -f1) bundle; plugin exit $rc"
}

gpu() {
	if [ -n "$NEPSRC" ]; then
		sh suites/gpu/ncclep-build.sh "$NEPSRC" "$W/ncclep-sm90.tar.xz" \
			$(($(nproc) - 4)) >"$L/ncclep-build.out" 2>&1 &
		nep_pid=$!
	fi
	for t in test_gen_cuda test_ep_cuda; do
		"$W/eg/suites/gpu/$t" >"$L/$t.log" 2>&1
		verdict "$t" $? "$L/$t.log"
	done
	for s in l2-gpu plugin-cuda; do
		EG_TMP=$W/t-$s sh "suites/gpu/$s.sh" >"$L/$s.log" 2>&1
		rc=$?
		grep -q '^not ok' "$L/$s.log" && rc=1
		verdict "$s.sh (W=$ngpu)" $rc "$L/$s.log"
	done
	# measurements on an idle host: the build first
	nep_built
	# the a2a engine vs NCCL's alltoall at the same bytes (NVLink)
	echo "== a2a engine vs NCCL alltoall, W=2 NVLink, E=256 top-8 H=7168 bf16 (median of the slowest rank, 30 steps)" >>"$SUM"
	printf "%-6s %-3s %12s %11s %12s %12s %8s\n" T K dispatch_us wire_GB/s a2a_bytes alltoall_bw ratio >>"$SUM"
	for kt in "4 128" "4 4096" "1 16384" "4 16384" "8 16384"; do
		set -- $kt
		f=$L/vs-K$1-T$2.log
		"$E" launch -n 2 -- "$E" bench engine a2a --transport nccl \
			--path nvlink --num-comms "$1" --tokens "$2" --hidden 7168 \
			--experts 256 --topk 8 --dtype bf16 -n 30 -w 5 \
			--vs-alltoall >"$f" 2>&1
		rc=$?
		[ $rc -eq 0 ] || step "vs-alltoall K=$1 T=$2" FAIL "exit $rc: $(grep -m1 -i 'error\|fail' "$f" | cut -c1-80)"
		awk -v T="$2" -v K="$1" '{sub(/^\[[0-9]+\] /, "")} /^VS /{for(i=2;i<=NF;i++){split($i,a,"=");v[a[1]]=a[2]}
			printf "%-6s %-3s %12s %11.2f %12s %12.2f %7.1f%%\n", T, K, v["dispatch_us"], v["wire_gbps"], v["alltoall_bytes"], v["alltoall_busbw"], 100*v["ratio"]}' "$f" >>"$SUM"
		grep -m1 '# engine phases' "$f" | sed "s/^.*# engine phases/   T=$2 K=$1 phases/" >>"$SUM"
	done
	# the W=1 dispatch in fresh processes, by phase (issue 12's spread)
	echo "== W=1 a2a dispatch at T=4096 (E=256 top-8 H=7168 bf16) in five fresh processes, phases (us)" >>"$SUM"
	for i in 1 2 3 4 5; do
		f=$L/w1-phases-$i.log
		CUDA_VISIBLE_DEVICES=0 "$E" launch -n 1 -- "$E" bench engine a2a \
			--transport nccl --phases --tokens 4096 --hidden 7168 \
			--experts 256 --topk 8 --dtype bf16 -n 30 -w 5 >"$f" 2>&1 ||
			step "w1 phases #$i" FAIL "exit $?"
		printf "  #%s dispatch %s combine %s |%s\n" "$i" \
			"$(awk '$2 == "dispatch_us" {print $3; exit}' "$f")" \
			"$(awk '$2 == "combine_us" {print $3; exit}' "$f")" \
			"$(grep -m1 '# engine phases' "$f" | cut -d: -f2)" >>"$SUM"
	done
	# h200x2-xnode with its gates; the recovery at both sizes
	mkdir -p "$L/xnode"
	# bounded, so that the tables and logs still come back
	timeout $(($(left) - 15)) "$E" bench profile h200x2-xnode --results "$L/xnode/xnode.json" \
		--reports "$L/xnode" >"$L/xnode/xnode.out" 2>&1
	rc=$?
	step "h200x2-xnode campaign + gates" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" \
		"exit $rc: $(grep -m1 -i 'gates\?:.*pass\|PASS:\|FAIL:' "$L/xnode/xnode.out" | cut -c1-90)"
	cat >"$L/xnode/recovery.gate" <<'EOG'
profile: h200x2-xnode
gates:
  - {name: recovery-128, sentence: "K=8 over K=1 at 128 tokens per rank (reported).", rule: recovery, metric: so_gbps, arms: [a2a], axis: num_comms, filter: {suite: xnode-num-comms}, low: 1, high: 8, min_factor: 0.001}
  - {name: recovery-4096, sentence: "K=8 over K=1 at 4096 tokens per rank, 256 experts.", rule: recovery, metric: so_gbps, arms: [a2a], axis: num_comms, filter: {suite: xnode-num-comms-4096}, low: 1, high: 8, min_factor: 2.5}
EOG
	"$E" gate --gates "$L/xnode/recovery.gate" --tap "$L/xnode/recovery.tap" \
		"$L/xnode/xnode.json" >"$L/xnode/recovery.out" 2>&1
	verdict "recovery gates (128, 4096)" $? "$L/xnode/recovery.tap"
	{
		echo "== h200x2-xnode: gates"
		grep -E '^(PASS|FAIL|INCONCLUSIVE|SKIP|[0-9]+ gates:)' "$L/xnode/xnode.out" | head -n 20
		echo "== transport SO GB/s by num_comms (a2a)"
		for s in xnode-num-comms xnode-num-comms-4096; do
			echo " $s"
			json_rows "$L/xnode/xnode.json" "$s" so_gbps a2a
		done
	} >>"$SUM"
}

calibrate() {
	mkdir -p "$L/nvlink"
	timeout $(($(left) - 60)) "$E" bench profile h200x2-nvlink --results "$L/nvlink/nvlink.json" \
		--reports "$L/nvlink" >"$L/nvlink/nvlink.out" 2>&1
	rc=$?
	step "h200x2-nvlink campaign + gates" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc"
	{
		echo "== h200x2-nvlink: gates"
		grep -E '^(PASS|FAIL|INCONCLUSIVE|SKIP|[0-9]+ gates:)' "$L/nvlink/nvlink.out" | head -n 20
	} >>"$SUM"
	b=$(($(left) - 30))
	if [ "$b" -lt 120 ]; then
		step "calibration h200x2" SKIP "$b s left of $BUDGET"
		return
	fi
	EG_BUDGET=$b EG_LAUNCHES=5 EG_JUDGED=3 EG_HISTORY=5 \
		EG_PLANT=slow:10%:a2a EG_KINDS="clean plant" \
		EG_SAVE="$L/calib/fixtures" \
		sh suites/gates/calibrate.sh "$E" h200x2 "$L/calib" 20 5 \
		>"$L/calib.out" 2>&1
	rc=$?
	step "calibration h200x2 ($b s)" "$([ $rc -le 1 ] && echo INFO || echo FAIL)" \
		"exit $rc (1: targets missed), $(ls "$L/calib/campaigns" | wc -l) campaigns"
	tail -n 40 "$L/calib.out" >>"$SUM"
}

ncclep() {
	if [ -n "$NEPSRC" ]; then
		step "ncclep" FAIL "NCCLEP is a source tree: build it in part gpu first (or with suites/gpu/ncclep-build.sh)"
		return
	fi
	so=$W/eg/plugins/nccl-ep/libeg-nccl-ep.so
	if [ ! -f "$so" ]; then
		. suites/gpu/nccl-ep-lib.sh
		nep_build_plugin "$NEP" "$PWD" "$so" >"$L/plugin-build.log" 2>&1
		verdict "plugin compiled here" $? "$L/plugin-build.log"
	fi
	export LD_LIBRARY_PATH=$NEP/lib:$W/eg/plugins/nccl-ep:$LD_LIBRARY_PATH
	OUT=$L/nccl-ep sh suites/gpu/nccl-ep-device-x2.sh "$3" "$W/eg" \
		>"$L/nccl-ep-x2.log" 2>&1
	verdict nccl-ep-device-x2.sh $? "$L/nccl-ep-x2.log"
	{
		echo "== nccl-ep-device-x2"
		sed -n '/^== steps/,$p' "$L/nccl-ep-x2.log"
	} | tee -a "$SUM"
	# NCCL EP's modes as arms beside a2a and dense (W=2, NVLink)
	. suites/gpu/nccl-ep-lib.sh
	nep_env "$NEP"
	mkdir -p "$L/ncclep"
	"$E" bench profile suites/gpu/h200x2-ncclep.profile --no-gates \
		--results "$L/ncclep/ncclep.json" --reports "$L/ncclep" \
		>"$L/ncclep/ncclep.out" 2>&1
	rc=$?
	step "h200x2-ncclep profile (plugin arms)" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc"
	{
		echo "== h200x2-ncclep: dispatch_us / combine_us (median) per arm"
		python3 - "$L/ncclep/ncclep.json" <<'EOF'
import json, sys
for p in json.load(open(sys.argv[1]))["points"]:
    m = p["metrics"]
    g = lambda k: "%.1f" % m[k]["median"] if k in m else "-"
    print("  %-10s %-44s T=%-5s %s %9s %9s %9s" % (p.get("suite"), p.get("arm")[:44],
          p["axes"].get("concurrency", ""), p.get("status", ""), g("dispatch_us"),
          g("combine_us"), g("step_us")))
EOF
	} >>"$SUM" 2>&1
}

$PART "$@"
finish
