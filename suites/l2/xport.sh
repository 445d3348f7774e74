#!/bin/sh
# L2 transport: the libfabric alltoallv under the local launcher, every
# byte checked by xport_probe, for W in {2, 3, 4}, providers shm and tcp,
# K = 1 and 4, and small chunks. Skips (77) when built without
# libfabric. The rest (provider choice, planted faults, loopback, the raw
# benchmark) is suites/l2/xport-faults.sh: short scripts, since automake
# shows a script's output only when it ends.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "$EG_SRCDIR/suites/l2/xport-lib.sh"

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

eg_done
