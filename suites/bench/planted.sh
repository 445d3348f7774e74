#!/bin/sh
# Planted faults against the local profile's gates and reader, on the
# results of a small profile with the local profile's point names (so
# gates/local.gate judges them as it would the real run): each fault,
# planted in a copy, must be caught; a profile with an unknown axis is
# refused; a wrong engine is not measured. The full run is
# suites/bench/local.sh.
. "${EG_SRCDIR:-.}/suites/lib.sh"

RUNS=$EG_TMP/runs
cat >"$EG_TMP/local.profile" <<'YAML'
profile: local
transport: fabric
launcher: local
gates: gates/local.gate
timeout: 30
repetitions: {warmup: 1, iters: 3}
base: {world: 4, nodes: 2, num_comms: 1, concurrency: 32, hidden: 64,
       experts: 16, topk: 4, dtype: bf16, routing: uniform}
sweeps:
  - name: concurrency
    arms: [a2a, dense]
    axes: {concurrency: [32]}
  - name: world
    arms: [a2a]
    axes: {world: [2]}
  - name: nodes
    arms: [a2a]
    axes: {nodes: [1]}
YAML
"$EG_EPGATE" bench profile "$EG_TMP/local.profile" --no-gates --reports "$RUNS" \
	>"$EG_TMP/bench.out" 2>&1
rc=$?
R=$(ls "$RUNS"/*/bench-local.json 2>/dev/null | head -n 1)
if [ "$rc" -eq 77 ]; then
	echo "1..0 # SKIP $(tail -n 1 "$EG_TMP/bench.out")"
	exit 0
elif [ "$rc" -eq 0 ] && [ -n "$R" ]; then
	eg_ok "a small profile with the local profile's point names: 4 points measured"
else
	eg_not_ok "the small profile (exit $rc)"
	tail -n 10 "$EG_TMP/bench.out" | sed 's/^/# /'
fi

# Planted faults in copies: each must be caught.
# gate_on FILE: exit status of epgate gate with the local gates.
gate_on() {
	"$EG_EPGATE" gate --gates "$EG_SRCDIR/gates/local.gate" --tap "$EG_TMP/p.tap" \
		--junit "$EG_TMP/p.xml" "$1" >"$EG_TMP/p.out" 2>&1
	echo $?
}
# a2a moving more cross-node bytes than dense: the byte gate fails
sed '/"id": "concurrency\/a2a\/concurrency=32"/s/"so_bytes": {"median": [0-9.e+]*/"so_bytes": {"median": 1e12/' \
	"$R" >"$EG_TMP/bytes.json"
rc=$(gate_on "$EG_TMP/bytes.json")
if [ "$rc" -eq 1 ] && grep -q '^not ok .* a2a-sends-fewer-bytes' "$EG_TMP/p.tap"; then
	eg_ok "planted: a2a moving more SO bytes than dense fails a2a-sends-fewer-bytes"
else
	eg_not_ok "planted: a2a moving more SO bytes than dense fails a2a-sends-fewer-bytes (exit $rc)"
fi
# a cross-node point that ran on sockets: the evidence gate fails
sed '/"id": "world\/a2a\/world=2"/s/"provider": "tcp;ofi_rxm"/"provider": "sockets"/' \
	"$R" >"$EG_TMP/prov.json"
rc=$(gate_on "$EG_TMP/prov.json")
if [ "$rc" -eq 1 ] && grep -q '^not ok .* cross-node-tcp' "$EG_TMP/p.tap"; then
	eg_ok "planted: a silent fallback to sockets fails cross-node-tcp"
else
	eg_not_ok "planted: a silent fallback to sockets fails cross-node-tcp (exit $rc)"
fi
# a point whose step median no longer matches its samples: the reader
sed '/"id": "nodes\/a2a\/nodes=1"/s/"step_us": {"median": [0-9]/"step_us": {"median": 9999/' \
	"$R" >"$EG_TMP/corrupt.json"
rc=$(gate_on "$EG_TMP/corrupt.json")
if [ "$rc" -eq 99 ] && grep -q 'points\[[0-9]*\]\.metrics\.step_us' "$EG_TMP/p.out"; then
	eg_ok "planted: a corrupted point is rejected by the reader (exit 99, names it)"
else
	eg_not_ok "planted: a corrupted point is rejected by the reader (exit $rc)"
	sed 's/^/# /' "$EG_TMP/p.out"
fi
# a profile with an unknown axis is refused before anything runs
printf 'profile: bad\ntransport: fabric\nsweeps:\n  - {name: s, arms: [a2a], axes: {concurency: [8]}}\n' \
	>"$EG_TMP/bad.profile"
"$EG_EPGATE" bench --profile "$EG_TMP/bad.profile" --reports "$RUNS" \
	>"$EG_TMP/bad.out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q 'bad.profile:4: unknown axis "concurency"' "$EG_TMP/bad.out"; then
	eg_ok "planted: a profile with an unknown axis is refused with file:line (exit 99)"
else
	eg_not_ok "planted: a profile with an unknown axis is refused (exit $rc)"
	sed 's/^/# /' "$EG_TMP/bad.out"
fi
# a wrong engine is not measured: the backend's verified step compares
# combine bit for bit for an engine that claims the canonical order
# (fault:order sums in another, docs/faults.md)
"$EG_EPGATE" launch -n 4 --ranks-per-node 2 -- "$EG_EPGATE" bench \
	--engine fault:order --data=random --experts=16 --topk=4 --tokens=64 \
	--iters 2 --warmup 0 >"$EG_TMP/order.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q 'not measuring it:.*combine: [0-9]* wrong value' "$EG_TMP/order.out" &&
	! grep -q 'dispatch_us' "$EG_TMP/order.out"; then
	eg_ok "planted: fault:order fails the fabric backend's verified step, nothing measured"
else
	eg_not_ok "planted: fault:order through the fabric backend (exit $rc)"
	sed 's/^/# /' "$EG_TMP/order.out" | tail -n 10
fi
eg_done
