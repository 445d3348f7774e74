# Profile "p5en-ep16": the field report's campaign at the layer level --
# 2x p5en.48xlarge (8 H200 each, 16 EFA NICs per node), NCCL over EFA
# (aws-ofi-nccl), EP8 within a node and EP16 across two.  Runs under
# Slurm only (`sbatch -N 2 --gpus-per-node=8 slurm/epgate.sbatch
# p5en-ep16`, docs/slurm.md): every srun'd rank runs the points of its
# (world, nodes).  Sweep names match the
# suites of gates/p5en-ep16.gate where the layer-level point measures the
# same thing (docs/profiles.md lists which gates get data).
profile: p5en-ep16
description: "DeepEP-style a2a vs dense at EP8 (NVLink) and EP16 (EFA), NCCL"
transport: nccl
launcher: slurm
gates: gates/p5en-ep16.gate
timeout: 120
repetitions: {warmup: 5, iters: 40}
env:
  FI_PROVIDER: "efa"
  FI_EFA_USE_DEVICE_RDMA: "1"
  NCCL_PROTO: "simple"

base:
  world: 16
  nodes: 2
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 128
  topk: 8
  dtype: fp8
  routing: uniform

sweeps:
  - name: ep8-nvlink             # intra-node: the tie
    arms: [a2a, dense]
    axes: {world: 8, nodes: 1, concurrency: [32, 128]}
  - name: ep16-concurrency       # cross-node, load
    arms: [a2a, dense]
    axes: {concurrency: [32, 64, 128, 256]}
  - name: ep-world               # 16 ranks on 2 nodes (32 on 4: p5en-ep32)
    arms: [a2a, dense]
    axes: {concurrency: 128}
  - name: ep16-experts           # more, smaller messages
    arms: [a2a, dense]
    axes: {experts: [128, 256]}
  - name: ep16-multicomm         # K communicators (EP_NUM_COMMS)
    arms: [a2a]
    axes: {num_comms: [1, 2, 4, 8]}
  - name: ep16-dtype
    arms: [a2a, dense]
    axes: {dtype: [bf16, fp8]}
