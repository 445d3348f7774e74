#!/bin/sh
# Timing fidelity on one H200 (issue 25, part 2; docs/metrics.md,
# "Boundaries"): what epgate's harness costs per step, and NCCL EP
# through epgate set beside its ep_bench line by line -- same boundary,
# same statistic, same byte definition, same warm-up -- in one call of
# about four minutes:
#
#   sh suites/gpu/timing-device.sh BUNDLE EPGATE_DIR
#
# BUNDLE and EPGATE_DIR as for suites/gpu/nccl-ep-device.sh (the NCCL EP
# bundle with bin/ep_bench and bin/ep_bench_nocupti; an epgate build or
# carried folder with the plugin). Run from the repository root. Logs go
# to $OUT (else a folder it names); the tables are printed last. Steps:
#  1. unpack, environment, the GPU (nccl-ep-lib.sh's nep_setup);
#  2. `bench overhead --engine` at ep_bench's LL shape (128 tokens, H 7168,
#     top-8 of 256; NCCL EP's receive budget as ep_bench sets it): the
#     call boundary (gated) and the step boundary, median and ep_bench's
#     mean, the harness per step; 50 and 1000 timed steps, then 1000 with
#     the marks off (EPGATE_PLUGIN_PHASES=0: what the marks cost the step);
#  3. the same for epgate's nccl a2a (its calls return synchronized: both
#     boundaries are one) and for HT at 4096 tokens;
#  4. ep_bench -a ll, both builds (CUPTI's kernel tracing is on during its
#     timed loop in the CUPTI build), before and after epgate's runs;
#     ep_bench -a ht likewise;
#  5. epgate LL with 1% of the top-k slots masked (ep_bench masks 10 of
#     its 1024 LL slots: the same number of selections);
#  6. the tables: the harness per step against its target (<= 2% of the
#     call or <= 1 us), and the LL and HT comparison row by row;
#  7. every boundary of docs/metrics.md for LL, HT and a2a, graph replay
#     included (and the CUDA template falsely declared capture-safe, whose
#     capture must fail).
# Every command has a timeout. Exit: 0 every step ran, 1 one failed, 77
# no GPU, 99 bad arguments.
if [ $# -ne 2 ]; then
	echo "usage: sh suites/gpu/timing-device.sh BUNDLE(.tar.xz|dir) EPGATE_DIR(|.tar.xz)" >&2
	exit 99
fi
EG_SRCDIR=${EG_SRCDIR:-$PWD}
. "$EG_SRCDIR/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
trap - EXIT
LOG=${OUT:-${TMPDIR:-/tmp}/timing-device.$$}
mkdir -p "$LOG" || exit 99
rm -rf "$EG_TMP"
EG_TMP=$LOG
WORK=${TMPDIR:-/tmp}/timing-work.$$
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
okfail() { [ "$1" -eq 0 ] && echo ok || echo FAIL; }

echo "== timing-device: logs in $LOG"
if ! nep_setup "$1" "$2" "$WORK" >"$LOG/setup.txt" 2>&1; then
	echo "timing-device: $(cat "$LOG/setup.txt")" >&2
	exit 99
fi
{
	echo "NCCL EP: $NEP_ROOT"
	echo "epgate:  $EG_EPGATE"
	nvidia-smi -L 2>&1
	nvidia-smi -q -d CLOCK 2>&1 | head -n 40
} >"$LOG/env.txt"
if [ "$(nep_gpus)" -lt 1 ]; then
	step "1 setup" SKIP "no GPU (nvidia-smi lists none)"
	exit 77
fi
step "1 setup" ok "NCCL EP $(basename "$NEP_ROOT")"

SHAPE="--hidden 7168 --experts 256 --topk 8"
LLP="plugin:$NEP_SO,mode=ll,recv=$(nep_epb_recv ll 1 128)"
HTP="plugin:$NEP_SO,mode=ht,recv=$(nep_epb_recv ht 1 4096)"
# ovh OUT ENGINE TOKENS STEPS [keys...]: bench overhead --engine, W = 1,
# at the call boundary: the step boundary less the call is then epgate's
# own (at the window it would also hold the hold, docs/metrics.md)
ovh() {
	of=$1 eng=$2 tok=$3 n=$4
	shift 4
	EPGATE_BOUNDARY=call timeout 600 "$EG_EPGATE" launch -n 1 --timeout 900 -- \
		"$EG_EPGATE" bench overhead --engine "$eng" --transport nccl \
		--tokens "$tok" $SHAPE -w 10 -n "$n" --timeout 900 "$@" \
		>"$of" 2>&1
}
# epb OUT BUILD ARGS...: one ep_bench build (ep_bench: CUPTI, or
# ep_bench_nocupti) under mpirun, 1 rank
epb() {
	of=$1 b=$2
	shift 2
	mpi=$(nep_mpirun) || { echo "no mpirun" >"$of"; return 127; }
	[ -x "$NEP_ROOT/bin/$b" ] || { echo "no $NEP_ROOT/bin/$b" >"$of"; return 127; }
	timeout 300 "$mpi" --allow-run-as-root -np 1 \
		-x PATH -x LD_LIBRARY_PATH -x CUDA_HOME -x NCCL_NVLS_ENABLE \
		-x NCCL_EP_JIT_SOURCE_DIR -x NCCL_EP_JIT_BUILD_INCLUDE_DIR \
		-x NCCL_EP_JIT_CUDA_INCLUDE_DIR -x NCCL_EP_JIT_NVCC \
		-x NCCL_EP_JIT_CACHE_DIR \
		"$NEP_ROOT/bin/$b" "$@" >"$of" 2>&1
}
# bnd FILE LABEL COL: a column of bench overhead's boundary table (the
# row starting with LABEL: 1 dispatch median, 2 dispatch mean*, 3 combine
# median, 4 combine mean*, 5 step median, 6 step mean*)
bnd() {
	# the row named l, not a metric it begins (call_dispatch_us)
	awk -v l="$2" -v c="$3" '{ sub(/^\[[0-9]+\] /, "") }
		index($0, l) == 3 && substr($0, 3 + length(l), 1) !~ /[a-z_]/ {
			print $(NF - 6 + c); exit }' "$1"
}
# sel FILE: valid selections of a bench run (sel_bytes / one bf16 row)
sel() { nep_metric "$1" sel_bytes | awk '{ printf "%.0f", $1 / (7168 * 2) }'; }
harness() { sed -n 's/.*harness_us): median \([0-9.]*\) us.*/\1/p' "$1" | head -n 1; }
epb_sel() { sed -n 's/.*selections=\([0-9]*\).*/\1/p' "$1" | head -n 1; }

# TD_PARTS: some of "base ht4096" (both): base is every step below but
# the HT bound of 4096 rows
td_part() { case " ${TD_PARTS:-base ht4096} " in *" $1 "*) return 0 ;; esac; return 1; }
if td_part base; then
	# 2. LL: the two boundaries
	for b in ep_bench ep_bench_nocupti; do
		epb "$LOG/epb-ll-$b-1.out" "$b" -a ll -t 128 -d 7168 -k 8 -e 256 -w 10 -i 50
		rc=$?
		step "4 $b LL (before)" "$(okfail $rc)" "exit $rc; dispatch $(nep_epb "$LOG/epb-ll-$b-1.out" ll d_us) us, combine $(nep_epb "$LOG/epb-ll-$b-1.out" ll c_us) us (events, mean)"
	done
	for n in 50 1000; do
		ovh "$LOG/ovh-ll-$n.out" "$LLP" 128 "$n"
		rc=$?
		step "2 LL overhead, $n steps" "$(okfail $rc)" "exit $rc; harness $(harness "$LOG/ovh-ll-$n.out") us a step; call dispatch $(bnd "$LOG/ovh-ll-$n.out" call 1), step dispatch $(bnd "$LOG/ovh-ll-$n.out" "step (wall_" 1) us (median)"
	done
	EPGATE_PLUGIN_PHASES=0 ovh "$LOG/ovh-ll-nomarks.out" "$LLP" 128 1000
	rc=$?
	step "2 LL, marks off" "$(okfail $rc)" "exit $rc; step dispatch $(bnd "$LOG/ovh-ll-nomarks.out" "step (wall_" 1), combine $(bnd "$LOG/ovh-ll-nomarks.out" "step (wall_" 3) us (median)"
	ovh "$LOG/ovh-ll-mask.out" "$LLP" 128 50 --mask 0.0098
	rc=$?
	step "5 LL, 1% of slots masked" "$(okfail $rc)" "exit $rc; sel_bytes $(nep_metric "$LOG/ovh-ll-mask.out" sel_bytes)"

	# 3. our own engine, and HT
	ovh "$LOG/ovh-a2a-ll.out" a2a 128 50
	rc=$?
	step "3 a2a overhead (LL shape)" "$(okfail $rc)" "exit $rc; harness $(harness "$LOG/ovh-a2a-ll.out") us a step"
	EPGATE_TIMEOUT=900
	export EPGATE_TIMEOUT
	ovh "$LOG/ovh-ht-50.out" "$HTP" 4096 50
	rc=$?
	step "3 HT overhead, 50 steps" "$(okfail $rc)" "exit $rc; harness $(harness "$LOG/ovh-ht-50.out") us a step"
	for b in ep_bench ep_bench_nocupti; do
		epb "$LOG/epb-ht-$b.out" "$b" -a ht -t 4096 -d 7168 -k 8 -e 256 -w 10 -i 50
		rc=$?
		step "4 $b HT" "$(okfail $rc)" "exit $rc; dispatch $(nep_epb "$LOG/epb-ht-$b.out" ht d_us) us, combine $(nep_epb "$LOG/epb-ht-$b.out" ht c_us) us"
	done
	for b in ep_bench ep_bench_nocupti; do
		epb "$LOG/epb-ll-$b-2.out" "$b" -a ll -t 128 -d 7168 -k 8 -e 256 -w 10 -i 50
		rc=$?
		step "4 $b LL (after)" "$(okfail $rc)" "exit $rc; dispatch $(nep_epb "$LOG/epb-ll-$b-2.out" ll d_us) us"
	done

	# 7. every boundary (docs/metrics.md): call, window, kernel (CUPTI) and
	# replay (a CUDA graph of the call, its first replays verified) for NCCL
	# EP LL and HT and epgate's own nccl a2a (call and kernel: its calls wait
	# for their stream, so a window is its call; no replay)
	for b in call window kernel replay; do
		NEP_BOUNDARY=$b nep_bench "$LOG/b-ll-$b.out" 1 1 "$LLP" 128
		rc=$?
		step "7 LL $b" "$(okfail $rc)" "exit $rc; dispatch $(nep_metric "$LOG/b-ll-$b.out" dispatch_us), combine $(nep_metric "$LOG/b-ll-$b.out" combine_us) us (median)"
		NEP_BOUNDARY=$b nep_bench "$LOG/b-ht-$b.out" 1 1 "$HTP" 4096
		rc=$?
		step "7 HT $b" "$(okfail $rc)" "exit $rc; dispatch $(nep_metric "$LOG/b-ht-$b.out" dispatch_us), combine $(nep_metric "$LOG/b-ht-$b.out" combine_us) us (median)"
	done
	# the replays' kernels (CUPTI beside the replay boundary): where HT
	# dispatch's replay spends the time its window does not (517 vs 273 us,
	# 2026-12-07), kernel by kernel against b-ht-kernel's direct calls
	for m in ll ht; do
		if [ $m = ll ]; then p=$LLP t=128; else p=$HTP t=4096; fi
		(EPGATE_CUPTI=1 && export EPGATE_CUPTI &&
			NEP_BOUNDARY=replay nep_bench "$LOG/b-$m-replay-cupti.out" 1 1 "$p" "$t")
		rc=$?
		step "7 $(echo $m | tr a-z A-Z) replay, CUPTI beside" "$(okfail $rc)" "exit $rc; dispatch $(nep_metric "$LOG/b-$m-replay-cupti.out" dispatch_us), combine $(nep_metric "$LOG/b-$m-replay-cupti.out" combine_us) us (median)"
	done
	for b in call kernel; do
		NEP_BOUNDARY=$b nep_bench "$LOG/b-a2a-$b.out" 1 1 a2a 128
		rc=$?
		step "7 a2a $b" "$(okfail $rc)" "exit $rc; dispatch $(nep_metric "$LOG/b-a2a-$b.out" dispatch_us), combine $(nep_metric "$LOG/b-a2a-$b.out" combine_us) us (median)"
	done
	# a false declaration on the device: the CUDA template waits for its
	# stream inside each call (a host round trip), declared capture-safe
	# with capture=safe: its capture must fail, naming CUDA's error
	CT=$(dirname "$NEP_SO")/../template/libeg-cuda-template.so
	if [ -f "$CT" ]; then
		NEP_BOUNDARY=replay nep_bench "$LOG/b-ct-replay.out" 1 1 "plugin:$CT,capture=safe" 128
		rc=$?
		if [ $rc -eq 1 ] && grep -q "could not be captured\|(the capture: " "$LOG/b-ct-replay.out"; then
			step "7 template falsely capture-safe" ok "refused: $(grep -m1 -o 'could not be captured.*\|(the capture: .*' "$LOG/b-ct-replay.out" | cut -c1-140)"
		else
			step "7 template falsely capture-safe" FAIL "exit $rc, no capture failure named (b-ct-replay.out)"
		fi
	else
		step "7 template falsely capture-safe" SKIP "no libeg-cuda-template.so beside the plugin"
	fi
fi

if td_part ht4096; then
	# the prediction of 2026-12-07: with the bound at the 4096 rows received
	# (not ep_bench's tokens x top-8), HT dispatch's captured copy is of
	# 4096 rows and its replay is about its window
	for b in window replay; do
		NEP_BOUNDARY=$b nep_bench "$LOG/b-ht4096-$b.out" 1 1 "plugin:$NEP_SO,mode=ht,recv=4096" 4096
		rc=$?
		step "7 HT recv=4096 $b" "$(okfail $rc)" "exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/b-ht4096-$b.out")"); dispatch $(nep_metric "$LOG/b-ht4096-$b.out" dispatch_us), combine $(nep_metric "$LOG/b-ht4096-$b.out" combine_us) us (median)"
	done
fi

# 6. the tables
# hrow LABEL FILE: the harness row of one bench overhead run
hrow() {
	awk -v l="$1" -v cd="$(bnd "$2" call 1)" -v sd="$(bnd "$2" "step (wall_" 1)" \
		-v cc="$(bnd "$2" call 3)" -v sc="$(bnd "$2" "step (wall_" 3)" \
		-v h="$(harness "$2")" 'BEGIN {
		call = cd + cc; p = call > 0 ? 100 * h / call : 0
		printf "%-28s %9.2f %9.2f %9.2f %9.2f %8.2f %7.2f%% %s\n", l,
			cd, sd, cc, sc, h, p, (h <= 1 || p <= 2) ? "yes" : "no"
	}'
}
# brow LABEL EG_US REF_US: one boundary row, ratio and whether within 3%
brow() {
	awk -v l="$1" -v e="$2" -v r="$3" 'BEGIN {
		q = (e > 0 && r > 0) ? e / r : 0
		ok = q > 0 ? ((q >= 0.97 && q <= 1.03) ? "yes" : "NO") : "-"
		printf "%-34s %10.2f %10.2f %7.3f %5s\n", l, e, r, q, ok }'
}
# crow LABEL D_US C_US SEL BASE_D BASE_C BASE_SEL NOTE: one comparison
# row: the times, per selection, and the ratio of time per selection to
# the base row's (ep_bench without CUPTI, first run)
crow() {
	awk -v l="$1" -v d="$2" -v c="$3" -v s="$4" -v bd="$5" -v bc="$6" \
		-v bs="$7" -v note="$8" 'BEGIN {
		rd = (s > 0 && bs > 0 && bd > 0) ? (d / s) / (bd / bs) : 0
		rc = (s > 0 && bs > 0 && bc > 0) ? (c / s) / (bc / bs) : 0
		printf "%-44s %9.2f %9.2f %6s %7.3f %7.3f  %s\n", l, d, c, s, rd, rc, note
	}'
}
{
	echo
	echo "== steps (W=1, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1); $(($(date +%s) - T0)) s)"
	cat "$SUM"
	echo
	echo "== the harness per step (bench overhead --engine; us, medians; harness_us: per step, step less call)"
	printf "%-28s %9s %9s %9s %9s %8s %8s %s\n" "run" "call_d" "step_d" "call_c" "step_c" "harness" "of_call" "<=2%|1us"
	hrow "LL, 50 steps" "$LOG/ovh-ll-50.out"
	hrow "LL, 1000 steps" "$LOG/ovh-ll-1000.out"
	hrow "a2a at LL's shape, 50" "$LOG/ovh-a2a-ll.out"
	hrow "HT, 50 steps" "$LOG/ovh-ht-50.out"
	echo "LL, 1000 steps, marks off (EPGATE_PLUGIN_PHASES=0: one boundary, the step's): dispatch $(bnd "$LOG/ovh-ll-nomarks.out" "step (wall_" 1), combine $(bnd "$LOG/ovh-ll-nomarks.out" "step (wall_" 3) us"
	echo
	egs=$(sel "$LOG/ovh-ll-50.out")
	egm=$(sel "$LOG/ovh-ll-mask.out")
	bs=$(epb_sel "$LOG/epb-ll-ep_bench_nocupti-1.out")
	bd=$(nep_epb "$LOG/epb-ll-ep_bench_nocupti-1.out" ll d_us)
	bc=$(nep_epb "$LOG/epb-ll-ep_bench_nocupti-1.out" ll c_us)
	echo "== LL beside ep_bench, line by line (us; sel: valid top-k selections; ratio: time per selection over the base row's)"
	printf "%-44s %9s %9s %6s %7s %7s  %s\n" "row" "dispatch" "combine" "sel" "r_disp" "r_comb" "what it isolates"
	crow "ep_bench no CUPTI, mean* (base)" "$bd" "$bc" "$bs" "$bd" "$bc" "$bs" "ep_bench's own boundary and statistic"
	for r in 1 2; do
		f=$LOG/epb-ll-ep_bench-$r.out
		crow "ep_bench CUPTI build, mean*, run $r" "$(nep_epb "$f" ll d_us)" "$(nep_epb "$f" ll c_us)" "$(epb_sel "$f")" "$bd" "$bc" "$bs" "CUPTI's kernel tracing in the timed loop"
	done
	f=$LOG/epb-ll-ep_bench_nocupti-2.out
	crow "ep_bench no CUPTI, mean*, run 2" "$(nep_epb "$f" ll d_us)" "$(nep_epb "$f" ll c_us)" "$(epb_sel "$f")" "$bd" "$bc" "$bs" "run to run, after epgate's runs"
	f=$LOG/ovh-ll-50.out
	crow "epgate call, mean* (50 steps)" "$(bnd "$f" call 2)" "$(bnd "$f" call 4)" "$egs" "$bd" "$bc" "$bs" "same boundary, statistic, warm-up"
	crow "epgate call, median (50 steps)" "$(bnd "$f" call 1)" "$(bnd "$f" call 3)" "$egs" "$bd" "$bc" "$bs" "the statistic: median vs mean"
	f=$LOG/ovh-ll-mask.out
	crow "epgate call, mean*, 1% masked" "$(bnd "$f" call 2)" "$(bnd "$f" call 4)" "$egm" "$bd" "$bc" "$bs" "the routing: ep_bench's number of selections"
	f=$LOG/ovh-ll-1000.out
	crow "epgate call, mean* (1000 steps)" "$(bnd "$f" call 2)" "$(bnd "$f" call 4)" "$egs" "$bd" "$bc" "$bs" "more steps"
	crow "epgate step, median (1000 steps)" "$(bnd "$f" "step (wall_" 1)" "$(bnd "$f" "step (wall_" 3)" "$egs" "$bd" "$bc" "$bs" "the harness (not gated)"
	echo
	echo "== HT beside ep_bench (us; mean*)"
	f=$LOG/ovh-ht-50.out
	for b in ep_bench ep_bench_nocupti; do
		echo "$b: dispatch $(nep_epb "$LOG/epb-ht-$b.out" ht d_us), combine $(nep_epb "$LOG/epb-ht-$b.out" ht c_us)"
	done
	echo "epgate call: dispatch $(bnd "$f" call 2), combine $(bnd "$f" call 4); step median: dispatch $(bnd "$f" "step (wall_" 1), combine $(bnd "$f" "step (wall_" 3)"
	echo
	echo "== boundaries beside ep_bench (us; epgate: median of 50 steps after 10 warm-up; ep_bench: mean of its timed loop; ratio epgate/ep_bench)"
	printf "%-34s %10s %10s %7s %5s\n" "mode phase (boundary)" "epgate_us" "ep_bench" "ratio" "<=3%"
	for m in ll ht; do
		for ph in dispatch combine; do
			c=$(echo $ph | cut -c1)
			brow "$m $ph (call)" "$(nep_metric "$LOG/b-$m-call.out" "${ph}_us")" "$(nep_epb "$LOG/epb-$m-ep_bench_nocupti$([ $m = ll ] && echo -1).out" $m ${c}_us)"
			brow "$m $ph (window)" "$(nep_metric "$LOG/b-$m-window.out" "${ph}_us")" "$(nep_epb "$LOG/epb-$m-ep_bench_nocupti$([ $m = ll ] && echo -1).out" $m ${c}_us)"
			brow "$m $ph (kernel)" "$(nep_metric "$LOG/b-$m-kernel.out" "${ph}_us")" "$(nep_epb_kern "$LOG/epb-$m-ep_bench$([ $m = ll ] && echo -1).out" $m $c)"
			brow "$m $ph (replay)" "$(nep_metric "$LOG/b-$m-replay.out" "${ph}_us")" "$(nep_epb "$LOG/epb-$m-ep_bench_nocupti$([ $m = ll ] && echo -1).out" $m ${c}_us)"
		done
	done
	for ph in dispatch combine; do
		brow "a2a $ph (call)" "$(nep_metric "$LOG/b-a2a-call.out" "${ph}_us")" 0
		brow "a2a $ph (kernel)" "$(nep_metric "$LOG/b-a2a-kernel.out" "${ph}_us")" 0
	done
	for f in b-ll-window b-ll-kernel b-ll-replay b-ll-replay-cupti b-ht-window b-ht-kernel b-ht-replay b-ht-replay-cupti b-a2a-kernel; do
		grep -E "boundary |window_|kernels |replays_" "$LOG/$f.out" | sed "s/^/$f: /" | cut -c1-400
	done
	for f in b-ll-replay b-ht-replay b-ct-replay; do
		[ -f "$LOG/$f.out" ] || continue
		grep -m2 -E "verification|wrong value|capture" "$LOG/$f.out" | sed "s/^/$f: /" | cut -c1-300
	done
	echo "logs: $LOG"
} | tee "$LOG/summary.txt"
[ "$eg_fails" -eq 0 ] || exit 1
exit 0
