"""epgate's reference adapter: expert parallelism in pure Python and numpy
over the bridge's bootstrap exchange, in each native layout of the plugin
ABI (docs/python.md). What keeps the Python bridge honest without a GPU.

    --engine plugin:python,module=numpy_ep[,layout=flat|rank|expert]
             [,keys=given|content][,order=canonical|fixed|any]
             [,library=0|1]

Dispatch allgathers every rank's tokens and keeps those routed here.
Combine allgathers every rank's rows with their keys and sums this rank's
tokens: for the row layouts (flat, rank) one row per destination rank,
ascending, in fp32 from 0 and cast once (the canonical order); for the
expert-major layout, which applies the weights itself, the top-k slots
ascending (a fixed order of its own). library=1 marks each call as the
library's own (`with env.library():`, docs/python.md "Timing the
library"), as an adapter around a real library does.
"""
import numpy as np

# allowed values of each option (None: any text)
OPTIONS = {
    "layout": ("flat", "rank", "expert"),
    "keys": ("given", "content"),
    "order": ("canonical", "fixed", "any"),
    "library": ("0", "1"),
}
_STORAGE = {"bf16": np.uint16, "fp32": np.float32, "fp8": np.uint8}


def parse(options, allowed=OPTIONS):
    """The options as a dict with defaults; ValueError names a bad one."""
    o = {"layout": "flat", "keys": "given", "order": None}
    for k, v in options.items():
        if k not in allowed or (allowed[k] is not None and v not in allowed[k]):
            want = "; ".join("%s=%s" % (a, "|".join(b) if b else "TEXT")
                             for a, b in allowed.items())
            raise ValueError("option %s=%s: want %s" % (k, v, want))
        o[k] = v
    if o["order"] is None:
        o["order"] = "fixed" if o["layout"] == "expert" else "canonical"
    return o


def declare(o):
    return {
        "memory": "host",
        "layout": o["layout"],
        "dtypes": ["bf16", "fp32", "fp8"],
        "order": o["order"],
        "lib_name": "numpy_ep",
        "lib_version": "1",
        "lib_build": "epgate's reference adapter on numpy " + np.__version__,
        "options": "layout=flat|rank|expert  the native layout (flat)\n"
                   "keys=given|content  return each row's source, or not\n"
                   "order=canonical|fixed|any  the combine order declared",
    }


def query(options):
    return declare(parse(options))


def to_f32(a, dtype):
    """Combine-dtype elements (bf16 as uint16, or fp32) as float32."""
    if dtype == "fp32":
        return np.asarray(a, np.float32)
    return (np.asarray(a).astype(np.uint32) << 16).view(np.float32)


def from_f32(f, dtype):
    """float32 to the combine dtype, bf16 rounded to nearest even."""
    if dtype == "fp32":
        return f.astype(np.float32)
    u = f.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


class Engine:
    """One instance: the shape of env, the layout of o."""

    def __init__(self, env, o):
        self.env, self.o = env, o
        W, L, M = env.world, env.local_experts, env.max_tokens
        self.layout = o["layout"]
        self.G, self.S = {"flat": (1, env.total_tokens), "rank": (W, M),
                          "expert": (L, W * M)}[self.layout]
        self.xt = _STORAGE[env.dtype]
        self.nsc = env.hidden // 128 if env.dtype == "fp8" else 0
        self.calls = 0  # combines so far

    # ---- dispatch ----------------------------------------------------------

    def pack(self, inp):
        """This rank's input as one blob: tokens, then max_tokens rows of
        payload, scales, top-k ids and weights (each a block)."""
        e, T, M = self.env, inp.tokens, self.env.max_tokens
        parts = [np.array([T], np.int64).view(np.uint8)]
        for a, shape, dt in ((inp.x, (M, e.hidden), self.xt),
                             (inp.scales, (M, self.nsc), np.float32),
                             (inp.topk_idx, (M, e.topk), np.int32),
                             (inp.topk_w, (M, e.topk), np.float32)):
            block = np.zeros(shape, dt)
            if a is not None and T:
                block[:T] = np.asarray(a)
            parts.append(block.view(np.uint8).ravel())
        return np.concatenate(parts)

    def unpack(self, blob):
        """A blob of pack(): tokens, x, scales, ids, weights."""
        e, M = self.env, self.env.max_tokens
        T = int(blob[:8].view(np.int64)[0])
        out, at = [T], 8
        for shape, dt in (((M, e.hidden), self.xt), ((M, self.nsc), np.float32),
                          ((M, e.topk), np.int32), ((M, e.topk), np.float32)):
            n = int(np.prod(shape)) * np.dtype(dt).itemsize
            out.append(blob[at:at + n].view(dt).reshape(shape)[:T])
            at += n
        return out

    def dispatch(self, inp):
        e = self.env
        me, L, K, G, S = e.rank, e.local_experts, e.topk, self.G, self.S
        lo = me * L
        allb = np.frombuffer(e.allgather(self.pack(inp)), np.uint8)
        res = {
            "stride": S,
            "count": np.zeros(G, np.int32),
            "x": np.zeros((G * S, e.hidden), self.xt),
            "scales": np.zeros((G * S, self.nsc), np.float32) if self.nsc else None,
            "src_rank": np.full(G * S, -1, np.int32),
            "src_token": np.full(G * S, -1, np.int32),
            "topk_idx": np.full((G * S, K), -1, np.int32),
            "topk_w": np.zeros((G * S, K), np.float32),
        }
        for s, blob in enumerate(allb.reshape(e.world, -1)):
            T, x, sc, idx, w = self.unpack(blob)
            local = (idx >= lo) & (idx < lo + L)
            if self.layout == "expert":
                for g in range(L):
                    self.keep(res, g, s, np.nonzero((idx == lo + g).any(1))[0],
                              x, sc, None, None)
            else:
                rows = np.nonzero(local.any(1))[0]
                lid = np.where(local, idx - lo, -1)[rows]
                lw = np.where(local, w, 0.0).astype(np.float32)[rows]
                self.keep(res, s if self.layout == "rank" else 0, s, rows,
                          x, sc, lid, lw)
        self.kept = res  # combine sends rows back by these keys
        ret = dict(res)
        if self.layout == "expert":
            del ret["topk_idx"], ret["topk_w"]
        if self.o["keys"] == "content":
            ret["src_rank"] = ret["src_token"] = None
        return self.dispatched(ret)

    def keep(self, res, g, s, toks, x, sc, lid, lw):
        """Source s's tokens toks into group g, after what it holds."""
        n0 = int(res["count"][g])
        at = slice(g * self.S + n0, g * self.S + n0 + len(toks))
        res["x"][at] = x[toks]
        if self.nsc:
            res["scales"][at] = sc[toks]
        res["src_rank"][at] = s
        res["src_token"][at] = toks
        if lid is not None:
            res["topk_idx"][at], res["topk_w"][at] = lid, lw
        res["count"][g] = n0 + len(toks)

    def dispatched(self, res):
        """What dispatch returns (a planted fault may change it)."""
        return res

    # ---- combine -----------------------------------------------------------

    def combine(self, inp, y, out):
        e, G, S = self.env, self.G, self.S
        res = self.kept
        yb = np.ascontiguousarray(np.asarray(y)).view(np.uint8).ravel()
        blob = np.concatenate([res["count"].view(np.uint8),
                               res["src_rank"].view(np.uint8),
                               res["src_token"].view(np.uint8), yb])
        allb = np.frombuffer(e.allgather(blob), np.uint8).reshape(e.world, -1)
        peers = []
        for b in allb:
            cnt = b[:4 * G].view(np.int32)
            src = b[4 * G:4 * G + 4 * G * S].view(np.int32)
            tok = b[4 * G + 4 * G * S:4 * G + 8 * G * S].view(np.int32)
            yd = to_f32(b[4 * G + 8 * G * S:].view(_STORAGE[e.combine_dtype])
                        .reshape(G * S, e.hidden), e.combine_dtype)
            valid = np.zeros(G * S, bool)
            for g in range(G):
                valid[g * S:g * S + cnt[g]] = True
            peers.append((valid & (src == e.rank), src, tok, yd))
        acc = np.zeros((inp.tokens, e.hidden), np.float32)
        if self.layout == "expert":
            self.sum_slots(inp, peers, acc)
        else:
            for n, d in enumerate(self.dest_order()):
                mine, _, tok, yd = peers[d]
                self.add(acc, tok[mine], yd[mine], n == 0)
        np.asarray(out)[...] = from_f32(self.result(acc), e.combine_dtype)
        self.calls += 1

    def sum_slots(self, inp, peers, acc):
        """Expert-major: out[t] = sum over t's slots k (in slot order) of
        w_k * y(the copy of t in expert idx[t, k])."""
        e, L, T = self.env, self.env.local_experts, inp.tokens
        idx, w = np.asarray(inp.topk_idx), np.asarray(inp.topk_w)
        rows = []  # per destination: (local expert, token) -> its copy's row
        for mine, _, tok, _ in peers:
            look = np.full(L * max(T, 1), -1, np.int64)
            r = np.nonzero(mine)[0]
            look[(r // self.S) * T + tok[r]] = r
            rows.append(look)
        for n, k in enumerate(self.slot_order()):
            ex = idx[:, k] if T else np.zeros(0, np.int32)
            for d in range(e.world):
                t = np.nonzero((ex >= 0) & (ex // L == d))[0]
                r = rows[d][(ex[t] % L) * T + t]
                t, r = t[r >= 0], r[r >= 0]
                self.add(acc, t, w[t, k][:, None] * peers[d][3][r], n == 0)

    def dest_order(self):
        return range(self.env.world)

    def slot_order(self):
        return range(self.env.topk)

    def add(self, acc, toks, vals, first):
        """One term per token (a row, or a weighted copy), in fp32."""
        acc[toks] += vals

    def result(self, acc):
        return acc


def create(env):
    return Engine(env, parse(env.options))


def dispatch(engine, inp):
    if engine.o.get("library") == "1":
        with engine.env.library():
            return engine.dispatch(inp)
    return engine.dispatch(inp)


def combine(engine, inp, y, out):
    if engine.o.get("library") == "1":
        with engine.env.library():
            engine.combine(inp, y, out)
        return
    engine.combine(inp, y, out)


def destroy(engine):
    pass
