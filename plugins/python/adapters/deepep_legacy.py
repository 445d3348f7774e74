"""DeepEP's legacy Buffer interface on the bridge (docs/python.md, "DeepEP"):
the normal (high-throughput) mode, intranode or internode, and the
low-latency mode. UCCL-EP has the same interface (uccl_ep.py passes its
Buffer class). Used by deepep.py; not an adapter module of its own.

Every limit below is one of the library's asserts (csrc/legacy/buffer.hpp,
csrc/kernels/legacy/*.cu of DeepEP dd758ca): a case beyond it is skipped
with the reason before the library is called.
"""
import torch_common as tc

# SWITCH_RANKS (csrc/kernels/legacy/launch.cuh): the intranode kernels are
# instantiated for these world sizes only, and get_dispatch_config's table
# starts at 2
INTRANODE_WORLDS = (2, 4, 8)
# SWITCH_HIDDEN: the low-latency kernels' hidden sizes
LL_HIDDEN = (2048, 2560, 3072, 4096, 5120, 6144, 7168, 8192)
LL_MAX_TOPK = 11  # kNumMaxTopK of the low-latency dispatch and combine
NORMAL_MAX_TOPK = 32  # EP_DEVICE_ASSERT(num_topk <= 32): a device trap
MAX_LOCAL_EXPERTS = 1024  # LEGACY_NUM_MAX_LOCAL_EXPERTS
QP_DEPTH = 1024  # NVSHMEM_QP_DEPTH default: >= (tokens + 1) * 2


def declare(mode):
    """The declaration of a legacy mode (deepep.py adds the identity)."""
    if mode == "ll":
        return {"memory": "cuda", "layout": "expert", "dtypes": ["bf16"],
                "order": "any", "flags": ["input_idx64"],
                "max_topk": LL_MAX_TOPK, "max_hidden": max(LL_HIDDEN),
                "hidden_multiple": 128, "max_tokens": QP_DEPTH // 2 - 1}
    return {"memory": "cuda", "layout": "flat", "dtypes": ["bf16", "fp8"],
            "order": "any", "flags": ["input_idx64"],
            "max_topk": NORMAL_MAX_TOPK, "hidden_multiple": 8,
            "max_world": 8 if mode == "intranode" else 160}


def check_shape(env, mode, lib):
    """Skips what the library asserts against, saying which assert."""
    W, L = env.world, env.local_experts
    if mode == "intranode" and W not in INTRANODE_WORLDS:
        tc.skip("%s intranode runs on %s ranks only (SWITCH_RANKS of its "
                "kernels, get_dispatch_config's table); this is W=%d"
                % (lib, "/".join(map(str, INTRANODE_WORLDS)), W))
    if mode == "internode" and (W <= 8 or W % 8):
        tc.skip("%s internode needs more than 8 ranks in whole nodes of 8 "
                "(num_rdma_ranks > 1, num_ranks %% 8 == 0) and an RDMA "
                "network; this is W=%d" % (lib, W))
    if mode != "ll" and L > MAX_LOCAL_EXPERTS:
        tc.skip("%s takes at most %d experts per rank (%d here)"
                % (lib, MAX_LOCAL_EXPERTS, L))
    if mode == "ll":
        if env.hidden not in LL_HIDDEN:
            tc.skip("%s low-latency kernels exist for hidden %s only, not %d"
                    % (lib, "/".join(map(str, LL_HIDDEN)), env.hidden))
        if (ll_tokens(env) + 1) * 2 > QP_DEPTH:
            tc.skip("%s low-latency needs NVSHMEM_QP_DEPTH >= (tokens + 1) "
                    "x 2 = %d" % (lib, (ll_tokens(env) + 1) * 2))


def ll_tokens(env):
    """num_max_dispatch_tokens_per_rank: the most tokens of any rank, so
    that ranks x it is a multiple of 4 (its TMA assert)."""
    b = max(env.max_tokens, 1)
    while (env.world * b) % 4:
        b += 1
    return b


class Normal:
    """The normal mode: get_dispatch_layout, dispatch, combine (a sum of
    the rows, unweighted). Receive layout: flat rows grouped by source
    rank (rank_prefix_matrix), each with its source token index."""

    def __init__(self, env, buffer_cls, lib, idx_t=None):
        import torch
        self.torch, self.env, self.lib = torch, env, lib
        self.idx_t = idx_t  # the library's top-k id type, if not int64
        self.group = tc.group(env)
        self.stream = tc.stream(env)
        W = env.world
        hidden_bytes = env.hidden * 2
        nvl = 0
        for cfg in (buffer_cls.get_dispatch_config(W),
                    buffer_cls.get_combine_config(W)):
            nvl = max(nvl, cfg.get_nvl_buffer_size_hint(hidden_bytes, W))
        with torch.cuda.stream(self.stream):
            self.buf = buffer_cls(self.group, nvl, 0, explicitly_destroy=True)
        self.keep = None

    def dispatch(self, inp):
        torch, e = self.torch, self.env
        with torch.cuda.stream(self.stream):  # every kernel on epgate's
            x = tc.tensor(inp.x)
            if inp.scales is not None:
                x = (x, tc.tensor(inp.scales))
            idx = tc.tensor(inp.topk_idx, self.idx_t)
            w = tc.tensor(inp.topk_w)
            n_rank, n_rdma, n_expert, in_rank, _ = \
                self.buf.get_dispatch_layout(idx, e.experts)
            rx, ridx, rw, _, handle, _ = self.buf.dispatch(
                x, num_tokens_per_rank=n_rank, num_tokens_per_rdma_rank=n_rdma,
                is_token_in_rank=in_rank, num_tokens_per_expert=n_expert,
                topk_idx=idx, topk_weights=w)
        rx, rsc = rx if isinstance(rx, tuple) else (rx, None)
        res = {"stride": rx.shape[0], "rows": rx.shape[0],
               "x": rx.view(torch.uint8) if rsc is not None else rx,
               "scales": rsc, "topk_idx": ridx, "topk_w": rw}
        if self.buf.runtime.get_num_rdma_ranks() == 1:
            res["src_rank"], res["src_token"] = self.keys(handle, rx.shape[0])
        self.keep = (res, handle)
        return res

    def keys(self, handle, n):
        """Each row's source: rank_prefix_matrix[s][me] ends the rows of
        source s; recv_src_idx is the token's index there."""
        torch = self.torch
        ends = handle[0][:, self.env.rank].contiguous()
        rows = torch.arange(n, device=ends.device, dtype=ends.dtype)
        src = torch.searchsorted(ends, rows, right=True).to(torch.int32)
        return src, handle[3]

    def combine(self, inp, y, out):
        torch = self.torch
        res, handle = self.keep
        yt = tc.tensor(y)[:res["rows"]]
        with torch.cuda.stream(self.stream):
            cx, _, _ = self.buf.combine(yt, handle)
            tc.tensor(out).copy_(cx)

    def destroy(self):
        self.keep = None
        self.buf.destroy()


class LowLatency:
    """The low-latency mode: low_latency_dispatch into [local experts, W x
    B, hidden] with per-expert counters, low_latency_combine applying the
    weights. No keys are returned (epgate finds them by content)."""

    def __init__(self, env, buffer_cls, lib, idx_t=None):
        import torch
        self.torch, self.env, self.lib = torch, env, lib
        self.idx_t = idx_t
        self.group = tc.group(env)
        self.stream = tc.stream(env)
        self.B = ll_tokens(env)
        W, E = env.world, env.experts
        rdma = buffer_cls.get_low_latency_rdma_size_hint(self.B, env.hidden,
                                                         W, E)
        with torch.cuda.stream(self.stream):
            self.buf = buffer_cls(self.group, 0, rdma, low_latency_mode=True,
                                  num_qps_per_rank=max(E // W, 1),
                                  explicitly_destroy=True)
        self.keep = None

    def dispatch(self, inp):
        torch, e = self.torch, self.env
        with torch.cuda.stream(self.stream):
            x, idx = tc.tensor(inp.x), tc.tensor(inp.topk_idx, self.idx_t)
            rx, count, handle, _, _ = self.buf.low_latency_dispatch(
                x, idx, self.B, e.experts, use_fp8=False)
        self.keep = (rx, count, handle, idx)
        return {"stride": e.world * self.B, "count": count,
                "x": rx.reshape(-1, e.hidden)}

    def combine(self, inp, y, out):
        torch, e = self.torch, self.env
        rx, count, handle, idx = self.keep
        yt = tc.tensor(y).view(e.local_experts, e.world * self.B, e.hidden)
        with torch.cuda.stream(self.stream):
            # the combine weighs by the source's own top-k weights
            cx, _, _ = self.buf.low_latency_combine(
                yt, idx, tc.tensor(inp.topk_w), handle)
            tc.tensor(out).copy_(cx)

    def destroy(self):
        self.keep = None
        self.buf.destroy()
