#!/bin/sh
# L2 transport, continued from suites/l2/xport.sh: the automatic provider
# choice with 1 and 2 ranks per node; planted faults (a corrupted byte, a
# receive one byte too small, a rank that stalls) that must fail; tcp
# connections seen on loopback only; and a short `epgate bench --raw`.
# Skips (77) when built without libfabric.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "$EG_SRCDIR/suites/l2/xport-lib.sh"

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
# A rank that calls late: the others' deadline expires, naming it. The
# deadline is long beside a loaded machine's scheduling delays (2 s once
# expired at the first iteration, a rank descheduled that long), and the
# stall three deadlines and a second.
for prov in shm tcp; do
	launch 3 3 --provider "$prov" --num-comms 2 --fault stall --timeout 6
	rc=$?
	# (with the other rank too, when one was slow to send under load)
	n=$(grep -c 'EG_ETIMEDOUT: .*deadline 6.0 s expired.*; still waiting on messages from ranks \[\([0-9, ]*, \)\?1\(, [0-9, ]*\)\?\]' "$EG_TMP/out")
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
