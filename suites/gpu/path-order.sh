#!/bin/sh
# Does a point's time depend on what ran before it in the same process?
# On one H200 (W=1, E=256, top-8, H=7168, bf16), the a2a at T=4096:
# `bench engine` in a fresh process, a one-point profile, and a profile
# whose launch runs T=16384 and T=4096 (both orders, by seed).  From the
# repository root, on the GPU machine:
#
#   sh suites/gpu/path-order.sh EG_BUNDLE
#
# Prints dispatch/combine/step medians (us) per run; logs under $OUT.
[ $# -eq 1 ] || { echo "usage: sh suites/gpu/path-order.sh EG_BUNDLE" >&2; exit 99; }
nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo "path-order: no GPU: skip"; exit 77; }
OUT=${OUT:-/tmp/path-order}
W=/tmp/eg-po.$$
mkdir -p "$OUT" "$W/eg" && tar -xJf "$1" -C "$W/eg" || exit 99
export NCCL_NVLS_ENABLE=0 EPGATE_DATADIR=$PWD LD_LIBRARY_PATH=$W/eg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
E=$W/eg/epgate
prof() { # FILE AXES
	cat >"$1" <<EOP
profile: order
description: "path-order.sh"
transport: nccl
launcher: local
timeout: 120
repetitions: {warmup: 5, iters: 20, launches: 1}
base: {world: 1, nodes: 1, num_comms: 1, hidden: 7168, experts: 256, topk: 8, dtype: bf16, routing: uniform}
sweeps:
  - name: t
    arms: [a2a]
    axes: {concurrency: [$2]}
EOP
}
show() { # LABEL RESULTS
	python3 - "$1" "$2" <<'EOP'
import json, sys
d = json.load(open(sys.argv[2]))
for i, p in enumerate(d["points"]):
    m = p["metrics"]
    print("%-26s %d. T=%-6s %9.1f %9.1f %9.1f" % (sys.argv[1], i + 1, p["axes"]["concurrency"],
          m["dispatch_us"]["median"], m["combine_us"]["median"], m["step_us"]["median"]))
EOP
}
printf "%-26s %-10s %9s %9s %9s\n" run point dispatch combine step
for i in 1 2; do
	"$E" launch -n 1 -- "$E" bench engine a2a --transport nccl --tokens=4096 \
		--experts=256 --topk=8 --hidden=7168 --dtype=bf16 >"$OUT/engine$i.log" 2>&1
	awk -v r="engine (fresh) #$i" '$2 == "dispatch_us" {d=$3} $2 == "combine_us" {c=$3} $2 == "step_us" {s=$3}
		END {printf "%-26s 1. T=%-6s %9s %9s %9s\n", r, 4096, d, c, s}' "$OUT/engine$i.log"
done
prof "$W/one.profile" 4096
"$E" bench profile "$W/one.profile" --no-gates --results "$OUT/one.json" --reports "$W/r" >"$OUT/one.log" 2>&1
show "profile T=4096 alone" "$OUT/one.json"
prof "$W/two.profile" "4096, 16384"
for seed in 1 2 3; do
	"$E" bench profile "$W/two.profile" --no-gates --seed $seed --results "$OUT/two-$seed.json" \
		--reports "$W/r" >"$OUT/two-$seed.log" 2>&1
	show "profile 4096+16384 s$seed" "$OUT/two-$seed.json"
done
rm -rf "$W"
