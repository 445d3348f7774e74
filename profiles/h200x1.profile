# Profile "h200x1": one H200, one rank (W=1): what the GPU path costs when
# nothing crosses a wire -- NCCL's fixed costs per call (the count
# exchange, the grouped send/recv to itself), the layout, pack and finish
# kernels, the expert stage.  Small on purpose: it is the profile the GPU
# calibration runs 45 times in one device call of under 8 minutes
# (suites/gpu/calibrate.sh, docs/gates.md "Calibration"): 2 points (the
# all-to-all, where the slowdown is planted, and dense, whose gate must
# not move), 3 launches each and 2 more for a point a gate cannot settle,
# 20 steps.  A launch is one process (CUDA context, then one NCCL
# communicator per point): about 3 s, so 5 launches about 15 s.
# interleave: steps puts a2a and dense step by step in every launch, as
# `bench ab` puts its two arms, so a history campaign and an A/B job
# time the all-to-all alike (docs/profiles.md).  20 steps: 200 were
# tried (2026-12-02, fixtures/campaigns/h200x1-steps200) and caught no
# more: the launch-paired change of an A/A launch spread 2.5% with 200
# steps against 1.3% with 20 (docs/gates.md, "Calibration").
# Run on the GPU machine: epgate bench profile h200x1
profile: h200x1
description: "a2a and dense on one H200 (W=1): NCCL's fixed costs, the kernels, the expert stage"
transport: nccl
launcher: local
interleave: steps
gates: gates/h200x1.gate
timeout: 60
repetitions: {warmup: 3, iters: 20, launches: 3}
remeasure: {rounds: 1, launches: 2}

base:
  world: 1
  nodes: 1
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 64
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: w1
    arms: [a2a, dense]
    axes: {concurrency: [1024]}
