"""DeepEP V2's ElasticBuffer made and destroyed again and again in one
process, without epgate: the reduction of what `epgate stress` saw on one
H100 on 2026-12-07 (docs/perf-notes.md, "the field report's campaign"):
64 instances through epgate's adapter left +968 MiB of device memory in
use (+15.4 MiB an instance) where NCCL EP's left none.

    python deepep-instances.py [N]     (N instances, default 32)

Each instance: ElasticBuffer(default group, 128 tokens, H 7168, top-8,
explicitly_destroy=True), one dispatch and combine at 256 experts,
destroy(); then the device memory in use (torch.cuda.mem_get_info: every
process on the GPU, as epgate's NVML count) and torch's own reserve
(memory_reserved: its caching allocator). Prints a line per instance and
one verdict line:

    deepep-instances N=32 used_first=.. used_last=.. per_instance=..
        reserved_first=.. reserved_last=.. after_empty_cache=..

(MiB). per_instance well above 0 with reserved flat: memory outside
torch's allocator that destroy() does not give back.
"""
import socket
import sys

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mib(b):
    return b / (1024.0 * 1024.0)


def used():
    free, total = torch.cuda.mem_get_info()
    return mib(total - free)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    T, H, E, K = 128, 7168, 256, 8
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % free_port(),
                            rank=0, world_size=1, device_id=torch.device("cuda", 0))
    group = dist.distributed_c10d._get_default_group()
    dist.all_reduce(torch.ones(1, device="cuda"), group=group)
    import deep_ep
    x = torch.randn((T, H), dtype=torch.bfloat16, device="cuda")
    idx = torch.rand((T, E), device="cuda").topk(K, dim=1).indices.to(deep_ep.topk_idx_t)
    w = torch.rand((T, K), dtype=torch.float32, device="cuda")
    rows = []
    for i in range(n):
        buf = deep_ep.ElasticBuffer(group, num_max_tokens_per_rank=T, hidden=H,
                                    num_topk=K, explicitly_destroy=True)
        rx, _, _, handle, _ = buf.dispatch(x, topk_idx=idx, topk_weights=w,
                                           num_experts=E, num_max_tokens_per_rank=T,
                                           do_cpu_sync=True)
        buf.combine(rx, handle=handle)
        torch.cuda.synchronize()
        del rx, handle
        buf.destroy()
        del buf
        torch.cuda.synchronize()
        rows.append((used(), mib(torch.cuda.memory_reserved())))
        print("instance %d: used %.1f MiB, torch reserved %.1f MiB" % (i, *rows[-1]),
              flush=True)
    torch.cuda.empty_cache()
    after = used()
    per = (rows[-1][0] - rows[0][0]) / max(n - 1, 1)
    print("deepep-instances N=%d used_first=%.1f used_last=%.1f per_instance=%.2f "
          "reserved_first=%.1f reserved_last=%.1f after_empty_cache=%.1f"
          % (n, rows[0][0], rows[-1][0], per, rows[0][1], rows[-1][1], after))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
