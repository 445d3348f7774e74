"""DeepEP through the Python bridge (docs/python.md, "DeepEP"), each of its
modes an option:

    --engine plugin:python,module=deepep[,mode=elastic|intranode|internode|ll]
             [,deterministic=0|1][,sms=N][,qps=N]

mode=elastic    (default) DeepEP V2's ElasticBuffer, dispatch and combine
                without the expanded layout: flat rows with their source
                (recv_src_metadata) and local top-k slots; combine sums them
mode=intranode  the legacy Buffer's normal mode over NVLink (2, 4, 8 ranks)
mode=internode  the legacy Buffer's normal mode across nodes (RDMA)
mode=ll         the legacy Buffer's low-latency mode: [local experts, W x B,
                hidden] rows, combine weighing them (NVSHMEM)
deterministic=1 (elastic) ElasticBuffer(deterministic=True): declared as a
                fixed combine order, which epgate then checks
sms=N           (elastic) the SMs of dispatch and combine (0: DeepEP's own
                analytic count)
qps=N           (elastic) the RDMA QPs dispatch and combine spread their
                puts over: num_qps of ElasticBuffer.dispatch/combine, GIN
                contexts of its one NCCL device communicator (the buffer
                allocates num_allocated_qps of them, ginContextCount in
                csrc/kernels/backend/nccl.cu); 0: DeepEP's own count
                (get_theoretical_num_qps).  The knob the field report's
                multi-comm axis turns, as far as upstream DeepEP has one

The limits declared are DeepEP's own asserts (dd758ca): a case beyond one
is skipped with the reason, before DeepEP is called. When torch or deep_ep
cannot be imported, create skips with the ImportError's text.
"""
import deepep_legacy as legacy
import torch_common as tc

MODES = ("elastic", "intranode", "internode", "ll")
# ElasticBuffer (csrc/elastic/buffer.hpp, deep_ep/include/.../layout.cuh)
ELASTIC_MAX_TOPK = 32  # kNumTopk <= 32 in its dispatch kernels
ELASTIC_MAX_EXPERTS = 2048  # kNumMaxExperts
ELASTIC_MAX_LOCAL = 256  # kNumMaxExpertsPerRank
ELASTIC_MAX_RANKS = 1024  # kNumMaxRanks
ELASTIC_MAX_SMS = 160  # kNumMaxSMs
ELASTIC_OPTIONS = ("mode", "deterministic", "sms", "qps")


def parse(options):
    o = {"mode": options.get("mode", "elastic"),
         "deterministic": tc.flag(options, "deterministic", "0"),
         "sms": tc.number(options, "sms", "0"),
         "qps": tc.number(options, "qps", "0")}
    if o["mode"] not in MODES:
        raise ValueError("option mode=%s: want mode=%s"
                         % (o["mode"], "|".join(MODES)))
    unknown = set(options) - set(ELASTIC_OPTIONS)
    if unknown:
        raise ValueError("unknown option %s (want mode=%s, deterministic=0|1, "
                         "sms=N, qps=N)" % (sorted(unknown)[0],
                                            "|".join(MODES)))
    if o["mode"] != "elastic" and (o["deterministic"] or o["sms"] or
                                   o["qps"]):
        raise ValueError("deterministic=, sms= and qps= are options of "
                         "mode=elastic")
    if o["sms"] > ELASTIC_MAX_SMS:
        raise ValueError("option sms=%d: DeepEP takes at most %d"
                         % (o["sms"], ELASTIC_MAX_SMS))
    return o


def query(options):
    o = parse(options)
    if o["mode"] == "elastic":
        caps = {"memory": "cuda", "layout": "flat", "dtypes": ["bf16"],
                "order": "fixed" if o["deterministic"] else "any",
                "flags": ["input_idx64"], "max_topk": ELASTIC_MAX_TOPK,
                "max_experts": ELASTIC_MAX_EXPERTS,
                "max_world": ELASTIC_MAX_RANKS, "hidden_multiple": 8}
    else:
        caps = legacy.declare(o["mode"])
    version, build = tc.identity("deep_ep")
    caps.update(lib_name="DeepEP", lib_version=version, lib_build=build,
                options="mode=elastic|intranode|internode|ll  the DeepEP "
                        "interface (elastic: V2 ElasticBuffer)\n"
                        "deterministic=0|1  elastic: DeepEP's deterministic "
                        "mode (declared a fixed combine order)\n"
                        "sms=N  elastic: SMs of dispatch and combine (0: "
                        "DeepEP's choice)\n"
                        "qps=N  elastic: RDMA QPs (GIN contexts) of dispatch "
                        "and combine (0: DeepEP's choice)")
    return caps


class Elastic:
    """V2: ElasticBuffer.dispatch (not expanded, CPU-synced counts) and
    combine of its handle."""

    def __init__(self, env, o, deep_ep):
        import torch
        self.torch, self.env, self.o = torch, env, o
        if env.local_experts > ELASTIC_MAX_LOCAL:
            tc.skip("DeepEP ElasticBuffer takes at most %d experts per rank "
                    "(kNumMaxExpertsPerRank); %d here"
                    % (ELASTIC_MAX_LOCAL, env.local_experts))
        self.idx_t = deep_ep.topk_idx_t
        self.group = tc.group(env)
        self.stream = tc.stream(env)
        with torch.cuda.stream(self.stream):
            self.buf = deep_ep.ElasticBuffer(
                self.group, num_max_tokens_per_rank=max(env.max_tokens, 1),
                hidden=env.hidden, num_topk=env.topk,
                deterministic=o["deterministic"], explicitly_destroy=True)
        # DeepEP asserts num_qps <= num_allocated_qps in dispatch
        if o["qps"] > self.buf.num_allocated_qps:
            n = self.buf.num_allocated_qps
            self.buf.destroy()
            tc.skip("DeepEP ElasticBuffer allocated %d QPs; qps=%d is more "
                    "(num_qps <= num_allocated_qps)" % (n, o["qps"]))
        self.keep = None

    def dispatch(self, inp):
        torch, e = self.torch, self.env
        M = max(e.max_tokens, 1)
        with torch.cuda.stream(self.stream):
            x = tc.tensor(inp.x)
            idx = tc.tensor(inp.topk_idx, self.idx_t)
            w = tc.tensor(inp.topk_w)
            with e.library():  # DeepEP's own call (docs/metrics.md)
                rx, ridx, rw, handle, _ = self.buf.dispatch(
                    x, topk_idx=idx, topk_weights=w,
                    num_experts=e.experts, num_max_tokens_per_rank=M,
                    num_sms=self.o["sms"], num_qps=self.o["qps"],
                    do_cpu_sync=True)
            n = rx.shape[0]
            # src_token_global_idx = source rank x M + its token index
            g = handle.recv_src_metadata[:n, 0].to(torch.int64)
            src = (g // M).to(torch.int32)
            tok = (g % M).to(torch.int32)
        res = {"stride": n, "rows": n, "x": rx, "src_rank": src,
               "src_token": tok, "topk_idx": ridx, "topk_w": rw}
        self.keep = (res, handle)
        return res

    def combine(self, inp, y, out):
        torch = self.torch
        res, handle = self.keep
        with torch.cuda.stream(self.stream):
            yy = tc.tensor(y)[:res["rows"]]
            with self.env.library():
                cx, _, _ = self.buf.combine(yy, handle=handle,
                                            num_sms=self.o["sms"],
                                            num_qps=self.o["qps"])
            tc.tensor(out).copy_(cx)

    def destroy(self):
        self.keep = None
        self.buf.destroy()


def create(env):
    o = parse(env.options)
    if o["mode"] != "elastic":
        legacy.check_shape(env, o["mode"], "DeepEP")
    torch, deep_ep = tc.need("DeepEP", "torch", "deep_ep")
    if not torch.cuda.is_available():
        tc.skip("DeepEP needs a CUDA device; torch sees none")
    if o["mode"] == "elastic":
        return Elastic(env, o, deep_ep)
    cls = legacy.LowLatency if o["mode"] == "ll" else legacy.Normal
    return cls(env, deep_ep.Buffer, "DeepEP", deep_ep.topk_idx_t)


def dispatch(engine, inp):
    return engine.dispatch(inp)


def combine(engine, inp, y, out):
    engine.combine(inp, y, out)


def destroy(engine):
    engine.destroy()
    tc.drop_stream_cache(engine)
