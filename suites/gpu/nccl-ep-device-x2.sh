#!/bin/sh
# NCCL EP through epgate on two H200s of one host (W = 2), beside NCCL
# EP's ep_bench, in one call (the separate two-GPU issue; about five to
# ten minutes on a fresh machine):
#
#   sh suites/gpu/nccl-ep-device-x2.sh BUNDLE EPGATE_DIR
#
# BUNDLE and EPGATE_DIR as for nccl-ep-device.sh (the one-GPU script).
# Run from the repository root; logs in $OUT (else a folder it names),
# the tables last. Steps:
#  1. unpack, environment, two GPUs, the plugin loads and declares;
#  2. the L2 matrix over NVLink (one node, two ranks), LL then HT
#     (suites/gpu/nccl-ep-lib.sh: uniform and skewed routing, uneven and
#     zero-token ranks, exact and random data, masks, ep_bench's shape),
#     in host memory (l2-rank: the native layout checked field by field)
#     and in device memory (l2-gpu-rank: the GPU path, verified on the
#     GPUs);
#  3. two virtual nodes (one rank each: NCCL's network between them):
#     NCCL EP needs GIN there; without an RDMA network the adapter skips
#     with the reason, which this step shows (a pass if GIN is there);
#  4. LL at ep_bench's shape (128 tokens per rank, H 7168, top-8 of 256):
#     epgate bench engine of the plugin and of epgate's nccl a2a, then
#     ep_bench -a ll over 2 ranks;
#  5. HT at 4096 tokens per rank: the same with ep_bench -a ht;
#  6. the step table and the comparison.
# Exit: 0 every step passed or skipped with its reason, 1 one failed, 77
# fewer than two GPUs, 99 bad arguments.
if [ $# -ne 2 ]; then
	echo "usage: sh suites/gpu/nccl-ep-device-x2.sh BUNDLE(.tar.xz|dir) EPGATE_DIR(|.tar.xz)" >&2
	exit 99
fi
EG_SRCDIR=${EG_SRCDIR:-$PWD}
. "$EG_SRCDIR/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
trap - EXIT
LOG=${OUT:-${TMPDIR:-/tmp}/nccl-ep-device-x2.$$}
mkdir -p "$LOG" || exit 99
rm -rf "$EG_TMP"
EG_TMP=$LOG
# what is unpacked stays out of the logs (they travel back)
WORK=${TMPDIR:-/tmp}/nccl-ep-work.$$
trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
SUM=$LOG/steps.txt
: >"$SUM"
step() {
	printf "%-30s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" |
		tee -a "$SUM"
	[ "$2" = FAIL ] && eg_fails=$((eg_fails + 1))
	return 0
}
ok_or_fail() { [ "$1" -eq 0 ] && echo ok || echo FAIL; }

echo "== nccl-ep-device-x2: logs in $LOG"
if ! nep_setup "$1" "$2" "$WORK" >"$LOG/setup.txt" 2>&1; then
	echo "nccl-ep-device-x2: $(cat "$LOG/setup.txt")" >&2
	exit 99
fi
{
	echo "NCCL EP: $NEP_ROOT"
	echo "epgate:  $EG_EPGATE"
	echo "plugin:  $NEP_SO"
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	nvidia-smi -L 2>&1
	nvidia-smi topo -m 2>&1
	ldd "$NEP_SO" 2>&1
} >"$LOG/env.txt"
ngpu=$(nep_gpus)
if [ "$ngpu" -lt 2 ]; then
	step "1 setup" SKIP "$ngpu GPU(s): this script needs 2 (nccl-ep-device.sh runs on one)"
	exit 77
fi
step "1 setup" ok "$ngpu GPUs; NCCL EP $(basename "$NEP_ROOT")"
nep_declares "$NEP_SO" "$ngpu" >"$LOG/declares.tap" 2>&1
if grep -q '^not ok' "$LOG/declares.tap"; then
	step "1 declared limits" FAIL "$(grep -m1 '^not ok' "$LOG/declares.tap" | cut -c1-120)"
else
	step "1 declared limits" ok "$(grep -c '^ok' "$LOG/declares.tap") checks"
fi
nep_workloads "$LOG"
EPGATE_TIMEOUT=900 # HT compiles its kernels at their first call
export EPGATE_TIMEOUT

# l2 NAME RPN PROG MODE [options]: one L2 job of the plugin over the mode's
# world-2 matrix; its exit status and counts in l2rc, l2n, l2pass, l2bad
l2() {
	l2name=$1 rpn=$2 l2prog=$3 l2mode=$4
	shift 4
	rm -f "$LOG/$l2name.jsonl"
	"$EG_EPGATE" launch -n 2 --ranks-per-node "$rpn" --timeout 1200 -- \
		"$EG_EPGATE" "$l2prog" --engine "plugin:$NEP_SO,mode=$l2mode" \
		--workload "$LOG/$l2mode-w2.ini" --results "$LOG/$l2name.jsonl" \
		"$@" >"$LOG/$l2name.out" 2>&1
	l2rc=$?
	l2n=$(grep -c '^\[' "$LOG/$l2mode-w2.ini")
	l2pass=$(cat "$LOG/$l2name.jsonl" 2>/dev/null | grep -c '"status":"pass"')
	l2bad=$(cat "$LOG/$l2name.jsonl" 2>/dev/null |
		grep -c '"status":"fail"\|"status":"error"')
}

# 2. the L2 matrix over NVLink
for mode in ll ht; do
	for prog in l2-rank l2-gpu-rank; do
		name=l2-$mode-nvlink-$([ $prog = l2-rank ] && echo host || echo gpu)
		if [ $prog = l2-gpu-rank ]; then
			l2 "$name" 2 "$prog" "$mode" --path nvlink --log-dir "$LOG"
		else
			l2 "$name" 2 "$prog" "$mode"
		fi
		if [ "$l2rc" -eq 0 ] && [ "$l2pass" -eq "$l2n" ]; then
			step "2 $name" ok "$l2pass of $l2n workloads pass"
		else
			step "2 $name" FAIL "exit $l2rc, $l2pass of $l2n pass, $l2bad fail: $(grep -m1 -o '"workload":"[^"]*"' "$LOG/$name.jsonl" 2>/dev/null | head -n 1) ... see $name.jsonl, $name.out; $(nep_why "$LOG/$name.out")"
		fi
	done
done

# 3. two virtual nodes: GIN or a skip with its reason
for mode in ll ht; do
	name=l2-$mode-xnode
	l2 "$name" 1 l2-gpu-rank "$mode" --path xnode --log-dir "$LOG" \
		--filter "w2-$mode-base"
	why=$(grep -m1 -o 'not supported: .*' "$LOG/$name.out" | cut -c1-200)
	if [ "$l2rc" -eq 0 ] && [ "$l2pass" -ge 1 ]; then
		step "3 $name" ok "NCCL EP across virtual nodes: $l2pass pass (GIN available)"
	elif [ -n "$why" ]; then
		step "3 $name" SKIP "$why"
	else
		step "3 $name" FAIL "exit $l2rc, $l2pass pass, no reason given: $(nep_why "$LOG/$name.out")"
	fi
done

# 4, 5. ep_bench's shapes over two ranks (NVLink)
for mode in ll ht; do
	tok=$([ $mode = ll ] && echo 128 || echo 4096)
	sn=$([ $mode = ll ] && echo 4 || echo 5)
	nep_bench "$LOG/bench-$mode.out" 2 2 \
		"plugin:$NEP_SO,mode=$mode,recv=$(nep_epb_recv $mode 2 "$tok")" \
		"$tok" --path nvlink
	rc=$?
	step "$sn bench $mode W=2 (plugin)" "$(ok_or_fail $rc)" \
		"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-$mode.out")"); dispatch $(nep_metric "$LOG/bench-$mode.out" phase_plugin_dispatch_us) us, combine $(nep_metric "$LOG/bench-$mode.out" phase_plugin_combine_us) us (events, mean)"
	nep_bench "$LOG/bench-$mode-a2a.out" 2 2 a2a "$tok" --path nvlink
	rc=$?
	step "$sn bench $mode W=2 (a2a)" "$(ok_or_fail $rc)" \
		"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-$mode-a2a.out")"); dispatch $(nep_metric "$LOG/bench-$mode-a2a.out" dispatch_us) us, combine $(nep_metric "$LOG/bench-$mode-a2a.out" combine_us) us (median)"
	nep_ep_bench "$LOG/ep_bench-$mode.out" 2 -a "$mode" -t "$tok" -d 7168 -k 8 -e 256 -w 10 -i 50
	rc=$?
	step "$sn ep_bench $mode -np 2" "$(ok_or_fail $rc)" \
		"exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/ep_bench-$mode.out")"); dispatch $(nep_epb "$LOG/ep_bench-$mode.out" $mode d_us) us $(nep_epb "$LOG/ep_bench-$mode.out" $mode d_gbps) GB/s, combine $(nep_epb "$LOG/ep_bench-$mode.out" $mode c_us) us $(nep_epb "$LOG/ep_bench-$mode.out" $mode c_gbps) GB/s"
done

# 6. the tables
{
	echo
	echo "== steps (W=2, two H200 over NVLink; $(($(date +%s) - T0)) s)"
	cat "$SUM"
	echo
	echo "== NCCL EP through epgate vs its ep_bench, W=2 (H=7168, top-8, 256 experts; LL 128 tokens/rank, HT 4096)"
	echo "bytes per rank and call (mean over ranks), ep_bench's definitions on epgate's own routing: LL sel_bytes = valid"
	echo "(token, top-k slot) selections x H x 2 (no dedup per rank; ep_bench prints rank 0's count); HT recv_bytes = (tokens"
	echo "received + (token, remote node) pairs sent) x H x 2. 'events': CUDA events around the plugin's call, mean over"
	echo "50 calls of each rank (the slowest rank's per step for 'epgate step', median). ep_bench: host-observed mean over ranks."
	nep_table_head
	nep_compare ll "$LOG/bench-ll.out" "$LOG/ep_bench-ll.out"
	nep_compare ht "$LOG/bench-ht.out" "$LOG/ep_bench-ht.out"
	echo
	echo "epgate's nccl a2a at the same shapes (median us): LL dispatch $(nep_metric "$LOG/bench-ll-a2a.out" dispatch_us), combine $(nep_metric "$LOG/bench-ll-a2a.out" combine_us); HT dispatch $(nep_metric "$LOG/bench-ht-a2a.out" dispatch_us), combine $(nep_metric "$LOG/bench-ht-a2a.out" combine_us)"
	for f in declares.tap; do
		grep -q '^not ok' "$LOG/$f" 2>/dev/null || continue
		echo
		echo "== $f (the first lines)"
		head -n 30 "$LOG/$f" | cut -c1-200
	done
	for f in "$LOG"/l2-*.jsonl; do
		grep -q '"status":"fail"\|"status":"error"' "$f" 2>/dev/null || continue
		echo
		echo "== $(basename "$f"): the first failing workloads"
		grep '"status":"fail"\|"status":"error"' "$f" | head -n 3 | cut -c1-600
	done
	echo "logs: $LOG"
} | tee "$LOG/summary.txt"
[ "$eg_fails" -eq 0 ] || exit 1
exit 0
