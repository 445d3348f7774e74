# Profile "slurm-torch": the torch reference adapter (torch_ep, docs/
# python.md) as an arm beside a2a, on the two-node Slurm of
# suites/slurm/cluster.sh (suites/slurm/torch.sh): four ranks on two
# nodes, their torch.distributed group over gloo across them, a point
# per layout, gates/local.gate judging them. Seconds, not minutes.
profile: slurm-torch
description: "torch_ep beside a2a, 4 ranks on 2 nodes, for the Slurm tests"
transport: fabric
provider: auto
launcher: local
gates: gates/local.gate
timeout: 60
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
  - name: torch
    arms: [a2a, "plugin:python,module=torch_ep",
           "plugin:python,module=torch_ep,layout=expert"]
    axes: {concurrency: [8, 32]}
