#!/bin/sh
# GPU L2: the NCCL engines on GPU memory, one rank per GPU, verified on the
# GPUs bit for bit against the dense reference. W=1 on one GPU; with two
# GPUs or more, W=2 over NVLink (one node) and emulated cross-node (two
# virtual nodes: NCCL's network transport), num_comms 1 and 4, both
# engines; every job must also show NCCL took the path asked for. Then a
# rank that stalls: its peer's deadline aborts the communicators and the
# job ends with the step named. Skips (a TAP plan of 0) without a GPU or
# without CUDA and NCCL in the build.
. "${EG_SRCDIR:-.}/suites/lib.sh"
export NCCL_NVLS_ENABLE=0

if ! "$EG_EPGATE" l2-gpu-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-gpu-rank"
	exit 0
fi
ngpu=${EG_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ -n "$ngpu" ] || ngpu=0
cat >"$EG_TMP/w1.ini" <<'EOF'
hidden = 64
seed = 5
world = 1
experts = 8
[w1-base]
topk = 2
tokens = 40
[w1-fp8-rand]
topk = 4
tokens = 33
hidden = 256
dtype = fp8
data = random
[w1-zero]
topk = 2
tokens = 0
[w1-mask]
topk = 3
tokens = 17
mask = 0.5
EOF

# job NAME N RPN ENGINE K PATH [WORKLOADS]: one launch, its results checked
job() {
	name=$1 n=$2 rpn=$3 eng=$4 k=$5 path=$6 wl=${7:-}
	res=$EG_TMP/$name.jsonl
	set -- --engine "$eng" --num-comms "$k" --path "$path" \
		--results "$res" --log-dir "$EG_TMP" --iters 2
	[ -n "$wl" ] && set -- "$@" --workload "$wl"
	t0=$(date +%s)
	"$EG_EPGATE" launch -n "$n" --ranks-per-node "$rpn" --timeout 300 -- \
		"$EG_EPGATE" l2-gpu-rank "$@" >"$EG_TMP/$name.out" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	cp "$res" "$EG_TMP/$name.out" "${EG_L2GPU_KEEP:-$EG_TMP}/" 2>/dev/null
	if [ "$rc" -eq 77 ]; then
		skip_why=$(tail -n 1 "$EG_TMP/$name.out")
		return 77
	fi
	pass=$(cat "$res" 2>/dev/null | grep -c '"status":"pass"')
	bad=$(cat "$res" 2>/dev/null | grep -c '"status":"fail"\|"status":"error"')
	via=$(sed -n 's/.*"workload":"transport".*"via":"\([^"]*\)".*/\1/p' "$res" | head -n 1)
	if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$pass" -ge 2 ]; then
		eg_ok "$name: $((pass - 1)) workloads bit-exact on GPU, transport $via, ${dt} s"
	else
		eg_not_ok "$name: exit $rc, $pass pass, $bad fail, transport '$via'"
		grep '"status":"fail"\|"status":"error"' "$res" 2>/dev/null |
			head -n 5 | cut -c1-600 | sed 's/^/# /'
		tail -n 15 "$EG_TMP/$name.out" | sed 's/^/# /'
	fi
	return 0
}

job gpu.w1.a2a.k1 1 1 a2a 1 auto "$EG_TMP/w1.ini"
if [ $? -eq 77 ]; then
	echo "1..0 # SKIP $skip_why"
	exit 0
fi
job gpu.w1.a2a.k4 1 1 a2a 4 auto "$EG_TMP/w1.ini"
job gpu.w1.dense.k1 1 1 dense 1 auto "$EG_TMP/w1.ini"

if [ "$ngpu" -ge 2 ]; then
	for eng in a2a dense; do
		for k in 1 4; do
			job "gpu.w2.nvlink.$eng.k$k" 2 2 "$eng" "$k" nvlink
			job "gpu.w2.xnode.$eng.k$k" 2 1 "$eng" "$k" xnode
		done
	done

	# a rank that stalls in its 3rd combine: the peer's deadline (5 s)
	# aborts the communicators and names the step
	t0=$(date +%s)
	EPGATE_FAULT=stall:1:combine:3 EPGATE_TIMEOUT=5 \
		"$EG_EPGATE" launch -n 2 --ranks-per-node 2 --timeout 60 -- \
		"$EG_EPGATE" l2-gpu-rank --engine a2a --path nvlink --filter w2- \
		--results "$EG_TMP/stall.jsonl" --log-dir "$EG_TMP" \
		>"$EG_TMP/stall.out" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	cp "$EG_TMP/stall.out" "${EG_L2GPU_KEEP:-$EG_TMP}/" 2>/dev/null
	if [ "$rc" -ne 0 ] && [ "$dt" -le 40 ] &&
		grep -q 'combine: deadline 5.0 s expired' "$EG_TMP/stall.out"; then
		eg_ok "stall in combine: exit $rc after ${dt} s: $(grep -m1 'deadline' "$EG_TMP/stall.out" | cut -c1-200)"
	else
		eg_not_ok "stall in combine: exit $rc, ${dt} s"
		tail -n 15 "$EG_TMP/stall.out" | sed 's/^/# /'
	fi
else
	eg_n=$((eg_n + 1))
	echo "ok $eg_n - W=2 configurations # SKIP $ngpu GPU(s), need 2"
fi
eg_done
