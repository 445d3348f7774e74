#!/bin/sh
# epgate bench's subcommands (profile, list, engine, raw, overhead): every
# bad argument exits 99 naming it; the new spellings run; the old flags
# stay aliases; the GPU ones skip (77, "no CUDA device") without a GPU;
# and one point measured by `bench engine` carries the same byte and
# operation counts as the same point of a profile (one measurement path).
. "${EG_SRCDIR:-.}/suites/lib.sh"

E=$EG_EPGATE

# argument errors: 99 and the argument named
while IFS='|' read -r args want; do
	# shellcheck disable=SC2086
	"$E" bench $args >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 99 ] && grep -qF -- "$want" "$EG_TMP/out"; then
		eg_ok "bench $args: 99, says '$want'"
	else
		eg_not_ok "bench $args: exit $rc, want 99 and '$want'"
		head -n 3 "$EG_TMP/out" | sed 's/^/# /'
	fi
done <<'EOF'
nope|unknown subcommand "nope"
|give a subcommand
--bogus|"--bogus": give a subcommand first
--profile local --engine a2a|give one of --profile NAME
--profile|--profile needs a value
profile|give a profile
profile nosuch|no profile "nosuch"
profile local --tokens 3|--tokens
profile local --bogus|unknown option "--bogus"
profile local extra|unexpected argument "extra"
profile local --sweep nope|--sweep: no sweep "nope" in profile local
list|give a profile
list nosuch|no profile "nosuch"
list local extra|unexpected argument "extra"
engine --transport ib|--transport "ib"
engine nope|"nope" is not a multi-process engine
engine --iters 0|--iters: 0 is out of range
engine -w x|-w: "x" is not
engine --timeout 0|--timeout: 0 is out of range
engine --num-comms 17|--num-comms: 17 is out of range
engine --tokens abc|--tokens=abc
engine --vs-alltoall|--vs-alltoall goes with --transport nccl
engine --transport nccl --vs-alltoall --tokens 64|--vs-alltoall needs 2 ranks or more
engine --phases|--phases goes with --transport nccl
engine --path nvlink|--path goes with --transport nccl
engine --transport nccl --provider shm|--provider goes with --transport fabric
engine --transport nccl --device x|--device: "x" is not
engine --transport nccl --path pcie|--path "pcie"
engine --transport nccl --xnode-mode x|--xnode-mode "x"
engine a2a dense|unexpected argument "dense"
raw --size 0|--size: 0 is out of range
raw --msg-size 2M|--msg-size: 2M is out of range
raw --msgs 0|--msgs: 0 is out of range
raw -n 0|-n: 0 is out of range
raw --path xnode|--path goes with a collective
raw --transport nccl|--transport nccl needs a collective
raw bogus|unknown collective "bogus"
raw alltoall --size 1M|--size goes with the fabric benchmark
raw alltoall --provider shm|--provider goes with the fabric benchmark
raw alltoall --num-comms 2|--num-comms
raw alltoall --transport fabric|alltoall runs over NCCL
raw alltoall -d fp16|-d "fp16"
raw alltoall -f 1|-f: 1 is out of range (1, 1024]
raw alltoall -b 2M -e 1M|-b is above -e
raw alltoall -e 1X|-e: "1X" is not a byte count
raw alltoall --impl foo|--impl "foo"
raw alltoall allgather|unexpected argument "allgather"
overhead --op-us 0|--op-us: 0 is out of range
overhead --iters x|--iters: "x" is not
overhead extra|unexpected argument "extra"
--raw --num-comms 0|--num-comms: 0 is out of range
--raw bogus|unknown collective "bogus"
--engine nope --tokens 8|"nope" is not a multi-process engine
EOF

# every subcommand has its help, and bench --help names them all
for sub in profile list engine raw overhead; do
	if "$E" bench "$sub" --help >"$EG_TMP/out" 2>&1 &&
		grep -q '^usage: ' "$EG_TMP/out" &&
		"$E" bench --help | grep -q "^  $sub "; then
		eg_ok "bench $sub --help, and bench --help lists it"
	else
		eg_not_ok "bench $sub --help"
	fi
done

# the plan: the new spelling and the old one agree
"$E" bench list local >"$EG_TMP/l1" 2>&1
r1=$?
"$E" bench --profile local --list >"$EG_TMP/l2" 2>&1
r2=$?
"$E" bench profile local --list >"$EG_TMP/l3" 2>&1
r3=$?
if [ "$r1$r2$r3" = 000 ] && cmp -s "$EG_TMP/l1" "$EG_TMP/l2" &&
	cmp -s "$EG_TMP/l1" "$EG_TMP/l3" && grep -q '^  point ' "$EG_TMP/l1"; then
	eg_ok "bench list local = bench --profile local --list = bench profile local --list"
else
	eg_not_ok "bench list local and its aliases (exit $r1 $r2 $r3)"
fi

# the fabric raw benchmark, new spelling
json=$EG_TMP/raw.json
"$E" launch -n 2 -- "$E" bench raw --provider shm --iters 3 --warmup 1 \
	--msgs 16 --size 64K --json "$json" >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	eg_ok "bench raw # SKIP built without libfabric"
elif [ "$rc" -eq 0 ] && grep -q 'msgs/s per endpoint' "$EG_TMP/out" &&
	grep -q '"schema": "epgate/bench-raw/v1"' "$json" &&
	grep -q '"ops_posted_per_call_rank0": 32.0' "$json"; then
	# 16 messages to the one peer: 16 sends and 16 receives a call, so
	# the 8-byte messages reached the transport apart (eg_xport_opts_t
	# chunk); a transport that took them as one posts 2
	eg_ok "bench raw: table and JSON, 32 operations a call (16 messages each way)"
else
	eg_not_ok "bench raw (exit $rc): $(grep -o "\"ops_posted_per_call_rank0\": [0-9.]*" "$json" 2>/dev/null)"
	tail -n 5 "$EG_TMP/out" | sed 's/^/# /'
fi

# overhead runs (its verdict is a timing, not this test's business)
"$E" bench overhead --iters 40 --op-us 20 >"$EG_TMP/out" 2>&1
rc=$?
if { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } &&
	grep -q 'overhead: driver vs bare' "$EG_TMP/out"; then
	eg_ok "bench overhead runs and reports (exit $rc)"
else
	eg_not_ok "bench overhead (exit $rc)"
	tail -n 5 "$EG_TMP/out" | sed 's/^/# /'
fi

# GPU subcommands without a GPU: 77 and why, on one rank and on two
gpu_skip() {
	"$@" >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ] &&
		grep -q 'no CUDA device\|built without CUDA and NCCL\|not built into this epgate' "$EG_TMP/out"; then
		eg_ok "$(echo "$*" | sed "s|$E|epgate|g"): 77 without a GPU"
	elif [ "$rc" -eq 0 ] && [ -n "${EG_GPUS:-}" ]; then
		eg_ok "$(echo "$*" | sed "s|$E|epgate|g"): ran on a GPU"
	else
		eg_not_ok "$(echo "$*" | sed "s|$E|epgate|g"): exit $rc"
		tail -n 3 "$EG_TMP/out" | sed 's/^/# /'
	fi
}
if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	eg_ok "GPU subcommands without a GPU # SKIP this host has a GPU"
else
	gpu_skip "$E" launch -n 2 -- "$E" bench engine --transport nccl \
		--vs-alltoall --tokens 64 --hidden 128
	gpu_skip "$E" launch -n 2 -- "$E" bench engine dense --transport nccl
	gpu_skip "$E" launch -n 2 -- "$E" bench raw alltoall --transport nccl \
		-b 1K -e 1K
	gpu_skip "$E" bench --raw a2a --transport nccl --tokens 64
fi

# one measurement path: a profile's point and `bench engine` of the same
# point count the same bytes and operations
cat >"$EG_TMP/one.profile" <<'EOF'
profile: one
transport: fabric
launcher: local
timeout: 30
repetitions: {warmup: 1, iters: 5}
model: {bw_gbps: 10, post_rate: 1e6}
base: {world: 4, nodes: 2, num_comms: 1, hidden: 64, experts: 8, topk: 2,
       dtype: bf16, routing: uniform}
sweeps:
  - name: one
    arms: [a2a]
    axes: {concurrency: [24]}
EOF
"$E" bench profile "$EG_TMP/one.profile" --no-gates --reports "$EG_TMP/runs" \
	>"$EG_TMP/p.out" 2>&1
rp=$?
"$E" launch -n 4 --ranks-per-node 2 -- "$E" bench engine a2a --tokens 24 \
	--hidden 64 --experts 8 --topk 2 --iters 5 --warmup 1 \
	>"$EG_TMP/e.out" 2>&1
re=$?
R=$(ls "$EG_TMP"/runs/*/bench-one.json 2>/dev/null | head -n 1)
# value NAME: the profile point's median (%.4g) and the engine's printed one
pval() {
	sed -n "s/.*\"$1\": {\"median\": \([0-9.e+-]*\).*/\1/p" "$R" |
		head -n 1 | awk '{ printf "%.4g", $1 }'
}
evalue() {
	awk -v m="$1" '$2 == m { printf "%.4g", $3; exit }' "$EG_TMP/e.out"
}
same=1
for m in so_bytes su_bytes ops_posted; do
	p=$(pval "$m")
	e=$(evalue "$m")
	echo "# $m: profile $p, bench engine $e"
	[ -n "$p" ] && [ "$p" = "$e" ] || same=0
done
if [ "$rp" -eq 77 ] || [ "$re" -eq 77 ]; then
	eg_ok "one measurement path # SKIP built without libfabric"
elif [ "$rp" -eq 0 ] && [ "$re" -eq 0 ] && [ "$same" -eq 1 ]; then
	eg_ok "one measurement path: bench engine and the profile's point count the same bytes and ops"
else
	eg_not_ok "one measurement path (profile exit $rp, engine exit $re)"
	tail -n 5 "$EG_TMP/p.out" "$EG_TMP/e.out" | sed 's/^/# /'
fi
# planted: a different point (other tokens) must not compare equal
"$E" launch -n 4 --ranks-per-node 2 -- "$E" bench engine a2a --tokens 25 \
	--hidden 64 --experts 8 --topk 2 --iters 2 --warmup 0 \
	>"$EG_TMP/e.out" 2>&1
if [ "$(pval so_bytes)" != "$(evalue so_bytes)" ] ||
	[ "$(pval su_bytes)" != "$(evalue su_bytes)" ]; then
	eg_ok "planted: another point's counts differ from the profile's"
else
	eg_not_ok "planted: another point's counts differ from the profile's"
fi
eg_done
