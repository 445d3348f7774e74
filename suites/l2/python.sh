#!/bin/sh
# The Python bridge over several ranks (L2, one rank per process, the
# adapter's collectives over epgate's bootstrap; docs/python.md): the
# numpy reference adapter passes the world-2, -3 and -4 matrices bit for
# bit (the flat layout at every world, the rank-major and expert-major
# ones at one each); its planted faults end with the right verdict in
# every workload where the last rank has rows to spoil: a wrong combine
# weight on combine, a dropped row on missing_rows, a declared fixed
# order summed in an order that changes every call on combine_repeat; an
# exception in one rank ends the job (exit 1) with the adapter's message
# in that rank's log; nothing is left running.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/py-lib.sh"
if ! "$EG_PYTHON" -c 'import numpy' 2>/dev/null; then
	echo "1..0 # SKIP numpy is not importable by $EG_PYTHON (apt-get install python3-numpy)"
	exit 0
fi
py_need_l2rank
matrix=$EG_SRCDIR/fixtures/workloads/l2-matrix.ini
job() { # name world spec filter [iterations]
	rm -f "$EG_TMP/$1.jsonl"
	"$EG_EPGATE" launch -n "$2" --timeout 240 -- \
		"$EG_EPGATE" l2-rank --engine "plugin:python,$3" --iters "${5:-2}" \
		--workload "$matrix" --filter "$4" \
		--results "$EG_TMP/$1.jsonl" >"$EG_TMP/$1.out" 2>&1
}

# the flat layout at every world, two iterations (a stale row shows);
# the other layouts once
while read -r W opts iters; do
	[ "$opts" = - ] && opts=
	n=$(grep -c "^\[w$W-" "$matrix")
	job ok "$W" "module=numpy_ep$opts" "w$W-" "$iters"
	rc=$?
	p=$(count ok '"status":"pass"')
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "$W ranks, numpy_ep${opts:-,layout=flat}: $p of $n workloads bit-exact"
	else
		eg_not_ok "$W ranks, numpy_ep$opts: exit $rc, $p of $n pass"
		grep -v '"status":"pass"' "$EG_TMP/ok.jsonl" 2>/dev/null | cut -c1-200 | head -n 5 | sed 's/^/# /'
		tail -n 15 "$EG_TMP/ok.out" | sed 's/^/# /'
	fi
done <<'LIST'
2 - 2
3 - 2
4 - 2
3 ,layout=expert 1
4 ,layout=rank,keys=content 1
LIST

# wrong results: every workload reported, those where the last rank has
# something to spoil failed on the field, none an error
while read -r fault opts filter field; do
	[ "$opts" = - ] && opts=
	n=$(grep -c "^\[$filter" "$matrix")
	job wrong 3 "module=numpy_ep_faulty,fault=$fault$opts" "$filter" 1
	rc=$?
	all=$(wc -l <"$EG_TMP/wrong.jsonl" 2>/dev/null || echo 0)
	bad=$(count wrong "\"status\":\"fail\".*\"$field\":[1-9]")
	if [ "$rc" -eq 1 ] && [ "$all" -eq "$n" ] && [ "$bad" -ge 1 ] &&
		[ "$bad" -ge $((n / 2)) ] &&
		! grep -q '"status":"error"' "$EG_TMP/wrong.jsonl" && ! leftovers; then
		eg_ok "3 ranks, fault $fault$opts: $all workloads reported, $bad failed on $field"
	else
		eg_not_ok "3 ranks, fault $fault$opts: exit $rc, $all of $n reported, $bad failed on $field"
		tail -n 15 "$EG_TMP/wrong.out" | sed 's/^/# /'
	fi
done <<'LIST'
weight - w3- combine
drop - w3- missing_rows
vary ,layout=rank w3-e6-rand-fp32 combine_repeat
LIST

# an exception in one rank's adapter: the job ends with exit 1 (a failure
# of the library under test, as in L1; 99 is epgate's own), its message
# in the log
ad=$EG_TMP/adapters
mkdir -p "$ad"
cat >"$ad/lastraises.py" <<'PY'
import numpy_ep as ref
query, combine, destroy = ref.query, ref.combine, ref.destroy
def create(env):
    return ref.create(env), env.rank + 1 == env.world
def dispatch(state, inp):
    if state[1]:
        raise RuntimeError("planted: the last rank's adapter gives up")
    return ref.dispatch(state[0], inp)
def combine(state, inp, y, out):
    ref.combine(state[0], inp, y, out)
PY
job raise 3 "module=lastraises,path=$ad" w3-base
rc=$?
want="adapter lastraises: RuntimeError: planted: the last rank's adapter gives up (lastraises.py:7 in dispatch)"
if [ "$rc" -eq 1 ] && grep -q -- "$want" "$EG_TMP/raise.out" &&
	! grep -q '^\[launch\] deadline 240.0 s expired' "$EG_TMP/raise.out" && ! leftovers; then
	eg_ok "3 ranks, an adapter that raises: exit 1 (the library's failure, not the harness's 99), $(grep -m1 -o "rank [0-9]*: plugin python: dispatch: adapter lastraises: RuntimeError: planted.*" "$EG_TMP/raise.out" | cut -c1-110)"
else
	eg_not_ok "3 ranks, an adapter that raises: exit $rc, no \"$want\""
	tail -n 15 "$EG_TMP/raise.out" | sed 's/^/# /'
fi
# beyond the declared limits (max_topk 3): every rank declines at create,
# a skip saying why (as check's L1), never a failure; only skips: 77
cat >"$EG_TMP/narrow_ep.py" <<'PY'
from numpy_ep import create, dispatch, combine, destroy, declare, parse
def query(options):
    d = declare(parse(options))
    d["max_topk"] = 3
    return d
PY
job narrow 2 "module=narrow_ep,path=$EG_TMP" w2- 1
rc=$?
n=$(grep -c "^\[w2-" "$matrix")
big=$(awk '/^\[w2-/ { w = 1; next } /^\[/ { w = 0 } w && /^topk *= *([4-9]|[1-9][0-9])/ { n++ } END { print n + 0 }' "$matrix")
sk=$(count narrow '"status":"skip"')
p=$(count narrow '"status":"pass"')
if [ "$rc" -eq 0 ] && [ "$big" -gt 0 ] && [ "$sk" -eq "$big" ] &&
	[ "$p" -eq $((n - big)) ] &&
	grep -q "top-k 4 above its limit 3" "$EG_TMP/narrow.jsonl"; then
	eg_ok "2 ranks, max_topk 3: $sk of $n workloads skipped saying why, $p pass, exit 0"
else
	eg_not_ok "2 ranks, max_topk 3: exit $rc, $sk skipped (want $big), $p pass (want $((n - big)))"
	tail -n 10 "$EG_TMP/narrow.out" | sed 's/^/# /'
fi
job narrow 2 "module=narrow_ep,path=$EG_TMP" w2-base 1
rc=$?
if [ "$rc" -eq 77 ] && [ "$(count narrow '"status":"skip"')" -eq 1 ]; then
	eg_ok "2 ranks, every workload declined: exit 77"
else
	eg_not_ok "2 ranks, every workload declined: exit $rc (want 77)"
fi

# the adapter's atexit functions run at every rank's exit (the bridge
# never finalizes Python; torch's NCCL watchdog, left running, aborted a
# rank at exit): each rank writes its mark
cat >"$EG_TMP/atexit_ep.py" <<'PY'
import atexit, os
from numpy_ep import query, create, dispatch, combine, destroy
def _mark(path=os.environ["EG_ATEXIT_MARK"]):
    with open("%s.%d" % (path, os.getpid()), "w") as f:
        f.write("ran\n")
atexit.register(_mark)
PY
rm -f "$EG_TMP"/mark.*
export EG_ATEXIT_MARK="$EG_TMP/mark"
job atexit 2 "module=atexit_ep,path=$EG_TMP" w2-base 1
rc=$?
marks=$(ls "$EG_TMP"/mark.* 2>/dev/null | wc -l)
if [ "$rc" -eq 0 ] && [ "$marks" -eq 2 ]; then
	eg_ok "2 ranks: the adapter's atexit functions ran at each rank's exit"
else
	eg_not_ok "2 ranks, atexit: exit $rc, $marks of 2 ranks ran the adapter's atexit functions"
	tail -n 10 "$EG_TMP/atexit.out" | sed 's/^/# /'
fi

eg_done
