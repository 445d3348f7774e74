# Profile "h200x2-xnode": the same two H200s, but each rank is its own
# virtual node, so every byte crosses NCCL's network transport (sockets):
# the cross-node path of the field report, on one host.  num_comms 1..8 asks
# whether K communicators recover what one proxy thread cannot issue, at
# two sizes: concurrency 128 (measured 2026-12-01: 0.83x from K=1 to 8, the
# proxy is not the bottleneck there, reported only) and at a transport-bound
# 4096 tokens per rank with 256 experts, top-8, H=7168, bf16 (2.47 -> 8.65
# GB/s, 3.5x, the field report's 4.3x in shape), which the gate judges.
# Run on the GPU machine: epgate bench profile h200x2-xnode
profile: h200x2-xnode
description: "a2a vs dense over NCCL's network transport, 2 GPUs as 2 virtual nodes"
transport: nccl
launcher: local
gates: gates/h200x2-xnode.gate
timeout: 120
# launches are the unit (docs/gates.md): 5 of 10 steps per point, and 3
# more for the points a gate cannot settle
repetitions: {warmup: 3, iters: 10, launches: 5}
remeasure: {rounds: 1, launches: 3}
env:
  # The nccl backend keeps virtual nodes apart itself (a host id per
  # virtual node, so NCCL connects them through its network transport);
  # this picks the network: plain sockets, even where an IB NIC exists.
  NCCL_NET: "Socket"

base:
  world: 2
  nodes: 2
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 128
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: xnode-num-comms
    arms: [a2a]
    axes: {num_comms: [1, 2, 4, 8]}
  # where the multi-comm knob matters: the transport, not the host, is
  # the bottleneck (58 MB per rank per dispatch over sockets)
  - name: xnode-num-comms-4096
    arms: [a2a]
    axes: {num_comms: [1, 2, 4, 8], concurrency: 4096, experts: 256}
  - name: xnode-concurrency
    arms: [a2a, dense]
    axes: {concurrency: [16, 64, 256, 1024]}
  - name: xnode-experts
    arms: [a2a, dense]
    axes: {experts: [64, 128, 256]}
  - name: xnode-dtype
    arms: [a2a, dense]
    axes: {dtype: [bf16, fp8]}
  - name: xnode-routing
    arms: [a2a]
    axes: {routing: [uniform, "zipf:1.2"]}
