"""DeepEP alone at one shape, timed at each of epgate's boundaries
(docs/metrics.md, "Boundaries") and by DeepEP's own method, so that each
of epgate's numbers has its reference taken the same way:

- call:   a CUDA event on the current stream before and after each call,
          the mean over the timed calls after the warm-up ones (epgate's
          EPGATE_BOUNDARY=call);
- window: the same behind a hold (torch.cuda._sleep, ~1 ms) queued
          before the start event, so the host's work runs while the GPU
          is busy (epgate's default for a device plugin); the mean;
- kineto: DeepEP's own benchmark method, deep_ep.utils.testing.
          bench_kineto with the kernel names tests/elastic/test_ep.py
          gives it (dispatch_impl + dispatch_copy_epilogue_impl; combine_impl
          + combine_reduce_epilogue_impl): the mean kernel time under
          torch's profiler, L2 flushed and a ~10 ms sleep plus barrier
          before each call, as DeepEP reports itself.

One process, one rank, on torch's default stream (DPE_TIME_STREAM=new: a
stream of its own, as epgate's adapter; DPE_PRE_NCCL=1: an NCCL
communicator made first, as epgate's process has), its own process group; the
routing is a uniform draw of top-k distinct experts per token, as
epgate's uniform one.

    python deepep-time.py MODE TOKENS HIDDEN EXPERTS TOPK [WARMUP ITERS]

MODE: elastic (ElasticBuffer, not expanded, CPU-synced counts) or ll (the
legacy Buffer's low-latency mode; no kineto column). Prints one line:
    deepep-time MODE tokens=T rows=R dispatch_us=D combine_us=C
        dispatch_win_us=.. combine_win_us=.. dispatch_kineto_us=..
        combine_kineto_us=..
(rows: rows received, so bytes = rows x hidden x 2 per phase; a column
that could not be taken is -1, its reason on stderr)
"""
import os
import socket
import sys

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, warm, iters, hold=0):
    """mean microseconds of fn() between events on the current stream;
    hold: GPU cycles of torch.cuda._sleep queued before the start event"""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    total = 0.0
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if hold:
            torch.cuda._sleep(hold)
        a.record()
        out = fn()
        b.record()
        b.synchronize()
        total += a.elapsed_time(b) * 1e3
    return total / iters, out


def kineto(fn, names, barrier):
    """DeepEP's own method: the summed mean kernel times (us), or -1"""
    try:
        from deep_ep.utils.testing import bench_kineto
        t = bench_kineto(fn, kernel_names=names, barrier_comm_profiling=True,
                         barrier=barrier, suppress_kineto_output=True)
        return sum(t) * 1e6
    except Exception as e:  # a column lost is said, not fatal
        print("deepep-time: kineto %s: %s: %s" % (names, type(e).__name__, e),
              file=sys.stderr, flush=True)
        return -1.0


# ~1 ms at H100/H200 clocks (DeepEP's own bench_kineto sleeps 2e7 cycles)
HOLD = int(2e6)


def nccl_first():
    """DPE_PRE_NCCL=1: an NCCL communicator of one rank made through the
    process's libnccl (the preloaded one) before torch touches NCCL, as
    epgate's process has one of its own before the adapter's group
    (DeepEP alone died in its first elastic dispatch where epgate's
    process ran it: is NCCL's first initialization the difference?).
    Never destroyed: it lives as long as the process, as epgate's does;
    an error is said and ends it (99)."""
    import ctypes
    lib = ctypes.CDLL(os.environ.get("DPE_PRE_NCCL_LIB", "libnccl.so.2"))

    class UniqueId(ctypes.Structure):  # ncclUniqueId: 128 bytes, by value
        _fields_ = [("internal", ctypes.c_char * 128)]

    lib.ncclGetErrorString.restype = ctypes.c_char_p
    uid, comm = UniqueId(), ctypes.c_void_p()
    for what, rc in (("ncclGetUniqueId", lambda: lib.ncclGetUniqueId(ctypes.byref(uid))),
                     ("ncclCommInitRank", lambda: lib.ncclCommInitRank(
                         ctypes.byref(comm), 1, uid, 0))):
        err = rc()
        if err:
            print("deepep-time: DPE_PRE_NCCL: %s: error %d (%s)"
                  % (what, err, lib.ncclGetErrorString(err).decode()),
                  file=sys.stderr, flush=True)
            sys.exit(99)
    print("deepep-time: DPE_PRE_NCCL: a communicator of 1 rank made first",
          file=sys.stderr, flush=True)


def main():
    mode, T, H, E, K = sys.argv[1], *map(int, sys.argv[2:6])
    if os.environ.get("DPE_PRE_NCCL") == "1":
        nccl_first()
    warm, iters = (int(sys.argv[6]), int(sys.argv[7])) if len(sys.argv) > 7 else (10, 50)
    torch.cuda.set_device(0)
    # DPE_TIME_STREAM=new: every call on a stream of its own, as epgate's
    # adapter runs DeepEP (torch_common.stream), not torch's default one
    if os.environ.get("DPE_TIME_STREAM") == "new":
        torch.cuda.set_stream(torch.cuda.Stream())
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % free_port(),
                            rank=0, world_size=1, device_id=torch.device("cuda", 0))
    # the default group, as epgate's adapter passes DeepEP (torch_common.
    # group): like with like. A dist.new_group([0]) here died with
    # SIGSEGV in the first elastic dispatch (elastic.py:976) on 12-04 and
    # 12-07 while the adapter's steps ran; DeepEP reuses the group's NCCL
    # communicator (EP_REUSE_NCCL_COMM=1), which a new group may not have
    # made yet: one collective first makes sure it has
    group = dist.distributed_c10d._get_default_group()
    dist.all_reduce(torch.ones(1, device="cuda"), group=group)
    torch.cuda.synchronize()
    import deep_ep
    x = torch.randn((T, H), dtype=torch.bfloat16, device="cuda")
    idx = torch.rand((T, E), device="cuda").topk(K, dim=1).indices.to(deep_ep.topk_idx_t)
    w = torch.rand((T, K), dtype=torch.float32, device="cuda")
    if mode == "elastic":
        buf = deep_ep.ElasticBuffer(group, num_max_tokens_per_rank=T, hidden=H,
                                    num_topk=K, explicitly_destroy=True)
        disp = lambda: buf.dispatch(
            x, topk_idx=idx, topk_weights=w, num_experts=E,
            num_max_tokens_per_rank=T, do_cpu_sync=True)
        d_us, (rx, _, _, handle, _) = timed(disp, warm, iters)
        comb = lambda: buf.combine(rx, handle=handle)
        c_us, _ = timed(comb, warm, iters)
        dw_us, _ = timed(disp, warm, iters, HOLD)
        cw_us, _ = timed(comb, warm, iters, HOLD)
        dk_us = kineto(disp, ("dispatch_impl", "dispatch_copy_epilogue_impl"),
                       buf.barrier)
        ck_us = kineto(comb, ("combine_impl", "combine_reduce_epilogue_impl"),
                       buf.barrier)
        rows = rx.shape[0]
    else:
        B = T + (-T) % 4
        rdma = deep_ep.Buffer.get_low_latency_rdma_size_hint(B, H, 1, E)
        buf = deep_ep.Buffer(group, 0, rdma, low_latency_mode=True,
                             num_qps_per_rank=E, explicitly_destroy=True)
        d_us, (rx, count, handle, _, _) = timed(lambda: buf.low_latency_dispatch(
            x, idx, B, E, use_fp8=False), warm, iters)
        c_us, _ = timed(lambda: buf.low_latency_combine(rx, idx, w, handle), warm, iters)
        dw_us, _ = timed(lambda: buf.low_latency_dispatch(
            x, idx, B, E, use_fp8=False), warm, iters, HOLD)
        cw_us, _ = timed(lambda: buf.low_latency_combine(rx, idx, w, handle),
                         warm, iters, HOLD)
        dk_us = ck_us = -1.0
        rows = int(count.sum().item())
    print("deepep-time %s tokens=%d rows=%d dispatch_us=%.2f combine_us=%.2f "
          "dispatch_win_us=%.2f combine_win_us=%.2f dispatch_kineto_us=%.2f "
          "combine_kineto_us=%.2f"
          % (mode, T, rows, d_us, c_us, dw_us, cw_us, dk_us, ck_us), flush=True)
    buf.destroy()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
