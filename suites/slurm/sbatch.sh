#!/bin/bash
# The sbatch path end to end on a real two-node Slurm (cluster.sh): every
# job of the plan runs (bench and the L2 matrix across the nodes), with
# TAP and JUnit for every step and the gates; a fresh run folder per job,
# never an earlier job's; a job where nothing can run exits 77 and says
# why; a GPU profile on nodes without GPU is a skip, and the script fits
# a cluster without 8 GPUs per node. docs/slurm.md.
. "${EG_SRCDIR:-.}/suites/slurm/lib.sh"
eg_slurm_start
SB=$EG_SRCDIR/slurm/epgate.sbatch
TINY=$EG_SRCDIR/suites/slurm/slurm-tiny.profile

# A wrapper as EPGATE: every epgate the job starts says whether PSM's
# backtrace handler is off (the script must set it; the test does not).
cat >"$EG_TMP/epgate-env" <<EOF
#!/bin/sh
echo "IPATH_NO_BACKTRACE=\${IPATH_NO_BACKTRACE:-unset} \$1 EPGATE_PYTHON=\${EPGATE_PYTHON:-unset}" >>"$EG_TMP/env.log"
exec "$EG_EPGATE" "\$@"
EOF
chmod +x "$EG_TMP/epgate-env"

# --- the whole plan: preflight, the L2 matrix across 2 nodes, 3 bench jobs
unset IPATH_NO_BACKTRACE EPGATE_PYTHON
EPGATE=$EG_TMP/epgate-env EPGATE_L2_SET=quick eg_sbatch full -N 2 "$SB" "$TINY"
export IPATH_NO_BACKTRACE=1
RUN1=$run
if [ "$rc" -eq 0 ] && [ "$(eg_sacct "$job")" = "COMPLETED 0:0" ]; then
	eg_ok "sbatch -N 2 epgate.sbatch slurm-tiny: exit 0, sacct COMPLETED 0:0"
else
	eg_not_ok "sbatch -N 2 epgate.sbatch slurm-tiny: exit $rc, sacct '$(eg_sacct "$job")'"
	eg_show "$EG_TMP/full.sub" "$out"
fi

# every bench job of the plan wrote all its points
"$EG_EPGATE" bench --profile "$TINY" --list >"$EG_TMP/plan.txt"
jobs=$(sed -n 's/^  job   world \([0-9]*\) nodes \([0-9]*\):.*/\1.\2/p' "$EG_TMP/plan.txt")
njobs=$(echo "$jobs" | wc -w)
good=0
for wn in $jobs; do
	W=${wn%.*} N=${wn#*.}
	want=$(grep -c "^  point .* world $W nodes $N," "$EG_TMP/plan.txt")
	got=$(grep -c '^  {"id": ' "$RUN1/bench-slurm-tiny.w$W.n$N.json" 2>/dev/null)
	if [ "${got:-0}" -eq "$want" ]; then
		good=$((good + 1))
	else
		echo "# bench-slurm-tiny.w$W.n$N.json: ${got:-no file} of $want points"
	fi
done
if [ "$njobs" -ge 3 ] && [ "$good" -eq "$njobs" ]; then
	eg_ok "all $njobs bench jobs of the plan ran, each with all its points"
else
	eg_not_ok "all $njobs bench jobs of the plan ran ($good did)"
fi

# the L2 matrix ran under srun across the two nodes, one case per workload
nl2=$(grep -c '^ok [0-9]* - l2 [a-z0-9]*\.w[0-9]*\.n2\.auto\.k1: w' "$RUN1/epgate.tap" 2>/dev/null)
nw=$(grep -c '^world *= *[24]$' "$EG_SRCDIR/fixtures/workloads/l2-matrix.ini")
if [ "${nl2:-0}" -eq $((2 * nw)) ] &&
	grep -q 'providers intra=shm inter=tcp;ofi_rxm' "$RUN1"/l2-a2a.w4.n2.auto.k1.log; then
	eg_ok "L2 under srun -N 2: $nl2 cases passed (a2a and dense, worlds 2 and 4), cross-node pairs over tcp"
else
	eg_not_ok "L2 under srun -N 2: ${nl2:-0} cases passed, want $((2 * nw))"
	eg_show "$RUN1"/l2-a2a.w4.n2.auto.k1.log
fi

# TAP and JUnit, for the steps and the gates, valid and complete
if eg_valid_tap "$RUN1/epgate.tap" && eg_valid_junit "$RUN1/epgate.junit.xml" &&
	eg_valid_tap "$RUN1/bench-gates.tap" && eg_valid_junit "$RUN1/bench-gates.junit.xml" &&
	[ "$(grep -c '^ok [0-9]* - bench slurm-tiny\.w[0-9]*\.n[12]: step' "$RUN1/epgate.tap")" -eq "$njobs" ] &&
	! grep -q '^not ok' "$RUN1/epgate.tap" "$RUN1/bench-gates.tap"; then
	eg_ok "TAP and JUnit of the steps and of the gates: valid, every step and gate ok"
else
	eg_not_ok "TAP and JUnit of the steps and of the gates"
	eg_show "$RUN1/epgate.tap" "$RUN1/gates.out"
fi

# the automatic fallback is said: on the job's stderr and in the TAP
if grep -q '^# preflight fabric: warning: cross-node provider efa is absent; the automatic choice falls back to tcp;ofi_rxm' "$RUN1/epgate.tap" &&
	grep -q 'epgate: warning: provider efa is not on this host.*falls back to tcp;ofi_rxm' "$RUN1"/l2-a2a.w2.n2.auto.k1.log; then
	eg_ok "the fallback from efa to tcp across nodes is a warning in the step log and the TAP"
else
	eg_not_ok "the fallback from efa to tcp across nodes is a warning"
	eg_show "$RUN1/preflight-fabric.log"
fi

# PSM's backtrace handler off in every epgate the job started
if [ -s "$EG_TMP/env.log" ] && ! grep -qv '^IPATH_NO_BACKTRACE=1 ' "$EG_TMP/env.log"; then
	eg_ok "IPATH_NO_BACKTRACE=1 in all $(wc -l <"$EG_TMP/env.log") epgate processes of the job"
else
	eg_not_ok "IPATH_NO_BACKTRACE=1 in every epgate process of the job"
	sort "$EG_TMP/env.log" | uniq -c | eg_show /dev/stdin
fi

# the profile's python: reaches every rank (EPGATE_PYTHON, docs/profiles.md)
py=$(sed -n 's/^python: //p' "$TINY")
nr=$(grep -c ' \(bench-rank\|l2-rank\) ' "$EG_TMP/env.log")
if [ "$nr" -gt 0 ] && ! grep ' \(bench-rank\|l2-rank\) ' "$EG_TMP/env.log" |
	grep -qv " EPGATE_PYTHON=$py\$"; then
	eg_ok "the profile's python: ($py) is EPGATE_PYTHON in all $nr ranks of the job"
else
	eg_not_ok "EPGATE_PYTHON=$py in every rank ($nr ranks)"
	sort "$EG_TMP/env.log" | uniq -c | eg_show /dev/stdin
fi

# --- a fresh run folder per job: a folder named after the next job id,
# left with another job's results, is not where the next job writes
next=$((job + 1))
mkdir -p "$EPGATE_RUNS/slurm-$next"
cp "$RUN1/bench-slurm-tiny.w4.n2.json" "$EPGATE_RUNS/slurm-$next/bench-slurm-tiny.w4.n2.json"
EPGATE_SUITES=bench eg_sbatch fresh -N 1 "$SB" "$TINY"
if [ "$job" = "$next" ] && [ -n "$run" ] && [ "$run" != "$RUN1" ] &&
	[ "$run" != "$EPGATE_RUNS/slurm-$next" ] && [ ! -e "$run/bench-slurm-tiny.w4.n2.json" ] &&
	[ "$(ls "$EPGATE_RUNS/slurm-$next")" = "bench-slurm-tiny.w4.n2.json" ]; then
	eg_ok "job $job wrote a fresh run folder ($(basename "$run")), not slurm-$next with an earlier job's results"
else
	eg_not_ok "job ${job:-?} (expected $next) wrote a fresh run folder (got '$run')"
	eg_show "$out"
fi
# with -N 1 the two-node jobs are skips that say why; the gates judged
# only this job's points
if [ "$rc" -eq 0 ] &&
	grep -q '^ok [0-9]* - bench slurm-tiny.w4.n2: step # SKIP not run: world 4 on 2 nodes: the allocation has 1 node(s)' "$run/epgate.tap" &&
	grep -q '^SKIP  *cross-node-tcp ' "$run/gates.out"; then
	eg_ok "sbatch -N 1: exit 0, the two-node jobs skipped with the reason, gates on this job's points only"
else
	eg_not_ok "sbatch -N 1: exit $rc, two-node jobs skipped, gates on this job's points"
	eg_show "$run/epgate.tap" "$run/gates.out"
fi

# a run folder given that holds files is refused, untouched
before=$(ls "$RUN1" | wc -l)
EPGATE_SUITES=bench eg_sbatch reuse -N 1 "$SB" "$TINY" "$RUN1"
if [ "$rc" -eq 99 ] && grep -q "run folder $RUN1 exists and is not empty; refusing" "$out" &&
	[ "$(ls "$RUN1" | wc -l)" -eq "$before" ]; then
	eg_ok "a run folder that exists is refused (exit 99, sacct '$(eg_sacct "$job")'), left as it was"
else
	eg_not_ok "a run folder that exists is refused (exit $rc)"
	eg_show "$out"
fi

# --- nothing can run: p5en-ep32 (32 ranks on 4 nodes) on one node. The
# caller's FI_PROVIDER wins over the profile's efa, which this host lacks.
FI_PROVIDER=tcp EPGATE_SUITES=bench eg_sbatch none -N 1 "$SB" p5en-ep32
if [ "$rc" -eq 77 ] && [ "$(eg_sacct "$job")" = "FAILED 77:0" ] &&
	grep -q '^ok [0-9]* - bench p5en-ep32.w32.n4: step # SKIP not run: world 32 on 4 nodes: the allocation has 1 node(s)' "$run/epgate.tap" &&
	! grep -q '^ok [0-9]* - bench.*step$' "$run/epgate.tap" &&
	eg_valid_junit "$run/epgate.junit.xml" && grep -q '<skipped' "$run/epgate.junit.xml" &&
	grep -q 'SKIP (77): nothing could run' "$out"; then
	eg_ok "sbatch -N 1 p5en-ep32: exit 77 (sacct FAILED 77:0), TAP and JUnit say nothing ran and why"
else
	eg_not_ok "sbatch -N 1 p5en-ep32: exit $rc (sacct '$(eg_sacct "$job")'), want 77 with the reason"
	eg_show "$out" "${run:-/dev/null}/epgate.tap"
fi

# --- a GPU profile on nodes without GPU: a skip, not a failure; the
# script asks no GPU itself, so it fits this cluster (2 GPUs of GRES per
# node) with or without --gpus-per-node
for gpus in none 2; do
	EPGATE_SUITES=bench eg_sbatch "gpu-$gpus" -N 1 \
		$([ "$gpus" = none ] || echo "--gpus-per-node=$gpus") "$SB" h200x2-nvlink
	if [ "$rc" -eq 77 ] && [ "$(eg_sacct "$job")" = "FAILED 77:0" ] &&
		grep -q '^ok [0-9]* - preflight gpu: step # SKIP the step skipped (exit 77): no CUDA device' "$run/epgate.tap" &&
		grep -q '^ok [0-9]* - bench h200x2-nvlink.w2.n1: step # SKIP not run: no CUDA device' "$run/epgate.tap" &&
		grep -q 'CUDA device: absent' "$run/preflight-gpu.log"; then
		eg_ok "h200x2-nvlink without a GPU (--gpus-per-node $gpus): exit 77, '$(grep -m1 -o 'CUDA device: absent ([^)]*' "$run/preflight-gpu.log"))'"
	else
		eg_not_ok "h200x2-nvlink without a GPU (--gpus-per-node $gpus): exit $rc, want 77"
		eg_show "$EG_TMP/gpu-$gpus.sub" "$out" "${run:-/dev/null}/epgate.tap"
	fi
done
# --- a job array over profiles: task i takes the i-th, each its own
# run folder; sbatch --wait returns the worst task's exit
EPGATE_SUITES=bench eg_sbatch array -N 1 --array=0-1 "$SB" "$TINY,$TINY"
runs=$(ls -d "$EPGATE_RUNS"/slurm-"${job}"_[01]-* 2>/dev/null | wc -l)
if [ "$rc" -eq 0 ] && [ "$runs" -eq 2 ] &&
	[ "$(cat "$EPGATE_RUNS"/slurm-"${job}"_[01]-*/exit | sort -u)" = 0 ]; then
	eg_ok "sbatch --array=0-1 with two profiles: exit 0, one run folder per task"
else
	eg_not_ok "sbatch --array=0-1: exit $rc, $runs run folders for job ${job:-?}"
	eg_show "$EG_TMP/array.sub"
fi
eg_done
