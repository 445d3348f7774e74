# Profile "h200x2-nvlink": one host with two H200s, one rank per GPU, both
# in one node: NCCL carries the all-to-all over NVLink (P2P).  The
# intra-node axis of the field report: the all-to-all should tie dense.
# Run on the GPU machine: epgate bench --profile h200x2-nvlink
profile: h200x2-nvlink
description: "a2a vs dense in GPU memory over NCCL, 2 GPUs in one node (NVLink)"
transport: nccl
launcher: local
gates: gates/h200x2-nvlink.gate
timeout: 60
# launches are the unit (docs/gates.md): 5 of 10 steps per point, and 3
# more for the points a gate cannot settle
repetitions: {warmup: 3, iters: 10, launches: 5}
remeasure: {rounds: 1, launches: 3}

base:
  world: 2
  nodes: 1
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 128
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: nvlink-concurrency
    arms: [a2a, dense]
    axes: {concurrency: [16, 64, 256, 1024]}
  - name: nvlink-experts
    arms: [a2a, dense]
    axes: {experts: [64, 128, 256]}
  - name: nvlink-num-comms
    arms: [a2a]
    axes: {num_comms: [1, 2, 4, 8]}
  - name: nvlink-hidden
    arms: [a2a, dense]
    axes: {hidden: [2048, 7168]}
  - name: nvlink-topk
    arms: [a2a]
    axes: {topk: [2, 8]}
  - name: nvlink-dtype
    arms: [a2a, dense]
    axes: {dtype: [bf16, fp8]}
  - name: nvlink-routing
    arms: [a2a]
    axes: {routing: [uniform, "zipf:1.2"]}
