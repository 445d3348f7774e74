"""epgate's torch reference adapter: numpy_ep's engine written in torch
over a torch.distributed group (docs/python.md). The group comes from
torch_common.group(), the code the DeepEP, pplx and UCCL-EP adapters use:
gloo over CPU tensors on the host, NCCL over CUDA tensors with
memory=cuda. What runs that code at W > 1 without a GPU.

    --engine plugin:python,module=torch_ep[,memory=host|cuda]
             [,layout=flat|rank|expert][,keys=given|content]
             [,order=canonical|fixed|any]

Dispatch all-gathers every rank's tokens (one byte tensor a rank, padded
to max_tokens) and keeps those routed here. Combine all-gathers every
rank's rows with their keys and sums this rank's tokens in numpy_ep's
orders: the row layouts one row per destination rank, ascending, in fp32
from 0 and cast once (canonical); expert-major the top-k slots ascending,
each copy weighed in fp32 (fixed).
"""
import torch_common as tc
from numpy_ep import OPTIONS as _REF_OPTIONS, parse as _ref_parse

OPTIONS = dict(_REF_OPTIONS, memory=("host", "cuda"))


def parse(options, allowed=OPTIONS):
    o = _ref_parse(options, allowed)
    o.setdefault("memory", "host")
    return o


def _torch_version():
    """torch's version as installed, without importing it (the wheel's
    or Debian's metadata)."""
    import importlib.metadata
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "(not importable)"


def declare(o):
    version = _torch_version()
    return {
        "memory": o["memory"],
        "layout": o["layout"],
        "dtypes": ["bf16", "fp32", "fp8"],
        "order": o["order"],
        "lib_name": "torch_ep",
        "lib_version": "1",
        "lib_build": "epgate's reference adapter on torch %s (%s)"
                     % (version, "NCCL" if o["memory"] == "cuda" else "gloo"),
        "options": "memory=host|cuda  CPU tensors over gloo, or CUDA "
                   "tensors over NCCL (host)\n"
                   "layout=flat|rank|expert  the native layout (flat)\n"
                   "keys=given|content  return each row's source, or not\n"
                   "order=canonical|fixed|any  the combine order declared",
    }


def query(options):
    o = parse(options)
    if o["memory"] == "host":
        # The CPU build survives the fork of each L1 case (torch makes its
        # thread pools anew in the child); importing it here, once, saves
        # every case the seconds an import takes on a loaded host. CUDA's
        # runtime does not survive a fork: create imports it there.
        try:
            import torch  # noqa: F401
        except ImportError:
            pass  # create says so, as a skip
    return declare(o)


class Engine:
    """One instance: the shape of env, the layout of o, a group over
    env's world."""

    def __init__(self, env, o):
        self.torch, self.dist = tc.need("torch", "torch", "torch.distributed")
        torch = self.torch
        if o["memory"] == "cuda" and env.cuda_device < 0:
            tc.skip("memory=cuda wants a CUDA device")
        self.env, self.o = env, o
        self.pg = tc.group(env)
        self.dev = (torch.device("cuda", env.cuda_device)
                    if o["memory"] == "cuda" else torch.device("cpu"))
        W, L, M = env.world, env.local_experts, env.max_tokens
        self.layout = o["layout"]
        self.G, self.S = {"flat": (1, env.total_tokens), "rank": (W, M),
                          "expert": (L, W * M)}[self.layout]
        self.xt = {"bf16": torch.bfloat16, "fp32": torch.float32,
                   "fp8": torch.uint8}[env.dtype]
        self.ct = {"bf16": torch.bfloat16, "fp32": torch.float32}[env.combine_dtype]
        self.nsc = env.hidden // 128 if env.dtype == "fp8" else 0
        # one rank's dispatch blob: tokens, then max_tokens rows of
        # payload, scales, top-k ids and weights, each a block
        self.blocks = (((M, env.hidden), self.xt), ((M, self.nsc), torch.float32),
                       ((M, env.topk), torch.int32), ((M, env.topk), torch.float32))
        n = 8 + sum(a * b * _size(torch, dt) for (a, b), dt in self.blocks)
        # the receive buffers, made once and reused by every step
        self.recv = [torch.empty(n, dtype=torch.uint8, device=self.dev)
                     for _ in range(W)]
        self.calls = 0  # dispatches so far
        self.combines = 0
        self.stream = tc.stream(env) if o["memory"] == "cuda" else None

    def on_stream(self):
        import contextlib
        if self.stream is None:
            return contextlib.nullcontext()
        return self.torch.cuda.stream(self.stream)

    def view(self, a, dtype=None):
        """An epgate.Array as a tensor of its memory, no copy (DLPack;
        fp8 stays uint8: its bytes are moved, never summed)."""
        if a is None:
            return None
        t = self.torch.from_dlpack(a)
        return t if dtype is None else t.view(dtype)

    # ---- dispatch ----------------------------------------------------------

    def pack(self, inp):
        torch, e, T = self.torch, self.env, inp.tokens
        parts = [torch.tensor([T], dtype=torch.int64, device=self.dev)]
        for a, (shape, dt) in zip((inp.x, inp.scales, inp.topk_idx, inp.topk_w),
                                  self.blocks):
            block = torch.zeros(shape, dtype=dt, device=self.dev)
            if a is not None and T:
                block[:T] = self.view(a)
            parts.append(block)
        return torch.cat([p.reshape(-1).view(torch.uint8) for p in parts])

    def unpack(self, blob):
        """A blob of pack(): tokens, x, scales, ids, weights."""
        torch = self.torch
        T = int(blob[:8].view(torch.int64)[0])
        out, at = [T], 8
        for shape, dt in self.blocks:
            n = shape[0] * shape[1] * _size(torch, dt)
            out.append(blob[at:at + n].view(dt).reshape(shape)[:T])
            at += n
        return out

    def exchange(self, blob):
        """Every rank's blob, in rank order, in this engine's receive
        buffers (a planted fault may change where it reads)."""
        self.dist.all_gather(self.recv, blob, group=self.pg)
        return self.recv

    def dispatch(self, inp):
        with self.on_stream():
            return self._dispatch(inp)

    def _dispatch(self, inp):
        torch, e = self.torch, self.env
        me, L, K, G, S = e.rank, e.local_experts, e.topk, self.G, self.S
        lo, dev = me * L, self.dev
        got = self.exchange(self.pack(inp))
        self.calls += 1
        res = {
            "stride": S,
            "count": torch.zeros(G, dtype=torch.int32, device=dev),
            "x": torch.zeros((G * S, e.hidden), dtype=self.xt, device=dev),
            "scales": (torch.zeros((G * S, self.nsc), dtype=torch.float32, device=dev)
                       if self.nsc else None),
            "src_rank": torch.full((G * S,), -1, dtype=torch.int32, device=dev),
            "src_token": torch.full((G * S,), -1, dtype=torch.int32, device=dev),
            "topk_idx": torch.full((G * S, K), -1, dtype=torch.int32, device=dev),
            "topk_w": torch.zeros((G * S, K), dtype=torch.float32, device=dev),
        }
        self.n = [0] * G  # rows kept in each group
        for s, blob in enumerate(got):
            T, x, sc, idx, w = self.unpack(blob)
            local = (idx >= lo) & (idx < lo + L)
            if self.layout == "expert":
                for g in range(L):
                    toks = torch.nonzero((idx == lo + g).any(1)).flatten()
                    self.keep(res, g, s, toks, x, sc, None, None)
            else:
                rows = torch.nonzero(local.any(1)).flatten()
                lid = torch.where(local, idx - lo, torch.full_like(idx, -1))[rows]
                lw = torch.where(local, w, torch.zeros_like(w))[rows]
                self.keep(res, s if self.layout == "rank" else 0, s, rows,
                          x, sc, lid, lw)
        res["count"].copy_(torch.tensor(self.n, dtype=torch.int32))
        self.kept = res  # combine sends rows back by these keys
        ret = dict(res)
        if self.layout == "expert":
            del ret["topk_idx"], ret["topk_w"]
        if self.o["keys"] == "content":
            ret["src_rank"] = ret["src_token"] = None
        return self.dispatched(ret)

    def keep(self, res, g, s, toks, x, sc, lid, lw):
        """Source s's tokens toks into group g, after what it holds."""
        n0, k = self.n[g], len(toks)
        at = slice(g * self.S + n0, g * self.S + n0 + k)
        res["x"][at] = x[toks]
        if self.nsc:
            res["scales"][at] = sc[toks]
        res["src_rank"][at] = s
        res["src_token"][at] = toks.to(self.torch.int32)
        if lid is not None:
            res["topk_idx"][at], res["topk_w"][at] = lid, lw
        self.n[g] = n0 + k

    def dispatched(self, res):
        """What dispatch returns (a planted fault may change it)."""
        return res

    # ---- combine -----------------------------------------------------------

    def combine(self, inp, y, out):
        with self.on_stream():
            self._combine(inp, y, out)
        self.combines += 1

    def _combine(self, inp, y, out):
        torch, e, G, S = self.torch, self.env, self.G, self.S
        res, H = self.kept, e.hidden
        yt = self.view(y).reshape(G * S, H).to(self.ct)
        blob = torch.cat([res["count"].view(torch.uint8),
                          res["src_rank"].view(torch.uint8),
                          res["src_token"].view(torch.uint8),
                          yt.reshape(-1).view(torch.uint8)])
        allb = [torch.empty_like(blob) for _ in range(e.world)]
        self.dist.all_gather(allb, blob, group=self.pg)
        peers = []
        for b in allb:
            cnt = b[:4 * G].view(torch.int32).tolist()
            src = b[4 * G:4 * G + 4 * G * S].view(torch.int32)
            tok = b[4 * G + 4 * G * S:4 * G + 8 * G * S].view(torch.int32).long()
            yd = b[4 * G + 8 * G * S:].view(self.ct).reshape(G * S, H).float()
            valid = torch.zeros(G * S, dtype=torch.bool, device=self.dev)
            for g in range(G):
                valid[g * S:g * S + cnt[g]] = True
            peers.append((valid & (src == e.rank), src, tok, yd))
        acc = torch.zeros((inp.tokens, H), dtype=torch.float32, device=self.dev)
        if self.layout == "expert":
            self.sum_slots(inp, peers, acc)
        else:
            for n, d in enumerate(self.dest_order()):
                mine, _, tok, yd = peers[d]
                self.add(acc, tok[mine], yd[mine], n == 0)
        if inp.tokens:
            self.view(out).copy_(acc.to(self.ct))

    def sum_slots(self, inp, peers, acc):
        """Expert-major: out[t] = sum over t's slots k (in slot order) of
        w_k * y(the copy of t in expert idx[t, k])."""
        torch, e, T = self.torch, self.env, inp.tokens
        L = e.local_experts
        if not T:
            return
        idx = self.view(inp.topk_idx).long()
        w = self.view(inp.topk_w)
        rows = []  # per destination: (local expert, token) -> its copy's row
        for mine, _, tok, _ in peers:
            look = torch.full((L * T,), -1, dtype=torch.int64, device=self.dev)
            r = torch.nonzero(mine).flatten()
            look[(r // self.S) * T + tok[r]] = r
            rows.append(look)
        for n, k in enumerate(self.slot_order()):
            ex = idx[:, k]
            for d in range(e.world):
                t = torch.nonzero((ex >= 0) & (ex // L == d)).flatten()
                r = rows[d][(ex[t] % L) * T + t]
                t, r = t[r >= 0], r[r >= 0]
                self.add(acc, t, w[t, k][:, None] * peers[d][3][r], n == 0)

    def dest_order(self):
        return range(self.env.world)

    def slot_order(self):
        return range(self.env.topk)

    def add(self, acc, toks, vals, first):
        """One term per token (a row, or a weighted copy), in fp32; a token
        appears once among toks, so the sum is elementwise."""
        acc[toks] += vals


def _size(torch, dt):
    return torch.tensor([], dtype=dt).element_size()


def create(env):
    return Engine(env, parse(env.options))


def dispatch(engine, inp):
    return engine.dispatch(inp)


def combine(engine, inp, y, out):
    engine.combine(inp, y, out)


def destroy(engine):
    tc.drop_stream_cache(engine)
