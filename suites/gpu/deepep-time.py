"""DeepEP alone at one shape, timed the way epgate times a plugin's call:
a CUDA event on the current stream before and after each dispatch and each
combine, the mean over the timed calls after the warm-up ones (epgate's
EPGATE_PLUGIN_PHASES=1 numbers; docs/python.md, "DeepEP on the GPU
machine"). One process, one rank, its own process group; the routing is a
uniform draw of top-k distinct experts per token, as epgate's uniform one.

    python deepep-time.py MODE TOKENS HIDDEN EXPERTS TOPK [WARMUP ITERS]

MODE: elastic (ElasticBuffer, not expanded, CPU-synced counts) or ll (the
legacy Buffer's low-latency mode). Prints one line:
    deepep-time MODE tokens=T rows=R dispatch_us=D combine_us=C
(rows: rows received, so bytes = rows x hidden x 2 per phase)
"""
import socket
import sys

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, warm, iters):
    """mean microseconds of fn() between events on the current stream"""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    total = 0.0
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        out = fn()
        b.record()
        b.synchronize()
        total += a.elapsed_time(b) * 1e3
    return total / iters, out


def main():
    mode, T, H, E, K = sys.argv[1], *map(int, sys.argv[2:6])
    warm, iters = (int(sys.argv[6]), int(sys.argv[7])) if len(sys.argv) > 7 else (10, 50)
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % free_port(),
                            rank=0, world_size=1, device_id=torch.device("cuda", 0))
    group = dist.new_group([0])
    import deep_ep
    x = torch.randn((T, H), dtype=torch.bfloat16, device="cuda")
    idx = torch.rand((T, E), device="cuda").topk(K, dim=1).indices.to(deep_ep.topk_idx_t)
    w = torch.rand((T, K), dtype=torch.float32, device="cuda")
    if mode == "elastic":
        buf = deep_ep.ElasticBuffer(group, num_max_tokens_per_rank=T, hidden=H,
                                    num_topk=K, explicitly_destroy=True)
        d_us, (rx, _, _, handle, _) = timed(lambda: buf.dispatch(
            x, topk_idx=idx, topk_weights=w, num_experts=E,
            num_max_tokens_per_rank=T, do_cpu_sync=True), warm, iters)
        c_us, _ = timed(lambda: buf.combine(rx, handle=handle), warm, iters)
        rows = rx.shape[0]
    else:
        B = T + (-T) % 4
        rdma = deep_ep.Buffer.get_low_latency_rdma_size_hint(B, H, 1, E)
        buf = deep_ep.Buffer(group, 0, rdma, low_latency_mode=True,
                             num_qps_per_rank=E, explicitly_destroy=True)
        d_us, (rx, count, handle, _, _) = timed(lambda: buf.low_latency_dispatch(
            x, idx, B, E, use_fp8=False), warm, iters)
        c_us, _ = timed(lambda: buf.low_latency_combine(rx, idx, w, handle), warm, iters)
        rows = int(count.sum().item())
    print("deepep-time %s tokens=%d rows=%d dispatch_us=%.2f combine_us=%.2f"
          % (mode, T, rows, d_us, c_us), flush=True)
    buf.destroy()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
