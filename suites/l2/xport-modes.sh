#!/bin/sh
# L2 transport, continued: the test modes (EPGATE_FABRIC_TEST,
# docs/transport.md): a later call's message delivered first and ranks
# delayed at random between calls, over every provider and K, with the
# probe (every byte checked) and with the L2 engines (every workload
# verified); and the planted transport whose tags omit the call, which
# they must catch. Deadlines are the transport's own; nothing reads a
# clock. Skips (77) when built without libfabric.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "$EG_SRCDIR/suites/l2/xport-lib.sh"

# Test modes: a later call's message first (late) and random delays
# between calls (skew), over every provider and K: the bytes still check.
for prov in shm tcp auto; do
	for k in 1 4; do
		what="late,skew: W=4 provider=$prov K=$k: 50 alltoallv, bytes checked"
		EPGATE_FABRIC_TEST=late,skew launch 4 2 --num-comms "$k" \
			$([ $prov = auto ] || echo "--provider $prov")
		rc=$?
		n=$(grep -c 'PASS: 50 iterations' "$EG_TMP/out")
		if [ "$rc" -eq 0 ] && [ "$n" -eq 4 ]; then
			eg_ok "$what"
		else
			eg_not_ok "$what (exit $rc, $n ranks passed)"
			show
		fi
	done
done
# ... and the L2 engines over them, every workload of W=4 verified
l2job() { # l2job ENGINE K PROVIDER: the W=4 L2 matrix; output in out
	"$EG_EPGATE" launch -n 4 --ranks-per-node 2 -- "$EG_EPGATE" l2-rank \
		--engine "$1" --num-comms "$2" --provider "$3" \
		--results "$EG_TMP/l2.jsonl" >"$EG_TMP/out" 2>&1
}
for eng in a2a dense; do
	for prov in shm tcp; do
		k=$([ $eng = a2a ] && echo 4 || echo 1)
		rm -f "$EG_TMP/l2.jsonl"
		EPGATE_FABRIC_TEST=late,skew l2job "$eng" "$k" "$prov"
		rc=$?
		n=$(grep -c '"status":"pass"' "$EG_TMP/l2.jsonl" 2>/dev/null)
		if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 15 ]; then
			eg_ok "late,skew: L2 $eng $prov K=$k: $n workloads pass"
		else
			eg_not_ok "late,skew: L2 $eng $prov K=$k (exit $rc, ${n:-0} passed)"
			show
		fi
	done
done
# The planted transport whose tags omit the call (noseq): a later
# call's message meets an earlier call's receive, and it must not pass.
caught='truncation\|byte [0-9]* of [0-9]* from rank\|recv_bytes\|does not match\|deadline'
for prov in shm tcp; do
	k=$([ $prov = shm ] && echo 1 || echo 4)
	EPGATE_FABRIC_TEST=late,skew,noseq launch 3 3 --provider "$prov" \
		--num-comms "$k" --timeout 3
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "$caught" "$EG_TMP/out"; then
		eg_ok "planted noseq tags ($prov K=$k): caught ($(grep -m 1 -o "$caught" "$EG_TMP/out" | head -n 1))"
	else
		eg_not_ok "planted noseq tags ($prov K=$k) not caught (exit $rc)"
		show
	fi
	EPGATE_FABRIC_TEST=late,skew,noseq EPGATE_TIMEOUT=5 l2job a2a "$k" "$prov"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "$caught" "$EG_TMP/out"; then
		eg_ok "planted noseq tags, L2 a2a ($prov K=$k): caught"
	else
		eg_not_ok "planted noseq tags, L2 a2a ($prov K=$k) not caught (exit $rc)"
		show
	fi
done

eg_done
