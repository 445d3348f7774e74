# Profile "p5en-ep32": the world-size axis of the field report -- 4x
# p5en.48xlarge, EP32 over EFA.  Slurm only (`sbatch -N 4
# --gpus-per-node=8 slurm/epgate.sbatch p5en-ep32`, docs/slurm.md).  Its "ep-world" points pair with
# p5en-ep16's: give both results files to `epgate gate` for the world
# gates of gates/p5en-ep16.gate.
#
# Arms, the environment they need and the multi-comm knobs: as in
# profiles/p5en-ep16.profile, whose comments cite each library's source.
# The legacy DeepEP modes are left out: across nodes their kernels need
# NVSHMEM IBGDA, which EFA has not; ncclep-ht is left out of
# ep32-multicomm (its num_qp_per_rank must be at least 2 x its SMs).
profile: p5en-ep32
description: "DeepEP V2 and NCCL EP (LL, HT) beside a2a and dense at EP32 over 4 nodes (EFA), NCCL"
transport: nccl
launcher: slurm
gates: gates/p5en-ep16.gate
timeout: 180
repetitions: {warmup: 5, iters: 40}
env:
  FI_PROVIDER: "efa"
  FI_EFA_USE_DEVICE_RDMA: "1"
  NCCL_PROTO: "simple"

arms:
  deepep-v2: "plugin:python,module=deepep,mode=elastic"
  deepep-v2-qps: "plugin:python,module=deepep,mode=elastic,qps={num_comms}"
  ncclep-ll: "plugin:nccl-ep,mode=ll"
  ncclep-ll-qps: "plugin:nccl-ep,mode=ll,qps={num_comms}"
  ncclep-ht: "plugin:nccl-ep,mode=ht"

base:
  world: 32
  nodes: 4
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 256
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: ep-world
    arms: [a2a, dense, deepep-v2, ncclep-ll, ncclep-ht]
    axes: {concurrency: 128}
  - name: ep32-concurrency
    arms: [a2a, dense, deepep-v2, ncclep-ll, ncclep-ht]
    axes: {concurrency: [32, 128, 256]}
  - name: ep32-multicomm
    arms: [a2a, deepep-v2-qps, ncclep-ll-qps]
    axes: {num_comms: [1, 8]}
