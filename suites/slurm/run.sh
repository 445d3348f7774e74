#!/bin/bash
# `epgate run` inside an allocation (issue 13, finding 2), on a real
# two-node Slurm (cluster.sh): sbatch's script is not a task, so every
# job's ranks run as an srun step (lib/world/job_srun.c) -- the L2 jobs,
# the sweep's jobs -- and the perf stage runs instead of refusing; a
# failing gate makes the job, the closing line and summary.json say
# FAIL; summary.json carries every stage, bench and gates included.
# A small data folder (EPGATE_DATADIR) keeps the run to seconds.
. "${EG_SRCDIR:-.}/suites/slurm/lib.sh"
eg_slurm_start
D=$EG_TMP/data
mkdir -p "$D/fixtures/workloads" "$D/profiles" "$D/gates" "$EG_TMP/runs"
cat >"$D/fixtures/workloads/l1-matrix.ini" <<'INI'
[one-w2]
world = 2
experts = 8
topk = 2
tokens = 8
hidden = 32
INI
# two jobs: 2 ranks on one node, 4 ranks on two virtual nodes
cat >"$D/fixtures/workloads/l2-matrix.ini" <<'INI'
experts = 8
topk = 2
tokens = 8
hidden = 32
[w2-mini]
world = 2
[w4-mini]
world = 4
INI
cat >"$D/profiles/local.profile" <<'YAML'
profile: local
transport: fabric
launcher: local
gates: gates/local.gate
timeout: 20
repetitions: {warmup: 1, iters: 3}
base: {world: 4, nodes: 2, num_comms: 1, concurrency: 8, hidden: 32,
       experts: 8, topk: 2, dtype: bf16, routing: uniform}
sweeps:
  - name: mini
    arms: [a2a, dense]
    axes: {concurrency: [8]}
YAML
gate() { # gate MAX: a step-time budget of MAX us
	cat >"$D/gates/local.gate" <<YAML
profile: local
gates:
  - name: step-time-budget
    sentence: "Every layer step takes under $1 us."
    rule: bound
    metric: step_us
    max: $1
YAML
}
# run NAME SBATCH-ARGS...: epgate run in a batch job (eg_sbatch); sets rc,
# job, out, folder (the run folder), sum (its summary.json)
run() {
	local name=$1
	shift
	eg_sbatch "$name" "$@" \
		--wrap "cd '$EG_TMP' && EPGATE_DATADIR='$D' '$EG_EPGATE' run --reports '$EG_TMP/runs/$name'"
	folder=$(sed -n 's/^epgate run: profile local, run folder \(.*\)$/\1/p' "$out" 2>/dev/null)
	sum=$folder/summary.json
}
# stage NAME KEY: a stage's value in summary.json
stage() {
	awk -v s="\"name\": \"$1\"" -v k="\"$2\": " '
	index($0, s) { on = 1 } on && index($0, k) { sub(/.*: /, ""); sub(/,$/, ""); print; exit }' "$sum"
}

# --- a passing run on two nodes: its jobs are srun steps, perf included
gate 1000000
run pass -N 2
if [ "$rc" -eq 0 ] && [ "$(eg_sacct "$job")" = "COMPLETED 0:0" ] &&
	grep -q "inside Slurm job $job: every job's ranks run as an srun step" "$out" &&
	tail -n 1 "$out" | grep -q '^PASS: .* (exit 0)$' &&
	grep -q '"exit": 0,' "$sum" && grep -q '"verdict": "PASS"' "$sum"; then
	eg_ok "sbatch --wrap 'epgate run' -N 2: exit 0, sacct COMPLETED 0:0, jobs as srun steps: $(tail -n 1 "$out")"
else
	eg_not_ok "sbatch --wrap 'epgate run' -N 2: exit $rc, sacct '$(eg_sacct "$job")'"
	eg_show "$out"
	eg_show_jobs "$folder"
fi
# the ranks were Slurm's tasks (no local launcher's "[rank] " prefix) and
# every stage is in summary.json with its counts
if [ -s "$folder/l2-a2a.w4.n2.shm.k1.log" ] &&
	! grep -q '^\[[0-9]*\] ' "$folder/l2-a2a.w4.n2.shm.k1.log" &&
	! grep -q '^\[launch\]' "$folder"/l2-*.log "$folder"/bench-*.log &&
	[ "$(stage bench status)" = '"pass"' ] && [ "$(stage bench passed)" = 2 ] &&
	[ "$(stage gates status)" = '"pass"' ] && [ "$(stage gates passed)" = 1 ] &&
	[ "$(stage l2 passed)" -ge 10 ]; then
	eg_ok "L2 and sweep jobs ran as srun steps; summary.json: L2 $(stage l2 passed) passed, bench $(stage bench passed) points, gates $(stage gates passed) passed"
else
	eg_not_ok "jobs as srun steps and every stage in summary.json (bench $(stage bench status), gates $(stage gates status))"
	eg_show "$out" "$sum"
fi

# --- a failing gate: the job, the last line and summary.json say FAIL
gate 0
run fail -N 1
fails=$(stage gates failed)
if [ "$rc" -eq 1 ] && [ "$(eg_sacct "$job")" = "FAILED 1:0" ] &&
	tail -n 1 "$out" | grep -q '^FAIL: .* 1 failed, .* (exit 1)$' &&
	grep -q '"exit": 1,' "$sum" && grep -q '"verdict": "FAIL"' "$sum" &&
	[ "$fails" = 1 ] && grep -q '"case": "step-time-budget"' "$sum" &&
	grep -q '^  gates  .*bench-gates.tap' "$out"; then
	eg_ok "a failing gate under Slurm: exit 1 (sacct FAILED 1:0), '$(tail -n 1 "$out")', summary.json names the gate"
else
	eg_not_ok "a failing gate under Slurm: exit $rc (sacct '$(eg_sacct "$job")'), gates failed '${fails:-?}'"
	eg_show "$out" "$sum"
	eg_show_jobs "$folder"
fi
# EPGATE_LAUNCHER=local keeps the jobs on the batch node (forked)
gate 1000000
EPGATE_LAUNCHER=local run local -N 1 --export=ALL
if [ "$rc" -eq 0 ] && ! grep -q 'srun step' "$out" &&
	grep -q '^\[0\] ' "$folder/l2-a2a.w2.n1.tcp.k1.log"; then
	eg_ok "EPGATE_LAUNCHER=local: the jobs fork on the batch node, exit 0"
else
	eg_not_ok "EPGATE_LAUNCHER=local: exit $rc"
	eg_show "$out"
fi
eg_done
