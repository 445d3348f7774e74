"""UCCL-EP through the Python bridge (docs/python.md, "pplx-kernels and
UCCL-EP"), written to its public API: the DeepEP-compatible Buffer of its
deep_ep wrapper (uccl-project/uccl, ep/deep_ep_wrapper) over uccl.ep.

    --engine plugin:python,module=uccl_ep[,mode=intranode|internode|ll]

The modes are those of DeepEP's legacy Buffer (deepep_legacy.py, the
same code): normal mode intranode (2, 4 or 8 ranks) or across nodes, and
low latency. UCCL-EP runs on 2, 4 or 8 ranks: at W=1 every case is
skipped saying so.
"""
import os

import deepep_legacy as legacy
import torch_common as tc

MODES = ("intranode", "internode", "ll")
WORLDS = (2, 4, 8)


def parse(options):
    mode = options.get("mode", "intranode")
    if mode not in MODES or set(options) - {"mode"}:
        raise ValueError("options: want mode=%s" % "|".join(MODES))
    return mode


def query(options):
    caps = legacy.declare(parse(options))
    version, build = tc.identity("uccl")
    caps.update(lib_name="UCCL-EP", lib_version=version, lib_build=build,
                options="mode=intranode|internode|ll  the Buffer mode")
    return caps


def create(env):
    mode = parse(env.options)
    if mode != "internode" and env.world not in WORLDS:
        tc.skip("UCCL-EP runs on %s ranks (its intranode kernels and proxy "
                "setup); W=%d cannot run"
                % ("/".join(map(str, WORLDS)), env.world))
    legacy.check_shape(env, mode, "UCCL-EP")
    os.environ.setdefault("LOCAL_RANK", str(env.local_rank))
    os.environ.setdefault("LOCAL_WORLD_SIZE", str(env.local_size))
    torch, _, wrapper = tc.need("UCCL-EP", "torch", "uccl.ep", "deep_ep")
    if not hasattr(wrapper, "initialize_uccl"):
        tc.skip("the deep_ep module on sys.path (%s) is DeepEP's, not "
                "UCCL-EP's wrapper (ep/deep_ep_wrapper)"
                % getattr(wrapper, "__file__", "?"))
    cls = legacy.LowLatency if mode == "ll" else legacy.Normal
    return cls(env, wrapper.Buffer, "UCCL-EP")


def dispatch(engine, inp):
    return engine.dispatch(inp)


def combine(engine, inp, y, out):
    engine.combine(inp, y, out)


def destroy(engine):
    engine.destroy()
    tc.drop_stream_cache(engine)
