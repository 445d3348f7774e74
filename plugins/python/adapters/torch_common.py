"""What the adapters of torch-based EP libraries share (DeepEP, UCCL-EP,
pplx-kernels, and epgate's own torch_ep; docs/python.md): the import
guard that turns a library that is not importable into a skip with the
ImportError's text, the library's identity without importing it, a
torch.distributed group over epgate's bootstrap (gloo on the host, NCCL
on a GPU), epgate's arrays as torch tensors and its stream as torch's.

Nothing here imports torch at module level: query runs in the process
that forks each case (L1), and a CUDA runtime started before the fork
does not survive it.
"""
import atexit
import datetime
import importlib
import importlib.util
import os
import re
import socket


def skip(why):
    """The case is not supported: NotImplementedError is the bridge's
    "not supported" (a skip with this reason)."""
    raise NotImplementedError(why)


def need(lib, *modules):
    """The modules imported, or a skip naming the library and the
    ImportError (or whatever the import raised)."""
    out = []
    for m in modules:
        try:
            out.append(importlib.import_module(m))
        except Exception as e:  # an extension may raise anything at import
            skip("%s is not importable here: %s: %s"
                 % (lib, type(e).__name__, " ".join(str(e).split())))
    return out


def identity(package, default_version="?"):
    """(version, build) of an installed or in-place package, read from its
    files without importing it: __version__ in its __init__.py, and the
    commit of the source tree it sits in (.git/HEAD or a COMMIT file)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return "not importable", "package %s not found on sys.path" % package
    version = default_version
    try:
        with open(spec.origin) as f:
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", f.read(), re.M)
            version = m.group(1) if m else version
    except OSError:
        pass
    root = os.path.dirname(os.path.dirname(spec.origin))
    return version, "%s at %s" % (_commit(root), os.path.dirname(spec.origin))


def _commit(root):
    try:
        with open(os.path.join(root, "COMMIT")) as f:
            return "commit " + f.read().split()[0]
    except (OSError, IndexError):
        pass
    try:
        with open(os.path.join(root, ".git", "HEAD")) as f:
            head = f.read().strip()
        if head.startswith("ref: "):
            with open(os.path.join(root, ".git", head[5:])) as f:
                head = f.read().strip()
        return "commit " + head[:12]
    except OSError:
        return "commit unknown"


_GROUP = None


def group(env):
    """torch.distributed's default group over env's world, made once per
    process, its TCP store at an address rank 0 sends over epgate's
    bootstrap. The backend follows the memory space: NCCL where epgate
    bound a CUDA device (eager: the device is bound), gloo on the host."""
    global _GROUP
    torch, dist = need("torch", "torch", "torch.distributed")
    if _GROUP is not None:
        return _GROUP
    cuda = env.cuda_device >= 0
    if cuda:
        torch.cuda.set_device(env.cuda_device)
    addr = b""
    if env.rank == 0:
        host = os.environ.get("EPGATE_TORCH_ADDR") or (
            "127.0.0.1" if env.local_size == env.world
            else socket.gethostbyname(socket.gethostname()))
        with socket.socket() as s:
            s.bind((host, 0))
            addr = ("%s:%d" % (host, s.getsockname()[1])).encode()
    addr = env.bcast(addr.ljust(256), 0).rstrip().decode()
    # generous: the peers import torch at their own pace on a loaded host,
    # and the store's clients retry until then (no sleep of ours)
    kw = {"timeout": datetime.timedelta(seconds=max(env.timeout_s, 60))}
    if cuda:
        kw["device_id"] = torch.device("cuda", env.cuda_device)
    dist.init_process_group("nccl" if cuda else "gloo",
                            init_method="tcp://" + addr, rank=env.rank,
                            world_size=env.world, **kw)
    _GROUP = dist.distributed_c10d._get_default_group()
    # torch wants the group destroyed before the process exits: its NCCL
    # watchdog, left running, aborted a rank at exit (the bridge runs
    # Python's atexit functions at the process's exit)
    atexit.register(_close)
    return _GROUP


def _close():
    import torch.distributed as dist
    if dist.is_initialized():
        dist.destroy_process_group()


def stream(env):
    """epgate's stream as a torch stream (the library's work is ordered on
    it: `with torch.cuda.stream(s):`)."""
    import torch
    return torch.cuda.ExternalStream(env.cuda_stream,
                                     device=torch.device("cuda", env.cuda_device))


def drop_stream_cache(engine=None):
    """At an instance's destroy, after the library's: torch's caching
    allocator files each freed block under the stream it was cut for and
    reuses it on that stream only, and epgate gives every instance a new
    stream (its CUDA space's, destroyed with the instance), so what an
    instance's tensors took would stay reserved for a stream that no
    longer exists: a 20 MiB and a 2 MiB segment a new stream at DeepEP's
    128 x 7168 (+15.4 MiB an instance on average on one H100), which
    stress's instance check then charged to the library. empty_cache()
    gives back blocks nothing references; a tensor the library still
    holds stays, and is still found. engine:
    the adapter's instance, whose own references (outputs kept for the
    next call, handles) are dropped first: the instance is over.
    EPGATE_TORCH_KEEP_CACHE=1 leaves torch's cache as it is: the other
    arm of an A/B of this function (docs/perf-notes.md)."""
    import gc
    import sys
    if engine is not None:
        vars(engine).clear()
    torch = sys.modules.get("torch")
    if (torch is None or not torch.cuda.is_initialized() or
            os.environ.get("EPGATE_TORCH_KEEP_CACHE") == "1"):
        return
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def tensor(a, dtype=None):
    """An epgate.Array as a torch tensor, no copy (DLPack); fp8 (uint8 in
    DLPack) viewed as float8_e4m3fn."""
    import torch
    t = torch.from_dlpack(a)
    if a.dtype == "fp8":
        t = t.view(torch.float8_e4m3fn)
    return t if dtype is None else t.to(dtype)


def flag(options, key, default):
    v = options.get(key, default)
    if v not in ("0", "1"):
        raise ValueError("option %s=%s: want 0 or 1" % (key, v))
    return v == "1"


def number(options, key, default, lo=0):
    try:
        v = int(options.get(key, default))
    except ValueError:
        v = lo - 1
    if v < lo:
        raise ValueError("option %s=%s: want an integer >= %d"
                         % (key, options.get(key), lo))
    return v
