# Profile "h200x2": two H200s of one host, one rank per GPU, over NVLink
# (W=2): the same two points as h200x1 -- the all-to-all, where the
# calibration plants its slowdown, and dense, whose gate must not move --
# with a wire between the ranks. Small on purpose: it is the profile the
# two-GPU calibration runs about 40 times in one device call of under ten
# minutes (suites/gpu/h200x2-device.sh campaign, docs/gates.md
# "Calibration"); h200x2-nvlink and h200x2-xnode are the scaling axes.
# Run on the GPU machine: epgate bench profile h200x2
profile: h200x2
description: "a2a and dense on two H200s over NVLink (W=2): the two-GPU calibration profile"
transport: nccl
launcher: local
gates: gates/h200x2.gate
timeout: 60
repetitions: {warmup: 3, iters: 20, launches: 3}
remeasure: {rounds: 1, launches: 2}

base:
  world: 2
  nodes: 1
  num_comms: 1
  concurrency: 1024
  hidden: 7168
  experts: 64
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: w2
    arms: [a2a, dense]
    axes: {concurrency: [1024]}
