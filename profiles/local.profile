# Profile "local": this host, CPU, libfabric shm within a (virtual) node
# and tcp across, ranks launched by `epgate launch`.  The default of
# `epgate run` and `epgate bench profile local`; it should finish within
# about a minute on a 2-core machine, launches included.  Measured here
# (docs/gates.md, "Calibration"): the median of one launch of a point
# moves by 25-35% from one launch to the next (which cores the 4 ranks
# and their progress threads share), the steps inside a launch by 5%;
# so the repetitions go into launches, 6 of them per point with 10 timed
# steps each (a launch costs 0.2 s here, a step 2 ms), and the points a
# gate cannot settle get 3 more.  See docs/profiles.md.
profile: local
description: "Host-memory a2a vs dense over libfabric (shm/tcp), virtual nodes"
transport: fabric
provider: auto          # shm within a node, tcp across (docs/transport.md)
launcher: local
# the two arms of a point (a2a and dense at the same axes) step by step:
# the gates judge a2a against dense in the same launches (docs/profiles.md)
interleave: steps
gates: gates/local.gate
timeout: 30             # seconds, every blocking step
repetitions: {warmup: 2, iters: 10, launches: 6}
remeasure: {rounds: 1, launches: 3}
raw:                    # the transport alone, for the model line
  msgs: 256             # 8-byte messages per peer per call, all in flight
  msg_size: 8
  size: 256K            # bytes per peer per call for the bandwidth
  iters: 10
  warmup: 2

# Every point starts from this workload (4 ranks in 2 virtual nodes, a
# small decode-like layer step) and changes only what its sweep sweeps.
base:
  world: 4
  nodes: 2
  num_comms: 1
  concurrency: 32       # tokens per rank
  hidden: 512
  experts: 16
  topk: 4
  dtype: bf16
  routing: uniform

sweeps:
  - name: concurrency
    arms: [a2a, dense]
    axes: {concurrency: [8, 32, 128]}
  - name: world
    arms: [a2a, dense]
    axes: {world: [2, 4]}          # 1 and 2 ranks per node
  - name: experts
    arms: [a2a, dense]
    axes: {experts: [8, 16, 32]}
  - name: num-comms
    arms: [a2a]
    axes: {num_comms: [1, 2, 4]}
  - name: nodes
    arms: [a2a, dense]
    axes: {nodes: [1, 2]}          # shm only; shm within, tcp across
  # secondary axes, the all-to-all only
  - name: dtype
    arms: [a2a]
    axes: {dtype: [bf16, fp8]}
  - name: routing
    arms: [a2a]
    axes: {routing: [uniform, "zipf:1.2"]}
