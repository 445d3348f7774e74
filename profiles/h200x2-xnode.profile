# Profile "h200x2-xnode": the same two H200s, but each rank is its own
# virtual node, so every byte crosses NCCL's network transport (sockets):
# the cross-node path of the field report, on one host.  num_comms 1..8 asks
# whether K communicators recover what one proxy thread cannot issue.
# Run on the GPU machine: epgate bench --profile h200x2-xnode
profile: h200x2-xnode
description: "a2a vs dense over NCCL's network transport, 2 GPUs as 2 virtual nodes"
transport: nccl
launcher: local
gates: gates/h200x2-xnode.gate
timeout: 120
repetitions: {warmup: 5, iters: 40}
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
