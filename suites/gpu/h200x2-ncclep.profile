# Profile "h200x2-ncclep": NCCL EP through its adapter plugin
# (plugins/nccl-ep/) as arms beside epgate's own nccl a2a and dense, on
# two H200s over NVLink (W = 2), at the shapes of NCCL EP's ep_bench
# (docs/plugins.md, "NCCL EP"): low latency at 128 tokens per rank, high
# throughput at 4096, H = 7168, top-8 of 256 experts, NCCL EP's receive
# budget (recv=) as ep_bench sets it for two ranks. The plugin is found
# through LD_LIBRARY_PATH (its folder, after NCCL EP's lib/), as
# suites/gpu/h200x2-device.sh sets it.
profile: h200x2-ncclep
description: "NCCL EP LL and HT (plugin arms) beside epgate's nccl a2a and dense, two H200s over NVLink"
transport: nccl
launcher: local
timeout: 900        # HT compiles its kernels at its first call
env: {EPGATE_PLUGIN_PHASES: "1"}   # the plugin's calls timed as ep_bench times them
repetitions: {warmup: 10, iters: 50}   # ep_bench's defaults

base:
  world: 2
  nodes: 1
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 256
  topk: 8
  dtype: bf16
  routing: uniform

sweeps:
  - name: ll
    arms: [a2a, dense, "plugin:libeg-nccl-ep.so,mode=ll,recv=2048"]
    axes: {concurrency: [128]}
  - name: ht
    arms: [a2a, dense, "plugin:libeg-nccl-ep.so,mode=ht,recv=32768"]
    axes: {concurrency: [4096]}
