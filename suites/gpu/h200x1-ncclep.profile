# Profile "h200x1-ncclep": NCCL EP through its adapter plugin
# (plugins/nccl-ep/) as arms beside epgate's own nccl a2a, on one H200
# (W = 1: every row stays on the GPU), at the shapes of NCCL EP's
# ep_bench (docs/plugins.md, "NCCL EP"): low latency at 128 tokens,
# high throughput at 4096, H = 7168, top-8 of 256 experts, NCCL EP's
# receive budget (recv=) as ep_bench sets it. The plugin is
# found through LD_LIBRARY_PATH (its folder, after NCCL EP's lib/), as
# suites/gpu/nccl-ep-device.sh sets it. Not in profiles/ yet: the profile
# parser takes plugin arms once it is extended (the shipped profiles
# must parse); then it moves there with a gate file.
profile: h200x1-ncclep
description: "NCCL EP LL and HT (plugin arms) beside epgate's nccl a2a, one H200"
transport: nccl
launcher: local
timeout: 900        # HT compiles its kernels at its first call
env: {EPGATE_PLUGIN_PHASES: "1"}   # the plugin's calls timed as ep_bench times them
repetitions: {warmup: 10, iters: 50}   # ep_bench's defaults

base:
  world: 1
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
    arms: [a2a, "plugin:libeg-nccl-ep.so,mode=ll,recv=2048"]
    axes: {concurrency: [128]}
  - name: ht
    arms: [a2a, "plugin:libeg-nccl-ep.so,mode=ht,recv=32768"]
    axes: {concurrency: [4096]}
