# Profile "p5en-ep16": the field report's campaign at the layer level --
# 2x p5en.48xlarge (8 H200 each, 16 EFA NICs per node), NCCL over EFA
# (aws-ofi-nccl), EP8 within a node and EP16 across two.  Runs under
# Slurm only (`sbatch -N 2 --gpus-per-node=8 slurm/epgate.sbatch
# p5en-ep16`, docs/slurm.md): every srun'd rank runs the points of its
# (world, nodes).  Sweep names match the
# suites of gates/p5en-ep16.gate where the layer-level point measures the
# same thing (docs/profiles.md lists which gates get data).
#
# Arms (docs/profiles.md, "Named arms"): epgate's own a2a and dense, and
# the libraries the report measured, each as a plugin found by name
# (docs/plugins.md, "Plugins by name": EPGATE_PLUGIN_PATH, else plugins/
# beside the epgate that runs).  What a cluster sets, in the environment
# sbatch hands to every rank:
#   EPGATE_PYTHON    the interpreter of a venv with torch and deep_ep (its
#                    bin/python3); without it the bridge's own Python runs
#                    and DeepEP's points skip ("DeepEP is not importable")
#   EPGATE_PLUGIN_PATH  where libeg-python.so and libeg-nccl-ep.so are,
#                    if not beside epgate (./configure --with-nccl-ep=DIR)
#   LD_LIBRARY_PATH  NCCL EP's lib/ first (one libnccl, docs/plugins.md)
# An arm whose plugin, adapter or library is absent where it runs has its
# points skipped with the reason; the others are measured.
#
# DeepEP (deepseek-ai/DeepEP dd758ca) through the bridge (docs/python.md):
#   deepep-v2      V2, ElasticBuffer (deep_ep/buffers/elastic.py)
#   deepep-normal  legacy Buffer, normal mode, intranode (NVLink): EP8 only;
#                  across nodes its kernels need NVSHMEM IBGDA
#                  (csrc/kernels/legacy/ibgda_device.cuh, mlx5), which EFA
#                  has not: left out of the cross-node sweeps
#   deepep-ll      legacy low-latency mode: EP8 over NVLink only, for the
#                  same reason
# NCCL EP (NVIDIA/nccl contrib/nccl_ep, NCCL 2.30.7) as plugin nccl-ep
# (docs/plugins.md, "NCCL EP"): ncclep-ll (low latency), ncclep-ht (high
# throughput).
#
# The multi-comm knob.  The report's EP_NUM_COMMS=K runs K NCCL
# communicators, K GIN proxy threads (a private DeepEP patch; upstream
# DeepEP opens one communicator per group, deep_ep/utils/comm.py
# get_nccl_comm_handle).  The nearest knob each library has upstream, put
# on the num_comms axis by "{num_comms}" in the arm's spec:
#   deepep-v2-qps  qps=K: num_qps of ElasticBuffer.dispatch/combine, the GIN
#                  contexts (RDMA QPs) its kernels spread their puts over
#                  (<= num_allocated_qps: ginContextCount,
#                  csrc/kernels/backend/nccl.cu NCCLSymmetricMemoryContext)
#   ncclep-ll-qps  qps=K: num_qp_per_rank of ncclEpGroupConfig_t
#                  (contrib/nccl_ep/include/nccl_ep.h, ncclEpCreateGroup),
#                  the GIN contexts of its one communicator
#                  (reqs.ginContextCount in contrib/nccl_ep/nccl_ep.cc;
#                  gin_config.num_comms is "always 1" there)
# Left out of ep16-multicomm: ncclep-ht (its num_qp_per_rank must be at
# least 2 x its SMs, "[HT GIN] Error: num_qp_per_rank(%d) must be >= %d"
# in nccl_ep.cc, so K = 1..8 are values it refuses), deepep-normal and
# deepep-ll (not across nodes on EFA, above; the legacy LL's
# num_qps_per_rank, Buffer.__init__ in deep_ep/buffers/legacy.py, must
# equal the local experts), dense (no comm knob).
# Outside that sweep the knobs are the libraries' own (the arms without
# "-qps").  base dtype bf16: DeepEP V2 and NCCL EP take bf16 only (V2's
# fp8 wants its own scale packing, NCCL EP's fp8 is "not supported");
# fp8 is ep16-dtype's, for epgate's engines.
profile: p5en-ep16
description: "DeepEP (V2, legacy) and NCCL EP (LL, HT) beside epgate's a2a and dense, EP8 (NVLink) and EP16 (EFA), NCCL"
transport: nccl
launcher: slurm
gates: gates/p5en-ep16.gate
timeout: 120
repetitions: {warmup: 5, iters: 40}
env:
  FI_PROVIDER: "efa"
  FI_EFA_USE_DEVICE_RDMA: "1"
  NCCL_PROTO: "simple"

arms:
  deepep-v2: "plugin:python,module=deepep,mode=elastic"
  deepep-v2-qps: "plugin:python,module=deepep,mode=elastic,qps={num_comms}"
  deepep-normal: "plugin:python,module=deepep,mode=intranode"
  deepep-ll: "plugin:python,module=deepep,mode=ll"
  ncclep-ll: "plugin:nccl-ep,mode=ll"
  ncclep-ll-qps: "plugin:nccl-ep,mode=ll,qps={num_comms}"
  ncclep-ht: "plugin:nccl-ep,mode=ht"

base:
  world: 16
  nodes: 2
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 128
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: ep8-nvlink             # intra-node: the tie
    arms: [a2a, dense, deepep-v2, deepep-normal, deepep-ll, ncclep-ll, ncclep-ht]
    axes: {world: 8, nodes: 1, concurrency: [32, 128]}
  - name: ep16-concurrency       # cross-node, load
    arms: [a2a, dense, deepep-v2, ncclep-ll, ncclep-ht]
    axes: {concurrency: [32, 64, 128, 256]}
  - name: ep-world               # 16 ranks on 2 nodes (32 on 4: p5en-ep32)
    arms: [a2a, dense, deepep-v2, ncclep-ll, ncclep-ht]
    axes: {concurrency: 128}
  - name: ep16-experts           # more, smaller messages
    arms: [a2a, dense, deepep-v2, ncclep-ll, ncclep-ht]
    axes: {experts: [128, 256]}
  - name: ep16-multicomm         # K communicators (EP_NUM_COMMS), above
    arms: [a2a, deepep-v2-qps, ncclep-ll-qps]
    axes: {num_comms: [1, 2, 4, 8]}
  - name: ep16-dtype             # fp8: epgate's engines alone (above)
    arms: [a2a, dense]
    axes: {dtype: [bf16, fp8]}
