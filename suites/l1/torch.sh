#!/bin/sh
# The torch reference adapter in process (L1, world 1; docs/python.md):
# torch_ep, numpy_ep's engine in torch over a gloo group that
# torch_common.group() makes (the code the DeepEP, pplx and UCCL-EP
# adapters use), passes the world-1 matrix bit for bit in every layout
# (keys given and by content); its planted faults end their cases on the
# right field (a stale receive buffer on dispatch's x at the second
# iteration, a rank that raises on zero tokens with torch's own
# message), and the one that needs two sources (a combine summed in
# another order) passes here; a bad option is refused at load. Skips
# where torch is not importable by the bridge's interpreter.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/py-lib.sh"
py_need_torch
matrix=$EG_SRCDIR/fixtures/workloads/plugin-w1.ini
n=$(grep -c '^\[' "$matrix")

# every layout; the keys by content once (numpy_ep's suite takes the
# bridge through the rest)
for opts in "" ",layout=rank" ",layout=expert,keys=content" ",keys=content"; do
	check ref "module=torch_ep$opts" --workload "$matrix"
	p=$(grep -c '^ok' "$EG_TMP/ref.tap")
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "torch_ep${opts:-,layout=flat}: $p of $n world-1 workloads bit-exact"
	else
		eg_not_ok "torch_ep$opts: exit $rc, $p of $n pass"
		show ref
	fi
done
# what it says it is: torch's version and the gloo backend, in the
# evidence of every case
if grep -q "epgate.s reference adapter on torch [0-9].* (gloo)" "$EG_TMP/ref.xml"; then
	eg_ok "the evidence names torch_ep's build: $(grep -m1 -o "epgate.s reference adapter on torch [^&\"<]*" "$EG_TMP/ref.xml")"
else
	eg_not_ok "the TAP lacks torch_ep's lib_build"
	show ref
fi

# a fixed order (expert-major) holds on random fp32 data run twice; so
# does "any", within the bound
for opts in ",layout=expert" ",order=any"; do
	# shellcheck disable=SC2086
	check ord "module=torch_ep$opts" $rand
	if [ "$rc" -eq 0 ]; then
		eg_ok "torch_ep$opts on random fp32: passes"
	else
		eg_not_ok "torch_ep$opts on random fp32: exit $rc"
		show ord
	fi
done

# ---- planted faults ----------------------------------------------------
# stale: every workload with rows fails at its second iteration on x
check fault "module=torch_ep_faulty,fault=stale" --workload "$matrix"
bad=$(grep -c '^not ok' "$EG_TMP/fault.tap")
if [ "$rc" -eq 1 ] && [ "$bad" -ge $((n / 2)) ] &&
	grep -q 'dispatch, iteration 1: x [0-9]* wrong' "$EG_TMP/fault.out" &&
	! grep -q 'iteration 0' "$EG_TMP/fault.out"; then
	eg_ok "fault stale caught: $bad of $n fail, $(grep -m1 -o 'FAIL [^ ]*: dispatch, iteration 1: x [0-9]* wrong' "$EG_TMP/fault.out")"
else
	eg_not_ok "fault stale: exit $rc, $bad of $n fail, want x wrong at iteration 1 only"
	show fault
fi
# zero: exactly the cases where the rank has no tokens in some step
check fault "module=torch_ep_faulty,fault=zero" --workload "$matrix"
want="adapter torch_ep_faulty: RuntimeError: max(): .*(torch_ep_faulty.py:[0-9]* in dispatch)"
bad=$(grep -c '^not ok' "$EG_TMP/fault.tap")
if [ "$rc" -eq 1 ] && [ "$bad" -eq 2 ] &&
	grep -q "^FAIL p1-zero-tokens: .*$want" "$EG_TMP/fault.out" &&
	grep -q "^FAIL p1-steps: .*(step 2, iteration 0): .*$want" "$EG_TMP/fault.out"; then
	eg_ok "fault zero caught: p1-zero-tokens and p1-steps' empty step fail, $(grep -m1 -o 'RuntimeError: max().\{0,40\}' "$EG_TMP/fault.out")"
else
	eg_not_ok "fault zero: exit $rc, $bad failed (want p1-zero-tokens, p1-steps)"
	show fault
fi
# order: one rank has one source, nothing to reorder (suites/l2/torch.sh
# catches it across ranks)
# shellcheck disable=SC2086
check fault "module=torch_ep_faulty,fault=order" $rand
if [ "$rc" -eq 0 ]; then
	eg_ok "fault order at world 1: passes (one source; it takes ranks)"
else
	eg_not_ok "fault order at world 1: exit $rc"
	show fault
fi

# ---- refused at load ---------------------------------------------------
while read -r spec want; do
	check load "$spec" --world=1
	if [ "$rc" -eq 99 ] && grep -q -- "$want" "$EG_TMP/load.out"; then
		eg_ok "refused: $spec: $(grep -m1 -o -- "$want.*" "$EG_TMP/load.out" | cut -c1-100)"
	else
		eg_not_ok "$spec: exit $rc, stderr lacks \"$want\""
		tail -n 5 "$EG_TMP/load.out" | sed 's/^/# /'
	fi
done <<'LIST'
module=torch_ep,memory=gpu adapter torch_ep: query: ValueError: option memory=gpu: want
module=torch_ep_faulty,fault=xx adapter torch_ep_faulty: query: ValueError: option fault=xx: want
module=torch_ep_faulty adapter torch_ep_faulty: query: ValueError: want fault=order|stale|zero
LIST
eg_done
