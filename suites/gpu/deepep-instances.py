"""DeepEP V2's ElasticBuffer made and destroyed again and again in one
process, without epgate: the reduction of what `epgate stress` saw on one
H100 on 2026-12-07 (docs/perf-notes.md, "the field report's campaign"):
64 instances through epgate's adapter left +968 MiB of device memory in
use (+15.4 MiB an instance) where NCCL EP's left none. Read in the
sources (DeepEP dd758ca, NCCL 2.30.7, torch's caching allocator), an
instance at W = 1 keeps nothing after destroy(); torch keeps a freed
block for the stream it was cut for, and epgate gives each instance a
new stream. What differs between epgate's run and DeepEP alone is a knob:

    python deepep-instances.py [N]      (N instances, default 32)

    DPE_STREAM=default  everything on torch's default stream
    DPE_STREAM=fresh    (default) a new non-blocking CUDA stream per
                        instance, wrapped as torch.cuda.ExternalStream and
                        destroyed after destroy(): what epgate does
                        (lib/core/space_cuda.c at each create and destroy;
                        torch_common.stream)
    DPE_STREAM=fixed    one such stream made once, used by every instance
    DPE_BUFFER=once     one ElasticBuffer for the whole loop (only the
                        stream changes): torch's share without DeepEP's
                        create/destroy
    DPE_EMPTY_CACHE=1   torch.cuda.empty_cache() after each destroy()
    DPE_REBUILD_PG=1    destroy and re-create the process group each
                        instance (DeepEP's own communicators, with
                        EP_REUSE_NCCL_COMM=0, are cached per group in
                        deep_ep/utils/comm.py and destroyed only by
                        destroy_all_managed_nccl_comm(): called here)
    EP_REUSE_NCCL_COMM=0|1  DeepEP's own communicator or torch's

Each instance: ElasticBuffer(default group, 128 tokens, H 7168, top-8,
explicitly_destroy=True), one dispatch and combine at 256 experts,
destroy(). Prints per instance the device memory in use (mem_get_info:
the GPU, as epgate's NVML count), torch's memory_reserved and the stream
handle; then one line

    deepep-instances N=.. stream=.. buffer=.. empty_cache=.. rebuild_pg=..
        reuse_comm=.. distinct_streams=.. used_first=.. used_last=..
        per_instance=.. reserved_first=.. reserved_last=..
        after_empty_cache=..

(MiB) and torch's segments by the stream they were cut for.
"""
import collections
import ctypes
import os
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


_cu = None


def new_stream():
    """cuStreamCreate(CU_STREAM_NON_BLOCKING) on the primary context
    torch made current: as epgate's cudaStreamCreateWithFlags."""
    global _cu
    if _cu is None:
        _cu = ctypes.CDLL("libcuda.so.1")
    s = ctypes.c_void_p()
    assert _cu.cuStreamCreate(ctypes.byref(s), 1) == 0
    return s.value


def destroy_stream(h):
    assert _cu.cuStreamDestroy_v2(ctypes.c_void_p(h)) == 0


def init_pg():
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % free_port(),
                            rank=0, world_size=1, device_id=torch.device("cuda", 0))
    g = dist.distributed_c10d._get_default_group()
    dist.all_reduce(torch.ones(1, device="cuda"), group=g)
    return g


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    mode = os.environ.get("DPE_STREAM", "fresh")
    once = os.environ.get("DPE_BUFFER") == "once"
    empty = os.environ.get("DPE_EMPTY_CACHE") == "1"
    rebuild = os.environ.get("DPE_REBUILD_PG") == "1"
    T, H, E, K = 128, 7168, 256, 8
    torch.cuda.set_device(0)
    group = init_pg()
    import deep_ep
    from deep_ep.utils import comm as dcomm
    fixed = new_stream() if mode == "fixed" else None
    x = torch.randn((T, H), dtype=torch.bfloat16, device="cuda")
    idx = torch.rand((T, E), device="cuda").topk(K, dim=1).indices.to(deep_ep.topk_idx_t)
    w = torch.rand((T, K), dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()

    def make(g):
        return deep_ep.ElasticBuffer(g, num_max_tokens_per_rank=T, hidden=H,
                                     num_topk=K, explicitly_destroy=True)

    buf = make(group) if once else None
    rows, handles = [], []
    for i in range(n):
        h = fixed if mode == "fixed" else (new_stream() if mode == "fresh" else None)
        s = torch.cuda.ExternalStream(h) if h else torch.cuda.default_stream()
        with torch.cuda.stream(s):
            b = buf if once else make(group)
            rx, _, _, handle, _ = b.dispatch(x, topk_idx=idx, topk_weights=w,
                                             num_experts=E, num_max_tokens_per_rank=T,
                                             do_cpu_sync=True)
            cx, _, _ = b.combine(rx, handle=handle)
        torch.cuda.synchronize()
        del rx, handle, cx
        if not once:
            b.destroy()
        del b
        torch.cuda.synchronize()
        if mode == "fresh":
            destroy_stream(h)
        if empty:
            torch.cuda.empty_cache()
        if rebuild:
            dist.destroy_process_group()
            dcomm.destroy_all_managed_nccl_comm()
            group = init_pg()
        handles.append(h or 0)
        rows.append((used(), mib(torch.cuda.memory_reserved())))
        print("instance %d: used %.1f MiB, reserved %.1f MiB, stream 0x%x"
              % (i, rows[-1][0], rows[-1][1], h or 0), flush=True)
    if once:
        buf.destroy()
    segs = collections.defaultdict(lambda: [0, 0])
    for sg in torch.cuda.memory_snapshot():
        segs[(sg["stream"], sg["segment_type"])][0] += 1
        segs[(sg["stream"], sg["segment_type"])][1] += sg["total_size"]
    per = (rows[-1][0] - rows[0][0]) / max(n - 1, 1)
    torch.cuda.empty_cache()
    print("deepep-instances N=%d stream=%s buffer=%s empty_cache=%d rebuild_pg=%d "
          "reuse_comm=%s distinct_streams=%d used_first=%.1f used_last=%.1f per_instance=%.2f "
          "reserved_first=%.1f reserved_last=%.1f after_empty_cache=%.1f"
          % (n, mode, "once" if once else "each", empty, rebuild,
             os.environ.get("EP_REUSE_NCCL_COMM", "1"), len(set(handles)),
             rows[0][0], rows[-1][0], per, rows[0][1], rows[-1][1], used()))
    for (st, ty), (cnt, size) in sorted(segs.items()):
        print("  torch segments on stream 0x%x (%s): %d, %.1f MiB" % (st, ty, cnt, mib(size)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
