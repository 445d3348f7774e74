#!/bin/bash
# The sbatch path when things break, on a real two-node Slurm
# (cluster.sh): a step that dies before its first point still leaves TAP
# and JUnit for the steps and the gates, and one bad rank ends its step
# at once; an L2 step killed part-way reports the workloads it never
# reached as skipped (CI history keeps every case); FI_PROVIDER naming a
# provider the nodes lack fails the job in seconds, in words, or skips it
# when asked to; the ranks honour FI_PROVIDER. docs/slurm.md.
. "${EG_SRCDIR:-.}/suites/slurm/lib.sh"
eg_slurm_start
SB=$EG_SRCDIR/slurm/epgate.sbatch
TINY=$EG_SRCDIR/suites/slurm/slurm-tiny.profile

# --- every bench step dies at its first dispatch: rank 1 is killed
EPGATE_SUITES=bench EPGATE_FAULT=kill:1:dispatch:1 eg_sbatch dies -N 2 "$SB" "$TINY"
njobs=$(grep -c '^  job ' "$run/plan.txt" 2>/dev/null)
if [ "$rc" -eq 1 ] && [ "$(eg_sacct "$job")" = "FAILED 1:0" ] &&
	[ "$(grep -c '^not ok [0-9]* - bench slurm-tiny\.w[0-9]*\.n[12]: step' "$run/epgate.tap")" -eq "${njobs:-0}" ] &&
	eg_valid_tap "$run/epgate.tap" && eg_valid_junit "$run/epgate.junit.xml"; then
	eg_ok "$njobs bench steps died: exit 1 (sacct FAILED 1:0), each a failing point in TAP and JUnit"
else
	eg_not_ok "bench steps that die: exit $rc (sacct '$(eg_sacct "$job")'), want 1 with a point per step"
	eg_show "$out" "${run:-/dev/null}/epgate.tap"
fi
# the results hold no point: the gates still write TAP and JUnit
pts=$(cat "$run"/bench-*.json 2>/dev/null | grep -c '^  {"id": ')
if [ "${pts:-1}" -eq 0 ] && [ -s "$run/bench-gates.tap" ] &&
	eg_valid_tap "$run/bench-gates.tap" && eg_valid_junit "$run/bench-gates.junit.xml" &&
	! grep -q '^ok [0-9]* - [^#]*$' "$run/bench-gates.tap" &&
	grep -q '# SKIP no data' "$run/bench-gates.tap"; then
	eg_ok "results without a point: the gates' TAP and JUnit say 'no data' ($(grep -c '# SKIP no data' "$run/bench-gates.tap") gates)"
else
	eg_not_ok "results without a point: gates' TAP and JUnit (points ${pts:-?})"
	eg_show "$run/gates.out"
fi
# one bad rank ends the step (--kill-on-bad-exit): far within the ranks'
# 20 s deadline, and the step's point carries the log's last lines
slow=$(awk -F'\t' '$1 == "bench" && $5 >= 15 {print $2 ": " $5 " s"}' "$run/steps.tsv" 2>/dev/null)
if [ -s "$run/steps.tsv" ] && [ -z "$slow" ] &&
	grep -q 'planted fault: kill rank 1 at dispatch' "$run/epgate.tap"; then
	eg_ok "a killed rank ends its step at once: $(awk -F'\t' '$1 == "bench" {printf "%s %s s; ", $2, $5}' "$run/steps.tsv")"
else
	eg_not_ok "a killed rank ends its step at once (slow: ${slow:-?})"
	eg_show "$run/steps.tsv"
fi

# --- L2 steps killed part-way: rank 1 dies at its 3rd dispatch (the 2nd
# workload: 2 iterations each)
EPGATE_SUITES=l2 EPGATE_L2_SET=quick EPGATE_FAULT=kill:1:dispatch:3 eg_sbatch partway -N 2 "$SB" "$TINY"
T=$run/epgate.tap
nw4=$(grep -c '^world *= *4$' "$EG_SRCDIR/fixtures/workloads/l2-matrix.ini")
cases=$(grep -c '^\(not \)\{0,1\}ok [0-9]* - l2 a2a.w4.n2.auto.k1: w4-' "$T" 2>/dev/null)
skips=$(grep -c '^ok [0-9]* - l2 a2a.w4.n2.auto.k1: w4-.* # SKIP never ran: the step ended (exit [0-9]*) before it' "$T" 2>/dev/null)
jcases=$(grep -c '<testcase classname="epgate-slurm.l2.a2a.w4.n2.auto.k1" name="w4-' "$run/epgate.junit.xml" 2>/dev/null)
if [ "$rc" -eq 1 ] && [ "${cases:-0}" -eq "$nw4" ] && [ "${skips:-0}" -eq $((nw4 - 1)) ] &&
	[ "${jcases:-0}" -eq "$nw4" ] &&
	grep -q '^ok [0-9]* - l2 a2a.w4.n2.auto.k1: w4-base\(: .*\)\{0,1\}$' "$T" &&
	grep -q "^not ok [0-9]* - l2 a2a.w4.n2.auto.k1: step" "$T" &&
	grep -q '<skipped message="never ran: the step ended (exit [0-9]*) before it"' "$run/epgate.junit.xml" &&
	eg_valid_tap "$T" && eg_valid_junit "$run/epgate.junit.xml"; then
	eg_ok "an L2 step killed after 1 of $nw4 workloads: the other $((nw4 - 1)) are skips in TAP and JUnit, the step a failure"
else
	eg_not_ok "an L2 step killed part-way: exit $rc, cases ${cases:-0}/$nw4, skips ${skips:-0}, JUnit cases ${jcases:-0}"
	eg_show "$out" "$T"
fi

# --- FI_PROVIDER=efa on nodes without efa: the preflight fails the job in
# seconds and says so; the steps are skips with the reason
t0=$SECONDS
FI_PROVIDER=efa EPGATE_SUITES=l2 EPGATE_L2_SET=quick eg_sbatch efa -N 2 "$SB" "$TINY"
dt=$((SECONDS - t0))
if [ "$rc" -eq 1 ] && [ "$dt" -le 60 ] &&
	grep -q '^not ok 1 - preflight fabric: step' "$run/epgate.tap" &&
	grep -q 'cross-node provider efa (asked by FI_PROVIDER=efa): absent' "$run/preflight-fabric.log" &&
	grep -q '^ok [0-9]* - l2 a2a.w2.n2.auto.k1: step # SKIP not run: the libfabric provider is absent on some node' "$run/epgate.tap"; then
	eg_ok "FI_PROVIDER=efa without efa: exit 1 in ${dt} s: $(grep -m1 -o 'cross-node provider efa.*' "$run/preflight-fabric.log" | cut -c1-90)..."
else
	eg_not_ok "FI_PROVIDER=efa without efa: exit $rc in ${dt} s, want 1 from the preflight"
	eg_show "$out" "${run:-/dev/null}/epgate.tap"
fi
FI_PROVIDER=efa EPGATE_PROVIDER_MISSING=skip EPGATE_SUITES=l2 EPGATE_L2_SET=quick \
	eg_sbatch efa-skip -N 2 "$SB" "$TINY"
if [ "$rc" -eq 77 ] && grep -q '^ok 1 - preflight fabric: step # SKIP' "$run/epgate.tap"; then
	eg_ok "FI_PROVIDER=efa without efa, EPGATE_PROVIDER_MISSING=skip: exit 77"
else
	eg_not_ok "FI_PROVIDER=efa without efa, EPGATE_PROVIDER_MISSING=skip: exit $rc, want 77"
	eg_show "$out"
fi

# --- the ranks themselves, under srun: FI_PROVIDER is honoured
step() { # NAME ENV...: srun of 4 ranks on 2 nodes (pairs within and
	# across nodes), w4-base only
	local name=$1
	shift
	local t0=$SECONDS
	env "$@" EPGATE_SECRET=0123456789abcdef0123456789abcdef \
		timeout 120 srun -N 2 -n 4 --ntasks-per-node=2 -m block \
		--kill-on-bad-exit=1 --time=2 \
		"$EG_EPGATE" l2-rank --filter w4-base </dev/null >"$EG_TMP/$name.log" 2>&1
	rc=$?
	dt=$((SECONDS - t0))
}
# tcp for every pair: shm, which FI_PROVIDER=tcp hides, is not asked for
step tcp FI_PROVIDER=tcp
if [ "$rc" -eq 0 ] && grep -q 'providers intra=tcp;ofi_rxm inter=tcp;ofi_rxm' "$EG_TMP/tcp.log" &&
	! grep -q 'warning' "$EG_TMP/tcp.log"; then
	eg_ok "FI_PROVIDER=tcp under srun: every pair on tcp, no fallback warning"
else
	eg_not_ok "FI_PROVIDER=tcp under srun: exit $rc"
	eg_show "$EG_TMP/tcp.log"
fi
step efa FI_PROVIDER=efa
if [ "$rc" -ne 0 ] && [ "$dt" -le 30 ] &&
	grep -q 'transport: fabric: comm 0: provider efa is not on this host' "$EG_TMP/efa.log" &&
	! grep -q 'fi_getinfo(tcp;ofi_rxm' "$EG_TMP/efa.log"; then
	eg_ok "FI_PROVIDER=efa under srun: exit $rc in ${dt} s: $(grep -m1 -o 'provider efa is not on this host.*' "$EG_TMP/efa.log")"
else
	eg_not_ok "FI_PROVIDER=efa under srun: exit $rc in ${dt} s, want a failure naming efa"
	eg_show "$EG_TMP/efa.log"
fi
eg_done
