#!/bin/bash
# The torch reference adapter as a profile's arm on a real two-node
# Slurm (cluster.sh), end to end (issue 35): sbatch runs `epgate bench
# profile` of suites/slurm/slurm-torch.profile; its job's four ranks run
# as an srun step across both nodes, torch_ep's gloo group among them;
# every point is measured into the results file, with torch_ep's build
# as its evidence; gates/local.gate judges them; the page
# (report.html) shows the arm. The nightly script runs the same profile
# (EPGATE_SUITES=bench), two of its four ranks on each node. A torch
# arm that raises on one rank (planted) fails the job.
. "${EG_SRCDIR:-.}/suites/slurm/lib.sh"
: "${EG_BUILDDIR:=.}"
: "${EG_PYTHON:=python3}"
if [ ! -f "$EG_BUILDDIR/plugins/python/libeg-python.so" ]; then
	echo "1..0 # SKIP the Python bridge is not built (configure found no Python headers: apt-get install python3-dev)"
	exit 77
fi
if ! "$EG_PYTHON" -c 'import numpy, torch.distributed' 2>/dev/null; then
	echo "1..0 # SKIP torch is not importable by $EG_PYTHON (apt-get install python3-torch, or sh setup.sh --deps)"
	exit 77
fi
eg_slurm_start
P=$EG_SRCDIR/suites/slurm/slurm-torch.profile
mkdir -p "$EG_TMP/runs"
# bench NAME PROFILE SBATCH-ARGS...: epgate bench profile in a batch job
# (eg_sbatch); sets rc, job, out, folder (its run folder)
bench() {
	local name=$1 prof=$2
	shift 2
	eg_sbatch "$name" "$@" \
		--wrap "cd '$EG_TMP' && '$EG_EPGATE' bench profile '$prof' --reports '$EG_TMP/runs/$name'"
	folder=$(sed -n 's/^epgate bench: run folder \(.*\)$/\1/p' "$out" 2>/dev/null)
}
npoints=$("$EG_EPGATE" bench --profile "$P" --list | grep -c '^  point ')
ntorch=$("$EG_EPGATE" bench --profile "$P" --list | grep -c '^  point .*/plugin:python,module=torch_ep')

bench pass "$P" -N 2
res=$folder/bench-slurm-torch.json
if [ "$rc" -eq 0 ] && [ "$(eg_sacct "$job")" = "COMPLETED 0:0" ] &&
	tail -n 1 "$out" | grep -q '^PASS: .* (exit 0)$'; then
	eg_ok "sbatch -N 2 --wrap 'epgate bench profile slurm-torch': exit 0, sacct COMPLETED 0:0, '$(tail -n 1 "$out")'"
else
	eg_not_ok "sbatch -N 2 epgate bench profile slurm-torch: exit $rc, sacct '$(eg_sacct "$job")'"
	eg_show "$out"
fi
# the job's ranks were Slurm's tasks (no local launcher's "[rank] "
# prefix), their cross-node pairs over tcp
if [ -s "$res" ] && ! grep -q '^\[[0-9]*\] ' "$folder"/bench-*.log &&
	[ "$(grep -c '"provider_inter": "tcp;ofi_rxm"' "$res")" -eq "$npoints" ]; then
	eg_ok "the ranks ran as Slurm's tasks, cross-node pairs over tcp in all $npoints points"
else
	eg_not_ok "the ranks as Slurm's tasks across the nodes (results ${res:-none})"
	eg_show "$out"
fi
# every point measured, the torch arm's with its build as evidence
meas=$(grep -c '"step_us": {"median": [0-9]' "$res" 2>/dev/null)
tev=$(grep -c "\"lib_build\": \"epgate's reference adapter on torch [0-9][^\"]* (gloo)\"" "$res" 2>/dev/null)
if [ "${meas:-0}" -eq "$npoints" ] && [ "${tev:-0}" -eq "$ntorch" ]; then
	eg_ok "results: $meas of $npoints points measured; the $ntorch torch_ep points' evidence: $(grep -m1 -o "epgate's reference adapter on torch [^\"]*" "$res")"
else
	eg_not_ok "results: ${meas:-0} of $npoints points measured, ${tev:-0} of $ntorch with torch_ep's evidence"
	eg_show "$out"
fi
# the gates judged them, and the page shows the arm
if eg_valid_tap "$folder/bench-gates.tap" && eg_valid_junit "$folder/bench-gates.junit.xml" &&
	grep -q '^ok [0-9]* - step-time-budget' "$folder/bench-gates.tap" &&
	! grep -q '^not ok' "$folder/bench-gates.tap" &&
	grep -q 'plugin:python,module=torch_ep' "$folder/report.html"; then
	eg_ok "gates: $(grep -m1 '^ok [0-9]* - step-time-budget' "$folder/bench-gates.tap" | cut -c1-60); report.html shows the torch_ep arm"
else
	eg_not_ok "gates and page in ${folder:-no folder}"
	eg_show "$folder/bench-gates.tap"
fi

# the nightly script with the same profile, its bench step only; a
# wrapper as EPGATE says where each of the step's tasks ran
cat >"$EG_TMP/epgate-where" <<EOF
#!/bin/sh
[ "\$1" = bench-rank ] && echo "\${SLURMD_NODENAME:-none} \${SLURM_PROCID:-none}" >>"$EG_TMP/where.log"
exec "$EG_EPGATE" "\$@"
EOF
chmod +x "$EG_TMP/epgate-where"
EPGATE=$EG_TMP/epgate-where EPGATE_SUITES=bench eg_sbatch nightly -N 2 \
	"$EG_SRCDIR/slurm/epgate.sbatch" "$P"
where=$(sort "$EG_TMP/where.log" 2>/dev/null | tr '\n' ' ')
if [ "$where" = "n1 0 n1 1 n2 2 n2 3 " ]; then
	eg_ok "epgate.sbatch's bench step: ranks 0, 1 on n1 and 2, 3 on n2 (srun -N 2 -n 4)"
else
	eg_not_ok "epgate.sbatch's bench step: tasks where '${where:-none}', want n1 0 n1 1 n2 2 n2 3"
	eg_show "$out"
fi
if [ "$rc" -eq 0 ] && [ "$(eg_sacct "$job")" = "COMPLETED 0:0" ] &&
	grep -q '^ok [0-9]* - bench slurm-torch\.w4\.n2: step' "$run/epgate.tap" &&
	[ "$(grep -c "epgate's reference adapter on torch" "$run/bench-slurm-torch.w4.n2.json")" -eq "$ntorch" ] &&
	! grep -q '^not ok' "$run/bench-gates.tap"; then
	eg_ok "EPGATE_SUITES=bench sbatch -N 2 epgate.sbatch slurm-torch: exit 0, the step and its gates ok"
else
	eg_not_ok "epgate.sbatch slurm-torch: exit $rc, sacct '$(eg_sacct "$job")'"
	eg_show "$out" "$run/epgate.tap"
fi

# a torch arm whose last rank raises after the exchange fails the job,
# its message in the job's log
cat >"$EG_TMP/lastraises.py" <<'PY'
import torch_ep as ref
from torch_ep import query, create, combine, destroy
def dispatch(engine, inp):
    res = ref.dispatch(engine, inp)
    if engine.env.rank + 1 == engine.env.world:
        raise RuntimeError("planted: the last rank's torch arm gives up")
    return res
PY
sed -e "s|module=torch_ep\"|module=lastraises,path=$EG_TMP\"|" \
	-e 's/concurrency: \[8, 32\]/concurrency: [8]/' "$P" >"$EG_TMP/raises.profile"
bench raises "$EG_TMP/raises.profile" -N 2
# (bench ends the job at the failed verification and exits 99, "a job
# that died", not 1: the points after it are not measured)
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
	[ "$(eg_sacct "$job")" = "FAILED $rc:0" ] &&
	grep -q "adapter lastraises: RuntimeError: planted: the last rank's torch arm gives up" "$folder"/bench-*.log &&
	grep -q "lastraises,path=$EG_TMP/concurrency=8: verification failed on rank(s) 3" "$folder"/bench-*.log; then
	eg_ok "a torch arm that raises on rank 3: the job fails (exit $rc, sacct FAILED $rc:0), '$(tail -n 1 "$out")'"
else
	eg_not_ok "a torch arm that raises: exit $rc, sacct '$(eg_sacct "$job")'"
	eg_show "$out"
fi
eg_done
