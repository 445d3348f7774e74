#!/bin/sh
# L2 transport: the libfabric alltoallv under the local launcher, every
# byte checked by xport_probe, for W in {2, 3, 4}, providers shm and tcp,
# K = 1 and 4; the automatic provider choice with 1 and 2 ranks per node;
# the test modes (EPGATE_FABRIC_TEST: a later call's message delivered
# first, ranks delayed at random between calls) over every provider and
# K, with the probe and with the L2 engines, and the planted transport
# whose tags omit the call, which they must catch; planted faults (a
# corrupted byte, a receive one byte too small, a rank that stalls) that
# must fail; tcp connections seen on loopback only; and a short `epgate
# bench --raw`. Nothing is timed against a clock: deadlines are the
# transport's own, and the start of a job keeps the world's (60 s).
# Skips (77) when built without libfabric.
. "${EG_SRCDIR:-.}/suites/lib.sh"

: "${EG_BUILDDIR:=.}"
: "${EG_XPORT_PROBE:=$EG_BUILDDIR/suites/l2/xport_probe}"
probe=$EG_XPORT_PROBE
# A world of one needs no fabric: 77 here means no libfabric in the build.
"$probe" --reps 1 >"$EG_TMP/solo" 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	echo "1..0 # SKIP built without libfabric"
	exit 77
fi
if [ "$rc" -ne 0 ]; then
	eg_not_ok "xport_probe alone (world of one): exit $rc"
	sed 's/^/# /' "$EG_TMP/solo"
fi

# launch W RPN ARGS...: the probe on W ranks; output in $EG_TMP/out
launch() {
	w=$1 rpn=$2
	shift 2
	"$EG_EPGATE" launch -n "$w" --ranks-per-node "$rpn" -- \
		"$probe" "$@" >"$EG_TMP/out" 2>&1
}

show() { sed 's/^/# /' "$EG_TMP/out" | tail -n 20; }

for prov in shm tcp; do
	for k in 1 4; do
		for w in 2 3 4; do
			what="W=$w provider=$prov K=$k: 50 alltoallv, bytes checked"
			launch "$w" "$w" --provider "$prov" --num-comms "$k" \
				--expect-intra "$(
					[ $prov = tcp ] && echo 'tcp;ofi_rxm' || echo shm
				)"
			rc=$?
			n=$(grep -c 'PASS: 50 iterations' "$EG_TMP/out")
			if [ "$rc" -eq 0 ] && [ "$n" -eq "$w" ]; then
				eg_ok "$what"
			else
				eg_not_ok "$what (exit $rc, $n ranks passed)"
				show
			fi
		done
	done
done

# Small chunks: every peer buffer is many messages over all the comms.
EPGATE_FABRIC_CHUNK=1000 launch 3 3 --provider tcp --num-comms 3 --reps 20
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -c 'PASS' "$EG_TMP/out")" -eq 3 ]; then
	eg_ok "W=3 tcp K=3 with 1000-byte chunks"
else
	eg_not_ok "W=3 tcp K=3 with 1000-byte chunks (exit $rc)"
	show
fi

# Automatic choice: shm inside a virtual node, tcp across; stats say so,
# and the probe checks the cross-node byte count.
launch 4 2 --num-comms 2 --expect-intra shm --expect-inter 'tcp;ofi_rxm'
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'intra=shm inter=tcp;ofi_rxm' "$EG_TMP/out"; then
	eg_ok "auto provider, 2 ranks per node: shm within, tcp across"
else
	eg_not_ok "auto provider, 2 ranks per node (exit $rc)"
	show
fi
launch 4 1 --num-comms 2 --expect-intra '' --expect-inter 'tcp;ofi_rxm'
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'intra=- inter=tcp;ofi_rxm' "$EG_TMP/out"; then
	eg_ok "auto provider, 1 rank per node: tcp for every pair"
else
	eg_not_ok "auto provider, 1 rank per node (exit $rc)"
	show
fi

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

# Planted faults: each must fail, and for the right reason.
launch 2 2 --provider shm --num-comms 2 --fault corrupt --reps 5
rc=$?
if [ "$rc" -eq 1 ] &&
	grep -q 'rank 1: iteration 2: byte .* from rank 0 is' "$EG_TMP/out"; then
	eg_ok "planted corrupt byte: caught, naming rank 0 and the byte"
else
	eg_not_ok "planted corrupt byte not caught (exit $rc)"
	show
fi
for prov in shm tcp; do
	for f in truncate truncate-chunk; do
		launch 2 2 --provider "$prov" --fault "$f" --reps 5 --timeout 10
		rc=$?
		if [ "$rc" -eq 1 ] &&
			grep -q 'rank 1: iteration 2: transport error EG_EMISMATCH:.*rank 0 .*recv_bytes\[0\]' "$EG_TMP/out" &&
			grep -q 'rank 1: guard bytes intact' "$EG_TMP/out"; then
			eg_ok "planted $f ($prov): reported, naming rank 0; no overrun"
		else
			eg_not_ok "planted $f ($prov) (exit $rc)"
			show
		fi
	done
done
# A rank that calls late: the others' deadline expires, naming it (with
# the other ranks too, when one was slow to send under load).
for prov in shm tcp; do
	launch 3 3 --provider "$prov" --num-comms 2 --fault stall --timeout 2
	rc=$?
	n=$(grep -c 'EG_ETIMEDOUT: .*deadline 2.0 s expired.*; still waiting on messages from ranks \[\([0-9, ]*, \)\?1\(, [0-9, ]*\)\?\]' "$EG_TMP/out")
	if [ "$rc" -eq 1 ] && [ "$n" -ge 1 ]; then
		eg_ok "planted stall ($prov): deadline expires naming rank 1"
	else
		eg_not_ok "planted stall ($prov) (exit $rc)"
		show
	fi
done

# Loopback only: even with eth0 preferred (FI_TCP_IFACE), every tcp
# connection of the probe seen by ss is 127.0.0.0/8 on both ends. The
# filter is shown to catch an outside address first.
offloop() { awk '$4 !~ /^127\./ || $5 !~ /^127\./' | wc -l; }
if [ "$(echo 'ESTAB 0 0 192.0.2.2:5000 127.0.0.1:6000 users:(("xport_probe"))' |
	offloop)" -ne 1 ]; then
	eg_not_ok "loopback filter misses an outside address"
fi
if command -v ss >/dev/null 2>&1; then
	FI_TCP_IFACE=eth0 launch 2 2 --provider tcp --num-comms 2 \
		--reps 300 &
	pid=$!
	: >"$EG_TMP/ss"
	for i in 1 2 3 4 5 6 7 8; do
		ss -Htnp 2>/dev/null | grep xport_probe >>"$EG_TMP/ss"
		sleep 0.2
	done
	wait $pid
	rc=$?
	seen=$(wc -l <"$EG_TMP/ss")
	off=$(offloop <"$EG_TMP/ss")
	if [ "$rc" -eq 0 ] && [ "$seen" -gt 0 ] && [ "$off" -eq 0 ]; then
		eg_ok "tcp stays on loopback ($seen connection samples, all 127.x)"
	else
		eg_not_ok "tcp loopback: exit $rc, $seen samples, $off off loopback"
		sed 's/^/# /' "$EG_TMP/ss" | head -n 10
	fi
else
	eg_ok "tcp stays on loopback # SKIP ss not installed"
fi

# The raw benchmark runs and reports.
json=$EG_TMP/bench.json
"$EG_EPGATE" launch -n 2 -- "$EG_EPGATE" bench --raw --provider shm \
	--num-comms 2 --iters 3 --warmup 1 --msgs 16 --size 64K \
	--json "$json" >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'msgs/s per endpoint' "$EG_TMP/out" &&
	grep -q 'GB/s per rank' "$EG_TMP/out" &&
	grep -q '"provider_intra": "shm"' "$json" &&
	grep -q '"schema": "epgate/bench-raw/v1"' "$json"; then
	eg_ok "epgate bench --raw: table and JSON"
else
	eg_not_ok "epgate bench --raw (exit $rc)"
	show
fi
"$EG_EPGATE" bench --raw --num-comms 0 >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q -- '--num-comms' "$EG_TMP/out"; then
	eg_ok "epgate bench --num-comms 0: exit 99 naming the option"
else
	eg_not_ok "epgate bench --num-comms 0: exit $rc"
	show
fi
eg_done
