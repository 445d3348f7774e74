#!/bin/sh
# The plugin faults that only ranks and nodes reach, in `make check`
# (the rest of the plugin path over ranks is suites/l2/plugin.sh, make
# check-long): a library that rounds its partial sums per node before
# the cross-node combine is bit for bit right on one node and wrong
# across two virtual nodes; one that decides routing epochs from its own
# rank's input disagrees with its peers once a rank is empty in a step.
# The template passes the same cases, so each verdict is the fault's.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 0
fi
so=$EG_BUILDDIR/plugins/template/libeg-template.so
fdir=$EG_BUILDDIR/plugins/faults
. "$EG_SRCDIR/suites/l2/plugin-lib.sh"
passes() { # name: exit 0 and every workload passed
	[ "$rc" -eq 0 ] && grep -q '"status":"pass"' "$EG_TMP/$1.jsonl" &&
		! grep -q '"status":"fail"' "$EG_TMP/$1.jsonl"
}

bjob t "plugin:$so" 4 2 p4-rand
rc=$?
if passes t; then
	eg_ok "4 ranks, 2 virtual nodes, template: p4-rand passes"
else
	eg_not_ok "4 ranks, 2 virtual nodes, template: exit $rc"
	tail -n 20 "$EG_TMP/t.out" | sed 's/^/# /'
fi
bjob f "plugin:$fdir/libeg-fault-round-per-node.so" 4 2 p4-rand
rc=$?
if [ "$rc" -eq 1 ] && grep -q '"status":"fail".*"combine":[1-9]' "$EG_TMP/f.jsonl" &&
	! leftovers; then
	eg_ok "4 ranks, 2 virtual nodes, fault round-per-node: p4-rand fails, $(grep -o '"combine":[0-9]*' "$EG_TMP/f.jsonl" | head -n 1)"
else
	eg_not_ok "4 ranks, 2 virtual nodes, fault round-per-node: exit $rc, no combine failure"
	tail -n 20 "$EG_TMP/f.out" | sed 's/^/# /'
fi
# one node: the same rounding is the final cast, bit for bit right
bjob f1 "plugin:$fdir/libeg-fault-round-per-node.so" 4 4 p4-rand
rc=$?
if passes f1; then
	eg_ok "4 ranks on one node, fault round-per-node: passes (it takes two nodes)"
else
	eg_not_ok "4 ranks on one node, fault round-per-node: exit $rc"
	tail -n 20 "$EG_TMP/f1.out" | sed 's/^/# /'
fi
bjob t3 "plugin:$so" 3 2 p3-steps
rc=$?
if passes t3; then
	eg_ok "3 ranks, template: p3-steps (a rank empty in a step) passes"
else
	eg_not_ok "3 ranks, template: p3-steps: exit $rc"
	tail -n 20 "$EG_TMP/t3.out" | sed 's/^/# /'
fi
bjob e "plugin:$fdir/libeg-fault-epoch-per-rank.so" 3 2 p3-steps
rc=$?
want='ranks disagree about routing_epoch'
if [ "$rc" -ne 0 ] && [ "$(grep -c "$want" "$EG_TMP/e.out")" -ge 3 ] && ! leftovers; then
	eg_ok "3 ranks, fault epoch-per-rank: exit $rc, $(grep -m1 -o "$want.*" "$EG_TMP/e.out" | cut -c1-70)"
else
	eg_not_ok "3 ranks, fault epoch-per-rank: exit $rc, no \"$want\" on every rank"
	tail -n 20 "$EG_TMP/e.out" | sed 's/^/# /'
fi
eg_done
