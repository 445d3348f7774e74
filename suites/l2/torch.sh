#!/bin/sh
# The torch reference adapter over ranks (L2, one rank per process;
# docs/python.md): torch_ep's collectives run over the torch.distributed
# group of torch_common.group() -- gloo here, the code the DeepEP, pplx
# and UCCL-EP adapters share -- at world 2, 3 and 4 and across two
# virtual nodes, bit for bit over the L2 matrix; its planted faults fail
# through the bridge with the right verdict: a combine summed in another
# order on one rank (combine, random fp32 data, on one node and across
# two), a receive buffer reused across steps (dispatch's x at the second
# iteration), a rank that raises on zero tokens (exit 1 with torch's
# message, in seconds: no rank left waiting in a collective); nothing is
# left running. Skips where torch is not importable by the bridge's
# interpreter.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/py-lib.sh"
py_need_torch
py_need_l2rank
matrix=$EG_SRCDIR/fixtures/workloads/l2-matrix.ini
job() { # name world ranks-per-node spec filter [iterations]
	rm -f "$EG_TMP/$1.jsonl"
	"$EG_EPGATE" launch -n "$2" --ranks-per-node "$3" --timeout 240 -- \
		"$EG_EPGATE" l2-rank --engine "plugin:python,$4" --iters "${6:-2}" \
		--workload "$matrix" --filter "$5" \
		--results "$EG_TMP/$1.jsonl" >"$EG_TMP/$1.out" 2>&1
}

# every world of the matrix's first three, two iterations (a stale row
# shows); two virtual nodes (the store's address is the host's, not
# loopback); the other layouts once
while read -r W per opts iters; do
	[ "$opts" = - ] && opts=
	n=$(grep -c "^\[w$W-" "$matrix")
	job ok "$W" "$per" "module=torch_ep$opts" "w$W-" "$iters"
	rc=$?
	p=$(count ok '"status":"pass"')
	nodes=$((W / per))
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ] && ! leftovers; then
		eg_ok "$W ranks on $nodes node(s), torch_ep${opts:-,layout=flat}: $p of $n workloads bit-exact"
	else
		eg_not_ok "$W ranks on $nodes node(s), torch_ep$opts: exit $rc, $p of $n pass"
		grep -v '"status":"pass"' "$EG_TMP/ok.jsonl" 2>/dev/null | cut -c1-200 | head -n 5 | sed 's/^/# /'
		tail -n 15 "$EG_TMP/ok.out" | sed 's/^/# /'
	fi
done <<'LIST'
2 2 - 2
3 3 - 2
4 4 - 2
4 2 - 2
3 3 ,layout=expert 1
4 2 ,layout=rank,keys=content 1
LIST

# a combine summed in another order on the last rank, the canonical one
# declared: wrong bits where order shows (random fp32), one node or two
while read -r W per; do
	job order "$W" "$per" "module=torch_ep_faulty,fault=order" "w$W-e6-rand-fp32" 1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q '"status":"fail".*"stage":"combine".*"combine":[1-9]' "$EG_TMP/order.jsonl" &&
		grep -q "\"field\":\"combine\",\"rank\":$((W - 1))," "$EG_TMP/order.jsonl" && ! leftovers; then
		eg_ok "$W ranks on $((W / per)) node(s), fault order: w$W-e6-rand-fp32 fails on rank $((W - 1))'s combine, $(grep -o '"combine":[0-9]*' "$EG_TMP/order.jsonl" | head -n 1)"
	else
		eg_not_ok "$W ranks, fault order: exit $rc, no combine failure on rank $((W - 1))"
		cut -c1-300 "$EG_TMP/order.jsonl" 2>/dev/null | sed 's/^/# /'
		tail -n 15 "$EG_TMP/order.out" | sed 's/^/# /'
	fi
done <<'LIST'
3 3
4 2
LIST

# a stale receive buffer: the first step right, the second wrong on x,
# in every workload where the last rank receives rows
n=$(grep -c '^\[w3-' "$matrix")
job stale 3 3 "module=torch_ep_faulty,fault=stale" w3- 2
rc=$?
all=$(wc -l <"$EG_TMP/stale.jsonl" 2>/dev/null || echo 0)
bad=$(count stale '"status":"fail".*"stage":"dispatch","iteration":1,"wrong":{"x":[1-9]')
if [ "$rc" -eq 1 ] && [ "$all" -eq "$n" ] && [ "$bad" -ge $((n / 2)) ] &&
	! grep -q '"iteration":0' "$EG_TMP/stale.jsonl" &&
	! grep -q '"status":"error"' "$EG_TMP/stale.jsonl" && ! leftovers; then
	eg_ok "3 ranks, fault stale: $all workloads reported, $bad failed on x at iteration 1"
else
	eg_not_ok "3 ranks, fault stale: exit $rc, $all of $n reported, $bad failed on x at iteration 1"
	tail -n 15 "$EG_TMP/stale.out" | sed 's/^/# /'
fi

# a rank that raises on zero tokens: exit 1 (the library's failure),
# its message in the log, before any deadline
job zero 3 3 "module=torch_ep_faulty,fault=zero" w3-zero-rank1 1
rc=$?
want="rank 1: plugin python: dispatch: adapter torch_ep_faulty: RuntimeError: max(): .*(torch_ep_faulty.py:[0-9]* in dispatch)"
if [ "$rc" -eq 1 ] && grep -q -- "$want" "$EG_TMP/zero.out" &&
	grep -q '"status":"fail"' "$EG_TMP/zero.jsonl" &&
	! grep -q 'deadline .* expired\|Timed out' "$EG_TMP/zero.out" && ! leftovers; then
	eg_ok "3 ranks, fault zero: exit 1, $(grep -m1 -o 'rank 1: plugin python: dispatch: adapter torch_ep_faulty: RuntimeError: max().\{0,30\}' "$EG_TMP/zero.out")"
else
	eg_not_ok "3 ranks, fault zero: exit $rc, no \"$want\""
	grep -v '^\[[0-9]\] python adapter' "$EG_TMP/zero.out" | tail -n 15 | sed 's/^/# /'
fi
eg_done
