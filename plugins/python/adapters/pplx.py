"""pplx-kernels through the Python bridge (docs/python.md, "pplx-kernels and
UCCL-EP"), written to its public API (pplx_kernels.AllToAll):

    --engine plugin:python,module=pplx[,mode=intranode|internode]

Each epgate rank is one DP group (dp_size=1). Dispatch fills [local
experts, max tokens x DP groups, hidden] with per-expert counters (the
expert-major layout; no keys: epgate finds them by content); combine
weighs the copies by the source's top-k weights.

pplx-kernels needs at least two DP groups (AllToAll asserts world_size //
dp_size > 1): at W=1 every case is skipped saying so. Its top-k ids are
uint32: a masked slot (-1) is refused at dispatch. bf16 only here (its
fp8 path scales by its own block layout).
"""
import torch_common as tc

MODES = ("intranode", "internode")


def parse(options):
    mode = options.get("mode", "intranode")
    if mode not in MODES or set(options) - {"mode"}:
        raise ValueError("options: want mode=%s" % "|".join(MODES))
    return mode


def query(options):
    parse(options)
    version, build = tc.identity("pplx_kernels")
    return {"memory": "cuda", "layout": "expert", "dtypes": ["bf16"],
            "order": "any", "lib_name": "pplx-kernels",
            "lib_version": version, "lib_build": build,
            "options": "mode=intranode|internode  AllToAll.intranode (NVLink) "
                       "or .internode"}


def _nvshmem(env, group, nvshmem, Device):
    """NVSHMEM over the group: rank 0's unique id to every rank."""
    import torch.distributed as dist
    dev = Device(env.cuda_device)
    dev.set_current()
    uid = [nvshmem.get_unique_id() if env.rank == 0
           else nvshmem.get_unique_id(empty=True)]
    dist.broadcast_object_list(uid, src=0, group=group)
    nvshmem.init(device=dev, uid=uid[0], rank=env.rank, nranks=env.world,
                 initializer_method="uid")


class Engine:
    def __init__(self, env, mode):
        torch, pplx, nvshmem, cuda_core = tc.need(
            "pplx-kernels", "torch", "pplx_kernels", "nvshmem.core",
            "cuda.core.experimental")
        self.torch, self.env = torch, env
        group = tc.group(env)
        self.stream = tc.stream(env)
        _nvshmem(env, group, nvshmem, cuda_core.Device)
        make = pplx.AllToAll.intranode if mode == "intranode" \
            else pplx.AllToAll.internode
        self.M = max(env.max_tokens, 1)
        self.ata = make(max_num_tokens=self.M, num_experts=env.experts,
                        experts_per_token=env.topk, rank=env.rank,
                        world_size=env.world, dp_size=1, hidden_dim=env.hidden,
                        hidden_dim_bytes=env.hidden * 2,
                        hidden_dim_scale_bytes=0)
        self.keep = None

    def dispatch(self, inp):
        torch, e = self.torch, self.env
        with torch.cuda.stream(self.stream):
            idx = tc.tensor(inp.topk_idx)
            if inp.tokens and bool((idx < 0).any()):
                tc.skip("pplx-kernels takes no masked top-k slots (its "
                        "indices are uint32)")
            idx = idx.to(torch.uint32)
            n = torch.empty(e.local_experts, dtype=torch.int32, device="cuda")
            rx = torch.empty((e.local_experts, self.M * e.world, e.hidden),
                             dtype=torch.bfloat16, device="cuda")
            bound = torch.tensor([inp.tokens], dtype=torch.uint32,
                                 device="cuda")
            self.ata.dispatch(out_expert_num_tokens=n, out_expert_x=rx,
                              out_expert_x_scale=None, dp_x=tc.tensor(inp.x),
                              dp_x_scale=None, indices=idx, bound_m=bound)
        self.keep = (idx, bound, rx, n)
        return {"stride": self.M * e.world, "count": n,
                "x": rx.view(-1, e.hidden)}

    def combine(self, inp, y, out):
        torch, e = self.torch, self.env
        idx, bound = self.keep[:2]
        yt = tc.tensor(y).view(e.local_experts, self.M * e.world, e.hidden)
        with torch.cuda.stream(self.stream):
            full = torch.empty((self.M, e.hidden), dtype=torch.bfloat16,
                               device="cuda")
            self.ata.combine(out_tokens=full, indices=idx,
                             weights=tc.tensor(inp.topk_w), expert_y=yt,
                             bound_m=bound)
            tc.tensor(out).copy_(full[:inp.tokens])

    def destroy(self):
        self.keep = None
        self.ata.destroy()


def create(env):
    mode = parse(env.options)
    if env.world < 2:
        tc.skip("pplx-kernels needs at least two DP groups (AllToAll asserts "
                "world_size // dp_size > 1; each epgate rank is one DP "
                "group): W=%d cannot run" % env.world)
    return Engine(env, mode)


def dispatch(engine, inp):
    return engine.dispatch(inp)


def combine(engine, inp, y, out):
    engine.combine(inp, y, out)


def destroy(engine):
    engine.destroy()
    tc.drop_stream_cache(engine)
