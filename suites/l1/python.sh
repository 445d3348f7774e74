#!/bin/sh
# The Python bridge in process (L1, world 1; docs/python.md): the numpy
# reference adapter passes the world-1 matrix bit for bit in every layout
# and key mode, found by name (plugin:python); its planted faults (a
# wrong combine weight, a dropped row, a declared fixed order summed in a
# varying one, an error beyond the declared bound) each end their case
# on the right field; an adapter that raises, or returns a wrong array,
# fails naming adapter, phase and line; a module that is missing, lacks a
# function or declares nonsense is refused with exit 99; the GPU
# libraries' adapters (DeepEP, pplx-kernels, UCCL-EP) load, declare their
# limits and, where their library cannot be imported, refuse with the
# ImportError's text.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/py-lib.sh"
matrix=$EG_SRCDIR/fixtures/workloads/plugin-w1.ini
n=$(grep -c '^\[' "$matrix")

if "$EG_PYTHON" -c 'import numpy' 2>/dev/null; then
	have_numpy=1
else
	have_numpy=0
fi

# ---- the reference adapter, every layout and key mode -----------------
for opts in "" ",layout=rank" ",layout=expert" ",keys=content" \
	",layout=rank,keys=content" ",layout=expert,keys=content"; do
	if [ "$have_numpy" -eq 0 ]; then
		eg_ok "numpy_ep$opts # SKIP numpy is not importable by $EG_PYTHON (apt-get install python3-numpy)"
		continue
	fi
	check ref "module=numpy_ep$opts" --workload "$matrix"
	p=$(grep -c '^ok' "$EG_TMP/ref.tap")
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "numpy_ep${opts:-,layout=flat}: $p of $n world-1 workloads bit-exact"
	else
		eg_not_ok "numpy_ep$opts: exit $rc, $p of $n pass"
		show ref
	fi
done

# a fixed order (expert-major: the slots ascending, every call) holds on
# random fp32 data run twice; so does "any", within the bound
for opts in ",layout=expert" ",order=any" ",layout=rank,order=fixed"; do
	[ "$have_numpy" -eq 0 ] && { eg_ok "numpy_ep$opts random # SKIP no numpy"; continue; }
	check ord "module=numpy_ep$opts" $rand
	if [ "$rc" -eq 0 ]; then
		eg_ok "numpy_ep$opts on random fp32, run twice where fixed: passes"
	else
		eg_not_ok "numpy_ep$opts on random fp32: exit $rc"
		show ord
	fi
done

# the 40-line adapter of docs/plugins.md, as printed there
mkdir -p "$EG_TMP/doc"
awk '/<!-- example: one_rank_ep.py -->/ { on = 1; next }
     on && /^```python/ { take = 1; next } take && /^```/ { exit } take' \
	"$EG_SRCDIR/docs/plugins.md" >"$EG_TMP/doc/one_rank_ep.py"
if [ "$have_numpy" -eq 0 ]; then
	eg_ok "docs/plugins.md's example # SKIP no numpy"
else
	check doc "module=one_rank_ep,path=$EG_TMP/doc" --workload "$matrix"
	p=$(grep -v '# SKIP' "$EG_TMP/doc.tap" | grep -c '^ok')
	nf=$(grep -c '^dtype = fp8' "$matrix") # not declared: skipped
	if [ "$rc" -eq 0 ] && [ "$p" -ge $((n - nf)) ]; then
		eg_ok "docs/plugins.md's $(wc -l <"$EG_TMP/doc/one_rank_ep.py")-line adapter: $p of $n bit-exact (fp8 not declared: skipped)"
	else
		eg_not_ok "docs/plugins.md's example adapter: exit $rc, $p of $n pass"
		show doc
	fi
fi

# ---- planted faults: each caught on its field -------------------------
while read -r fault opts data want; do
	[ "$have_numpy" -eq 0 ] && { eg_ok "fault $fault$opts # SKIP no numpy"; continue; }
	[ "$opts" = - ] && opts=
	if [ "$data" = rand ]; then
		check fault "module=numpy_ep_faulty,fault=$fault$opts" $rand
	else
		check fault "module=numpy_ep_faulty,fault=$fault$opts" \
			--workload "$matrix" --filter p1-base --iters 1
	fi
	if [ "$rc" -eq 1 ] && grep -q -- "$want" "$EG_TMP/fault.tap" &&
		grep -q '<failure' "$EG_TMP/fault.xml"; then
		eg_ok "fault $fault$opts caught: $(grep -m1 -o -- "$want.*" "$EG_TMP/fault.tap" | cut -c1-70)"
	else
		eg_not_ok "fault $fault$opts: exit $rc, the report lacks \"$want\""
		show fault
	fi
done <<'LIST'
weight - exact combine: [1-9]
weight ,layout=expert exact combine: [1-9]
drop - exact missing_rows: [1-9]
drop ,layout=expert exact expert_count: [1-9]
vary ,layout=expert rand combine_repeat: [1-9]
bound - rand combine: [1-9]
bound ,bound=2,layout=expert rand combine: [1-9]
LIST
# the same error within a bound declared wide enough passes: the bound
# is the plugin's order_bound times epgate's
if [ "$have_numpy" -eq 1 ]; then
	check wide "module=numpy_ep_faulty,fault=bound,bound=4" $rand
	if [ "$rc" -eq 0 ]; then
		eg_ok "fault bound within order_bound=4: passes (3 x epgate's bound)"
	else
		eg_not_ok "fault bound,bound=4: exit $rc"
		show wide
	fi
else
	eg_ok "order_bound=4 # SKIP no numpy"
fi

# ---- adapters that fail: a clear message naming adapter, phase, line --
ad=$EG_TMP/adapters
mkdir -p "$ad"
cat >"$ad/raises.py" <<'PY'
import numpy_ep as ref
query, create, combine, destroy = ref.query, ref.create, ref.combine, ref.destroy
def dispatch(state, inp):
    raise ValueError("planted: dispatch refuses %d tokens" % inp.tokens)
PY
cat >"$ad/badshape.py" <<'PY'
import numpy as np
import numpy_ep as ref
query, create, combine, destroy = ref.query, ref.create, ref.combine, ref.destroy
def dispatch(state, inp):
    res = ref.dispatch(state, inp)
    res["x"] = res["x"].astype(np.float32)  # a wrong dtype
    return res
PY
cat >"$ad/nodispatch.py" <<'PY'
def query(options): return {"layout": "flat"}
def create(env): return None
def combine(state, inp, y, out): pass
def destroy(state): pass
PY
cat >"$ad/badkey.py" <<'PY'
def query(options): return {"layuot": "flat"}
def create(env): return None
def dispatch(state, inp): pass
def combine(state, inp, y, out): pass
def destroy(state): pass
PY
# DLPack both ways on the host: epgate's arrays read with
# numpy.from_dlpack (the bridge's exporter), the adapter's arrays returned
# as objects that speak DLPack only (its importer)
cat >"$ad/dlpack_ep.py" <<'PY'
import numpy as np
import numpy_ep as ref
query, create, destroy = ref.query, ref.create, ref.destroy
class Only:
    """an array seen through __dlpack__ alone"""
    def __init__(self, a): self.a = a
    def __dlpack__(self, **kw): return self.a.__dlpack__()
    def __dlpack_device__(self): return self.a.__dlpack_device__()
def dispatch(state, inp):
    for a in (inp.x, inp.topk_idx, inp.topk_w):
        if not np.array_equal(np.from_dlpack(a), np.asarray(a)):
            raise AssertionError("from_dlpack differs from the buffer")
    res = ref.dispatch(state, inp)
    return {k: Only(v) if isinstance(v, np.ndarray) else v
            for k, v in res.items()}
def combine(state, inp, y, out):
    ref.combine(state, inp, np.from_dlpack(y), out)
PY
if [ "$have_numpy" -eq 1 ] && "$EG_PYTHON" -c 'import numpy; numpy.from_dlpack' 2>/dev/null; then
	check dl "module=dlpack_ep,path=$ad" --workload "$matrix" --filter p1-fp32
	if [ "$rc" -eq 0 ] && grep -q '^ok' "$EG_TMP/dl.tap"; then
		eg_ok "DLPack on the host: epgate's arrays exported, the adapter's imported (fp32): bit-exact"
	else
		eg_not_ok "DLPack on the host: exit $rc"
		show dl
	fi
else
	eg_ok "DLPack on the host # SKIP numpy without from_dlpack"
fi

while read -r mod want; do
	[ "$have_numpy" -eq 0 ] && { eg_ok "adapter $mod # SKIP no numpy"; continue; }
	check err "module=$mod,path=$ad" --workload "$matrix" --filter p1-base --iters 1
	if [ "$rc" -eq 1 ] && grep -q -- "$want" "$EG_TMP/err.tap"; then
		eg_ok "adapter $mod fails: $(grep -m1 -o -- "adapter $mod.*" "$EG_TMP/err.tap" | cut -c1-110)"
	else
		eg_not_ok "adapter $mod: exit $rc, the report lacks \"$want\""
		show err
	fi
done <<'LIST'
raises dispatch: adapter raises: ValueError: planted: dispatch refuses 16 tokens (raises.py:4 in dispatch)
badshape adapter badshape: dispatch: returned x of 2048 elements of 4 bytes; want 2048 elements (bf16) of 2 bytes
LIST
# the traceback itself goes to the rank's stderr, each line prefixed
if [ "$have_numpy" -eq 1 ]; then
	check err "module=raises,path=$ad" --workload "$matrix" --filter p1-base --iters 1
	if grep -q '^python adapter raises: dispatch: Traceback' "$EG_TMP/err.out" &&
		grep -q '^python adapter raises: dispatch: ValueError: planted' "$EG_TMP/err.out"; then
		eg_ok "the traceback on stderr: $(grep -c '^python adapter raises: dispatch:' "$EG_TMP/err.out") lines 'python adapter raises: dispatch: ...'"
	else
		eg_not_ok "no prefixed traceback of adapter raises on stderr"
		show err
	fi
else
	eg_ok "traceback # SKIP no numpy"
fi

# refused at load: exit 99, the reason on stderr
while read -r spec want; do
	check load "$spec" --world=1
	# said once, by the loader: no "unknown engine" line after it
	if [ "$rc" -eq 99 ] && grep -q -- "$want" "$EG_TMP/load.out" &&
		! grep -q 'unknown engine' "$EG_TMP/load.out"; then
		eg_ok "refused: $spec: $(grep -m1 -o -- "$want.*" "$EG_TMP/load.out" | cut -c1-100)"
	else
		eg_not_ok "$spec: exit $rc, stderr lacks \"$want\""
		tail -n 5 "$EG_TMP/load.out" | sed 's/^/# /'
	fi
done <<LIST
module=no_such_adapter adapter no_such_adapter: cannot import it: ModuleNotFoundError: No module named 'no_such_adapter'
module=nodispatch,path=$ad adapter nodispatch ($ad/nodispatch.py): no function dispatch()
module=badkey,path=$ad adapter badkey: query: unknown key 'layuot'
layout=flat want module=NAME
module=deepep,mode=xx adapter deepep: query: ValueError: option mode=xx: want mode=elastic|intranode|internode|ll
module=pplx,mode=xx adapter pplx: query: ValueError: options: want mode=intranode|internode
module=uccl_ep,mode=xx adapter uccl_ep: query: ValueError: options: want mode=intranode|internode|ll
LIST

# ---- the GPU libraries' adapters: load, declare, refuse cleanly -------
# Loaded through epgate: a shape beyond a declared limit is skipped by
# epgate with the limit, any other (here, without a GPU) before create.
while read -r spec args want; do
	[ "$args" = - ] && args=
	check gpu "$spec" --world=1 $(echo "$args" | tr , ' ')
	if [ "$rc" -eq 77 ] && grep -q "# SKIP .*$want" "$EG_TMP/gpu.tap"; then
		eg_ok "$spec $args: skipped: $(grep -m1 -o 'SKIP.*' "$EG_TMP/gpu.tap" | cut -c6-110)"
	elif [ "$rc" -eq 77 ] && grep -q "# SKIP" "$EG_TMP/gpu.tap" && [ "$want" = any ]; then
		eg_ok "$spec: loads and declares CUDA memory: skipped here ($(grep -m1 -o 'SKIP.*' "$EG_TMP/gpu.tap" | cut -c6-90))"
	else
		eg_not_ok "$spec $args: exit $rc, want a skip saying '$want'"
		show gpu
	fi
done <<'LIST'
module=deepep - any
module=deepep,mode=ll - any
module=pplx - any
module=uccl_ep - any
module=deepep --topk=40,--experts=64 top-k 40 above its limit 32
module=deepep,mode=ll --topk=12,--experts=64 top-k 12 above its limit 11
module=deepep,mode=intranode --dtype=fp32 does not take dtype fp32
LIST
# Their create, run in the bridge's interpreter: a library that is not
# importable is a skip with the ImportError's text; shapes the library
# asserts against are refused before it is imported.
cat >"$ad/probe.py" <<'PY'
import sys, types
import importlib
mod, world, hidden = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
options = dict(kv.split("=") for kv in sys.argv[4:])
a = importlib.import_module(mod)
a.query(options)
env = types.SimpleNamespace(rank=0, world=world, local_rank=0, local_size=world,
    experts=8 * world, local_experts=8, topk=2, hidden=hidden, tokens=16,
    max_tokens=16, total_tokens=16 * world, dtype="bf16", combine_dtype="bf16",
    cuda_device=0, cuda_stream=0, nccl_comm=0, timeout_s=60.0, options=options)
try:
    a.create(env)
    print("created")
except NotImplementedError as e:
    print("skip:", e)
PY
while read -r mod world hidden opts want; do
	[ "$opts" = - ] && opts=
	out=$(PYTHONPATH="$EG_SRCDIR/plugins/python/adapters" "$EG_PYTHON" \
		"$ad/probe.py" "$mod" "$world" "$hidden" $opts 2>&1)
	if printf '%s\n' "$out" | grep -q -- "^skip: .*$want"; then
		eg_ok "$mod $opts at W=$world: $(printf '%s\n' "$out" | tail -n 1 | cut -c1-110)"
	elif printf '%s\n' "$out" | grep -q '^skip: .*not importable' && [ "$want" = "-" ]; then
		eg_ok "$mod $opts at W=$world: $(printf '%s\n' "$out" | tail -n 1 | cut -c1-110)"
	else
		eg_not_ok "$mod $opts at W=$world: want a skip saying '$want', got: $(printf '%s' "$out" | tail -n 1)"
	fi
done <<'LIST'
deepep 1 7168 - is not importable here
deepep 1 7168 mode=ll is not importable here
deepep 1 7168 mode=intranode runs on 2/4/8 ranks only
deepep 1 7168 mode=internode needs more than 8 ranks
deepep 2 1024 mode=ll low-latency kernels exist for hidden
pplx 1 7168 - needs at least two DP groups
pplx 2 7168 - is not importable here
uccl_ep 1 7168 - runs on 2/4/8 ranks
uccl_ep 2 7168 - is not importable here
LIST
eg_done
