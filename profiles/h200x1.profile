# Profile "h200x1": one H200, one rank (W=1): what the GPU path costs when
# nothing crosses a wire -- NCCL's fixed costs per call (the count
# exchange, the grouped send/recv to itself), the layout, pack and finish
# kernels, the expert stage.  Small on purpose: it is the profile the GPU
# calibration runs 45 times in one device call of under 8 minutes
# (suites/gpu/calibrate.sh, docs/gates.md "Calibration"): 2 points (the
# all-to-all, where the slowdown is planted, and dense, whose gate must
# not move), 3 launches each and 2 more for a point a gate cannot settle,
# 20 steps.  A launch is one process (CUDA context, then one NCCL
# communicator per point): about 3 s, so 5 launches about 15 s.
# interleave: steps puts a2a and dense step by step in every launch, as
# `bench ab` puts its two arms, so a history campaign and an A/B job
# time the all-to-all alike (docs/profiles.md).  20 steps: 200 were
# tried (2026-12-02, fixtures/campaigns/h200x1-steps200) and caught no
# more: the launch-paired change of an A/A launch spread 2.5% with 200
# steps against 1.3% with 20 (docs/gates.md, "Calibration").
#
# The libraries beside them (docs/profiles.md, "Named arms"), in sweeps of
# their own so that w1, which the calibration and the a2a/dense gates
# judge, stays as it was: DeepEP (deepseek-ai/DeepEP dd758ca) through the
# Python bridge (docs/python.md) -- deepep-v2 (V2, ElasticBuffer) and
# deepep-ll (the legacy low-latency mode; the legacy normal mode is left
# out: its intranode kernels exist for 2, 4 and 8 ranks, SWITCH_RANKS) --
# and NCCL EP (plugin nccl-ep, docs/plugins.md "NCCL EP"), LL and HT.
# w1-ll at a decode batch (128 tokens: DeepEP's LL takes at most 511,
# NVSHMEM_QP_DEPTH), w1-ht at w1's 1024.  No multi-comm sweep: at W=1
# nothing crosses a wire, so the GIN contexts the p5en profiles sweep carry
# nothing.  What the GPU machine sets (suites/gpu/deepep-lib.sh and
# nccl-ep-lib.sh do): EPGATE_PYTHON, the torch venv's interpreter with
# deep_ep importable (or python: below); EPGATE_PLUGIN_PATH, the folder of
# libeg-nccl-ep.so unless it is beside epgate; NCCL EP's lib/ first in
# LD_LIBRARY_PATH.  An arm whose plugin, adapter or library is absent has
# its points skipped with the reason; the others are measured.  timeout
# 300: DeepEP's and NCCL EP HT's kernels compile at their first call
# (warm their caches, EP_JIT_CACHE_DIR and NCCL_EP_JIT_CACHE_DIR, first).
# Run on the GPU machine: epgate bench profile h200x1
profile: h200x1
description: "a2a and dense on one H200 (W=1): NCCL's fixed costs, the kernels, the expert stage; DeepEP and NCCL EP beside them"
transport: nccl
launcher: local
interleave: steps
gates: gates/h200x1.gate
timeout: 300
repetitions: {warmup: 3, iters: 20, launches: 3}
remeasure: {rounds: 1, launches: 2}

base:
  world: 1
  nodes: 1
  num_comms: 1
  concurrency: 128
  hidden: 7168
  experts: 64
  topk: 8
  dtype: bf16
  routing: uniform

arms:
  deepep-v2: "plugin:python,module=deepep,mode=elastic"
  deepep-ll: "plugin:python,module=deepep,mode=ll"
  ncclep-ll: "plugin:nccl-ep,mode=ll"
  ncclep-ht: "plugin:nccl-ep,mode=ht"

sweeps:
  - name: w1
    arms: [a2a, dense]
    axes: {concurrency: [1024]}
  - name: w1-ll                  # the low-latency modes
    arms: [a2a, dense, deepep-ll, ncclep-ll]
    axes: {concurrency: 128}
  - name: w1-ht                  # the throughput modes
    arms: [a2a, dense, deepep-v2, ncclep-ht]
    axes: {concurrency: 1024}
