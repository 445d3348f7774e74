#!/bin/sh
# Everything the lent single H200 checks in one device call (about six
# minutes on a fresh machine), from the repository root:
#
#   sh suites/gpu/h200x1-device.sh EG_BUNDLE NCCLEP_BUNDLE
#
# EG_BUNDLE      an epgate build packed by suites/gpu/bundle.sh (.tar.xz)
# NCCLEP_BUNDLE  NCCL 2.30.7 + NCCL EP (ncclep-sm90.tar.xz: lib/, bin/),
#                or - to leave step 4 out (the machine's own NCCL then)
#
# 1. the GPU unit tests (test_gen_cuda, test_ep_cuda);
# 2. GPU L2 (suites/gpu/l2-gpu.sh: W=1 on one GPU) and a plugin on CUDA
#    memory (suites/gpu/plugin-cuda.sh);
# 3. one measurement path (issue 10): `bench engine a2a --transport nccl`
#    and a one-point profile at the same point (W=1, E=256, top-8,
#    H=7168, bf16; T = 128, 4096, 16384 tokens), side by side;
# 4. NCCL EP through its plugin beside its own ep_bench
#    (suites/gpu/nccl-ep-device.sh).
# Logs under $OUT; a table per step is printed last.  Exit: 0 every step
# passed, 1 one failed, 77 no GPU.
[ $# -eq 2 ] || { echo "usage: sh suites/gpu/h200x1-device.sh EG_BUNDLE NCCLEP_BUNDLE" >&2; exit 99; }
nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo "h200x1-device: no GPU: skip"; exit 77; }
OUT=${OUT:-/tmp/h200x1-device}
mkdir -p "$OUT"
W=/tmp/eg-dev.$$
mkdir -p "$W/eg" "$W/nep"
tar -xJf "$1" -C "$W/eg" || exit 99
export NCCL_NVLS_ENABLE=0 EPGATE_DATADIR=$PWD EG_SRCDIR=$PWD EG_BUILDDIR=$W/eg
export LD_LIBRARY_PATH=$W/eg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "$2" != - ]; then
	tar -xJf "$2" -C "$W/nep" || exit 99
	NEP=$(dirname "$(find "$W/nep" -name nccl_ep.h | head -1)")/..
	# one libnccl in every process: NCCL EP's 2.30.7
	export LD_LIBRARY_PATH=$NEP/lib:$LD_LIBRARY_PATH
fi
export EG_EPGATE=$W/eg/epgate
E=$EG_EPGATE
fails=0
T0=$(date +%s)
SUM=$OUT/steps.txt
: >"$SUM"
step() {
	printf "%-34s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" | tee -a "$SUM"
	[ "$2" = FAIL ] && fails=$((fails + 1))
	return 0
}
verdict() { # NAME RC LOG: a test's exit as a step line
	case $2 in
	0) step "$1" PASS "$(grep -c '^ok' "$3" 2>/dev/null) ok" ;;
	77) step "$1" SKIP "$(tail -n 1 "$3" | cut -c1-80)" ;;
	*) step "$1" FAIL "exit $2, log $(basename "$3")" ;;
	esac
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/gpu.txt" 2>&1
step gpu INFO "$(cat "$OUT/gpu.txt")"

# 1. units
for t in test_gen_cuda test_ep_cuda; do
	"$W/eg/suites/gpu/$t" >"$OUT/$t.log" 2>&1
	verdict "$t" $? "$OUT/$t.log"
done
# 2. GPU L2 and the CUDA plugin
for s in l2-gpu plugin-cuda; do
	EG_TMP=$W/t-$s sh "suites/gpu/$s.sh" >"$OUT/$s.log" 2>&1
	rc=$?
	grep -q '^not ok' "$OUT/$s.log" && rc=1
	verdict "$s.sh" $rc "$OUT/$s.log"
done

# 3. bench engine and the profile path at the same points
SHAPE="--experts=256 --topk=8 --hidden=7168 --dtype=bf16 --routing=uniform"
cat >"$W/one.profile" <<'EOF'
profile: one-point
description: "bench engine's points through the profile path (h200x1-device.sh)"
transport: nccl
launcher: local
timeout: 120
repetitions: {warmup: 5, iters: 20, launches: 1}
base: {world: 1, nodes: 1, num_comms: 1, hidden: 7168, experts: 256, topk: 8, dtype: bf16, routing: uniform}
sweeps:
  - name: t
    arms: [a2a]
    axes: {concurrency: [128, 4096, 16384]}
EOF
"$E" bench profile "$W/one.profile" --no-gates --results "$OUT/one-point.json" \
	--reports "$W/runs" >"$OUT/profile.log" 2>&1
prc=$?
printf "%-7s %-10s %12s %12s %12s\n" T path dispatch_us combine_us step_us >"$OUT/paths.txt"
for T in 128 4096 16384; do
	"$E" launch -n 1 -- "$E" bench engine a2a --transport nccl --tokens=$T $SHAPE \
		>"$OUT/engine-T$T.log" 2>&1
	erc=$?
	med() { awk -v m="$1" '$2 == m {print $3; exit}' "$OUT/engine-T$T.log"; }
	printf "%-7s %-10s %12s %12s %12s\n" $T "engine" "$(med dispatch_us)" "$(med combine_us)" "$(med step_us)" >>"$OUT/paths.txt"
	python3 - "$OUT/one-point.json" $T >>"$OUT/paths.txt" <<'EOF' 2>>"$OUT/profile.log"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["points"]:
    if int(p["axes"].get("concurrency", -1)) == int(sys.argv[2]):
        m = p["metrics"]
        g = lambda k: "%.1f" % m[k]["median"] if k in m else "-"
        print("%-7s %-10s %12s %12s %12s" % (sys.argv[2], "profile", g("dispatch_us"), g("combine_us"), g("step_us")))
EOF
	[ $erc -eq 0 ] || step "bench engine T=$T" FAIL "exit $erc"
done
verdict "bench profile one-point" $prc "$OUT/profile.log"

# 4. NCCL EP
if [ "$2" != - ]; then
	OUT=$OUT/nccl-ep sh suites/gpu/nccl-ep-device.sh "$2" "$1" >"$OUT/nccl-ep.log" 2>&1
	verdict nccl-ep-device.sh $? "$OUT/nccl-ep.log"
else
	step nccl-ep-device.sh SKIP "no NCCL EP bundle given"
fi

echo "== paths (median us, W=1, E=256, top-8, H=7168, bf16)"
cat "$OUT/paths.txt"
echo "== nccl-ep"
cat "$OUT/nccl-ep/steps.txt" 2>/dev/null
[ -f "$OUT/nccl-ep.log" ] && tail -n 25 "$OUT/nccl-ep.log"
echo "== steps"
cat "$SUM"
rm -rf "$W"
[ $fails -eq 0 ]
