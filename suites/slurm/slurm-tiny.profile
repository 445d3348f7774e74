# Profile "slurm-tiny": the sbatch path's test (suites/slurm/sbatch.sh) on
# the emulated two-node Slurm of suites/slurm/cluster.sh. Three jobs like
# the local profile's (world 4 on 2 nodes, world 2 on 2, world 4 on 1),
# two or three points each with few timed steps: every job of the plan
# must run, in seconds, and gates/local.gate must judge them.
profile: slurm-tiny
description: "The local profile's three jobs, a point or two each, for the Slurm tests"
transport: fabric
provider: auto
launcher: local
gates: gates/local.gate
timeout: 20
# the bridge's interpreter: sbatch passes it to every rank (sbatch.sh
# checks; no arm here loads the bridge)
python: /usr/bin/python3
repetitions: {warmup: 1, iters: 5}
raw: {msgs: 16, msg_size: 8, size: 16K, iters: 3, warmup: 1}

base:
  world: 4
  nodes: 2
  num_comms: 1
  concurrency: 8
  hidden: 128
  experts: 8
  topk: 2
  dtype: bf16
  routing: uniform

sweeps:
  - name: concurrency
    arms: [a2a, dense]
    axes: {concurrency: [8, 32]}
  - name: world
    arms: [a2a]
    axes: {world: [2]}
  - name: nodes
    arms: [a2a]
    axes: {nodes: [1]}
