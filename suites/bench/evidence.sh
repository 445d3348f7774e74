#!/bin/sh
# One evidence vocabulary for recorded and measured campaigns
# (docs/gpu.md, "Transport evidence"): the shipped gate files judge a
# campaign as the measured backends write it -- the raw NCCL string
# beside its transport class and libfabric provider -- as they judge
# the recorded field report: the p5en gates on a p5en-shaped measured
# campaign (NVLink within a node, EFA through NCCL's libfabric plugin
# across), the h200x2 gates on their measured campaigns; a fallback to
# sockets fails; the serving gates that no sweep can feed say so and
# skip.
. "${EG_SRCDIR:-.}/suites/lib.sh"

# point ID SUITE ARM NODES TRANSPORT CLASS [PROVIDER]: one measured point
point() {
	prov=""
	[ -n "${7:-}" ] && prov=", \"provider\": \"$7\""
	printf '  {"id": "%s", "suite": "%s", "arm": "%s", "axes": {"world": %d, "nodes": %d, "concurrency": 64}, "evidence": {"transport": "%s", "backend": "nccl", "transport_class": "%s"%s}, "metrics": {"tok_s": {"median": 1000.0, "ci_lo": 990.0, "ci_hi": 1010.0, "n": 40}}}' \
		"$1" "$2" "$3" $((8 * $4)) "$4" "$5" "$6" "$prov"
}
# campaign FILE XNODE-TRANSPORT XNODE-CLASS XNODE-PROVIDER
campaign() {
	{
		echo '{"schema": "epgate/results/v1", "recorded": false, "context": {"profile": "p5en-ep16", "transport": "nccl", "created": "2026-12-01T00:00:00Z"}, "points": ['
		point ep8-a2a ep8-nvlink a2a 1 "nccl P2P/CUMEM (NVL/PIX)" nvlink
		echo ','
		point ep8-dense ep8-nvlink dense 1 "nccl P2P/CUMEM (NVL/PIX)" nvlink
		echo ','
		point c64-a2a ep16-concurrency a2a 2 "$2" "$3" "$4"
		echo ','
		point c64-dense ep16-concurrency dense 2 "$2" "$3" "$4"
		echo ']}'
	} >"$1"
}
G=$EG_SRCDIR/gates/p5en-ep16.gate
gate() { # gate GATES RESULTS NAME: the verdict table in $EG_TMP/NAME.out
	"$EG_EPGATE" gate --gates "$1" --tap "$EG_TMP/$3.tap" --junit "$EG_TMP/$3.xml" \
		"$2" >"$EG_TMP/$3.out" 2>&1
}
verdict() { awk -v g="$2" '$2 == g { print $1; exit }' "$EG_TMP/$1.out"; }

campaign "$EG_TMP/efa.json" "nccl P2P/CUMEM,NET/AWS_Libfabric (NVL/PIX) provider efa" efa efa
gate "$G" "$EG_TMP/efa.json" efa
if [ "$(verdict efa intra-node-nvlink)" = PASS ] && [ "$(verdict efa cross-node-efa)" = PASS ]; then
	eg_ok "p5en gates on a measured p5en-shaped campaign: intra-node-nvlink and cross-node-efa pass"
else
	eg_not_ok "p5en evidence gates on measured evidence: nvlink $(verdict efa intra-node-nvlink), efa $(verdict efa cross-node-efa)"
	grep -A 2 'intra-node-nvlink\|cross-node-efa' "$EG_TMP/efa.out" | sed 's/^/# /'
fi
campaign "$EG_TMP/sock.json" "nccl P2P/CUMEM,NET/Socket (NVL/PIX)" socket ""
gate "$G" "$EG_TMP/sock.json" sock
if [ "$(verdict sock cross-node-efa)" = FAIL ] && [ "$(verdict sock intra-node-nvlink)" = PASS ] &&
	grep -q '^  *failing: 2 of 2: ' "$EG_TMP/sock.out"; then
	eg_ok "a fallback to NCCL's sockets across nodes fails cross-node-efa, both points named"
else
	eg_not_ok "a socket fallback: cross-node-efa $(verdict sock cross-node-efa)"
	grep -A 2 'cross-node-efa' "$EG_TMP/sock.out" | sed 's/^/# /'
fi
# the serving gates: no sweep of epgate feeds them; they say so and skip
n=0
for g in xnode-trt-keeps-up xnode-vllm-parity concurrency-flat multicomm-serving-parity; do
	if [ "$(verdict efa "$g")" = SKIP ] &&
		grep -A 1 "^SKIP  *$g " "$EG_TMP/efa.out" | grep -q '"\[recorded campaigns only\] '; then
		n=$((n + 1))
	fi
done
if [ "$n" -eq 4 ]; then
	eg_ok "serving gates on a measured campaign: SKIP, their sentence says recorded campaigns only"
else
	eg_not_ok "serving gates on a measured campaign: $n of 4 skip saying why"
fi
# the same words in the recorded campaign and the h200x2 measured ones
gate "$G" "$EG_SRCDIR/fixtures/campaigns/p5en-ep16.recorded.json" rec
gate "$EG_SRCDIR/gates/h200x2-nvlink.gate" "$EG_SRCDIR/fixtures/campaigns/h200x2-nvlink.measured.json" nvl
gate "$EG_SRCDIR/gates/h200x2-xnode.gate" "$EG_SRCDIR/fixtures/campaigns/h200x2-xnode.measured.json" xn
if [ "$(verdict rec intra-node-nvlink)" = PASS ] && [ "$(verdict rec cross-node-efa)" = PASS ] &&
	[ "$(verdict nvl nvlink-evidence)" = PASS ] && [ "$(verdict xn network-evidence)" = PASS ]; then
	eg_ok "the recorded p5en campaign and the measured h200x2 ones pass their evidence gates"
else
	eg_not_ok "evidence gates on the fixtures: rec $(verdict rec intra-node-nvlink)/$(verdict rec cross-node-efa), nvlink $(verdict nvl nvlink-evidence), xnode $(verdict xn network-evidence)"
fi
# planted: an NVLink point that ran over PCIe fails the nvlink gate
sed '0,/"transport_class": "nvlink"/s//"transport_class": "pcie"/' \
	"$EG_SRCDIR/fixtures/campaigns/h200x2-nvlink.measured.json" >"$EG_TMP/pcie.json"
gate "$EG_SRCDIR/gates/h200x2-nvlink.gate" "$EG_TMP/pcie.json" pcie
if [ "$(verdict pcie nvlink-evidence)" = FAIL ] &&
	grep -q '^  *failing: 1 of 30: .*: pcie$' "$EG_TMP/pcie.out"; then
	eg_ok "planted: one point over PCIe fails nvlink-evidence, named"
else
	eg_not_ok "planted: a PCIe point: nvlink-evidence $(verdict pcie nvlink-evidence)"
	grep -A 2 'nvlink-evidence' "$EG_TMP/pcie.out" | sed 's/^/# /'
fi
eg_done
