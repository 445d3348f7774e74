# Profile "p5en-ep32": the world-size axis of the field report -- 4x
# p5en.48xlarge, EP32 over EFA.  Slurm only (`sbatch -N 4
# --gpus-per-node=8 slurm/epgate.sbatch p5en-ep32`, docs/slurm.md).  Its "ep-world" points pair with
# p5en-ep16's: give both results files to `epgate gate` for the world
# gates of gates/p5en-ep16.gate.
profile: p5en-ep32
description: "a2a vs dense at EP32 over 4 nodes (EFA), NCCL"
transport: nccl
launcher: slurm
gates: gates/p5en-ep16.gate
timeout: 180
repetitions: {warmup: 5, iters: 40}
env:
  FI_PROVIDER: "efa"
  FI_EFA_USE_DEVICE_RDMA: "1"
  NCCL_PROTO: "simple"

base:
  world: 32
  nodes: 4
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 256
  topk: 8
  dtype: fp8
  routing: uniform

sweeps:
  - name: ep-world
    arms: [a2a, dense]
    axes: {concurrency: 128}
  - name: ep32-concurrency
    arms: [a2a, dense]
    axes: {concurrency: [32, 128, 256]}
  - name: ep32-multicomm
    arms: [a2a]
    axes: {num_comms: [1, 8]}
