#!/bin/sh
# The plugin path over several ranks (L2, one rank per process, the
# plugin's collectives over epgate's bootstrap): the template in each
# layout passes the world-3 matrix under `epgate launch -n 3`, and the
# battery of plugin-l2.ini at W = 2, 3 and 4 over two virtual nodes; its
# planted faults end with the right verdict: a wrong result is a failed
# case naming the field, every workload still reported; a crash is
# "rank 2 killed by signal 11"; a hang is the peers' deadline; an error
# carries the plugin's own string; nothing is left running. The faults
# that only ranks and nodes reach (a library that decides routing epochs
# per rank, one that rounds per node) are suites/l2/plugin-nodes.sh's,
# in make check.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 0
fi
so=$EG_BUILDDIR/plugins/template/libeg-template.so
fdir=$EG_BUILDDIR/plugins/faults
matrix=$EG_SRCDIR/fixtures/workloads/l2-matrix.ini
. "$EG_SRCDIR/suites/l2/plugin-lib.sh"
job() { # name engine [filter]
	rm -f "$EG_TMP/$1.jsonl"
	"$EG_EPGATE" launch -n 3 --ranks-per-node 2 --timeout 60 -- \
		"$EG_EPGATE" l2-rank --engine "$2" --iters 2 \
		--workload "$matrix" --filter "${3:-w3-}" \
		--results "$EG_TMP/$1.jsonl" >"$EG_TMP/$1.out" 2>&1
}
n=$(grep -c '^\[w3-' "$matrix")

for opts in "" ",layout=expert" ",layout=rank,keys=content"; do
	job ok "plugin:$so$opts"
	rc=$?
	p=$(grep -c '"status":"pass"' "$EG_TMP/ok.jsonl" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "3 ranks, template${opts:-,layout=flat}: $p of $n workloads pass"
	else
		eg_not_ok "3 ranks, template$opts: exit $rc, $p of $n pass"
		tail -n 20 "$EG_TMP/ok.out" | sed 's/^/# /'
	fi
done

# the battery: steps through one instance (all ranks empty, one rank
# empty, counts shrinking and growing), hidden sizes off every vector
# width, fp8 with odd token counts, ids beyond 8 bits, duplicate expert
# ids, random data bit for bit across two virtual nodes
for spec in "2 1 -" "3 2 ,layout=expert" "4 2 ,layout=rank,keys=content"; do
	set -- $spec
	[ "$3" = - ] && set -- "$1" "$2" ""
	bjob bat "plugin:$so$3" "$1" "$2" "p$1-"
	rc=$?
	nb=$(grep -c "^\[p$1-" "$battery")
	p=$(grep -c '"status":"pass"' "$EG_TMP/bat.jsonl" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$nb" ] && [ "$nb" -gt 0 ]; then
		eg_ok "$1 ranks, $((($1 + $2 - 1) / $2)) virtual nodes, template${3:-,layout=flat}: $p of $nb battery workloads pass"
	else
		eg_not_ok "$1 ranks, template$3: exit $rc, $p of $nb battery workloads pass"
		tail -n 20 "$EG_TMP/bat.out" | sed 's/^/# /'
	fi
done

# the battery's faults: each fails the workload that reaches it on the
# field that names it
while read -r fault W R case field; do
	EPGATE_TIMEOUT=3 bjob f "plugin:$fdir/libeg-fault-$fault.so" "$W" "$R" \
		"$case"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "\"status\":\"fail\".*\"$field\":[1-9]" \
		"$EG_TMP/f.jsonl" && ! leftovers; then
		eg_ok "$W ranks, $(((W + R - 1) / R)) nodes, fault $fault: $case fails, $(grep -o "\"$field\":[0-9]*" "$EG_TMP/f.jsonl" | head -n 1)"
	else
		eg_not_ok "$W ranks, fault $fault: $case: exit $rc, no failure on $field"
		tail -n 20 "$EG_TMP/f.out" | sed 's/^/# /'
	fi
done <<'LIST'
bf16-tail 2 1 p2-h1001 native_unwritten
last-chunk 2 1 p2-h1001 native_unwritten
scale-pitch 2 1 p2-fp8-t21-mask scales
unrouted-unwritten 2 1 p2-fp8-t21-mask native_unwritten
token-8bit 2 1 p2-e520-t300 native_key
write-past 3 2 p3-h333 native_guard
input-written 3 2 p3-steps native_input
dedup-slots 3 2 p3-fp8-dup topk_w
expert-id-8bit 4 2 p4-e1040 topk_idx
LIST
# wrong results: every workload reported, those where the last rank
# has rows to spoil failed on the field, none an error
for f in "copy-differs ,layout=expert native_copy" "drop-row - missing_rows" \
	"combine-ulp - combine"; do
	set -- $f
	[ "$2" = - ] && set -- "$1" "" "$3"
	job wrong "plugin:$fdir/libeg-fault-$1.so$2"
	rc=$?
	all=$(wc -l <"$EG_TMP/wrong.jsonl" 2>/dev/null || echo 0)
	bad=$(grep -c "\"status\":\"fail\".*\"$3\":[1-9]" "$EG_TMP/wrong.jsonl" 2>/dev/null)
	if [ "$rc" -eq 1 ] && [ "$all" -eq "$n" ] && [ "$bad" -ge $((n / 2)) ] &&
		! grep -q '"status":"error"' "$EG_TMP/wrong.jsonl" && ! leftovers; then
		eg_ok "3 ranks, fault $1: $all workloads reported, $bad failed on $3"
	else
		eg_not_ok "3 ranks, fault $1$2: exit $rc, $all reported, $bad failed on $3"
		tail -n 20 "$EG_TMP/wrong.out" | sed 's/^/# /'
	fi
done

# a crash, a hang, an error of its own: the job ends, saying which
while read -r fault want; do
	t0=$(date +%s)
	EPGATE_TIMEOUT=3 job "$fault" "plugin:$fdir/libeg-fault-$fault.so" \
		w3-base
	rc=$?
	dt=$(($(date +%s) - t0))
	# ended for its own reason, not by the launcher's guard deadline
	if [ "$rc" -ne 0 ] &&
		! grep -q '^\[launch\] deadline 60.0 s expired' "$EG_TMP/$fault.out" &&
		grep -q -- "$want" "$EG_TMP/$fault.out" && ! leftovers; then
		eg_ok "3 ranks, fault $fault: exit $rc after ${dt} s: $(grep -m1 -o -- "$want.*" "$EG_TMP/$fault.out" | cut -c1-80)"
	else
		eg_not_ok "3 ranks, fault $fault: exit $rc after ${dt} s, no \"$want\""
		tail -n 20 "$EG_TMP/$fault.out" | sed 's/^/# /'
	fi
done <<'LIST'
crash rank 2 killed by signal 11
hang still waits on ranks 2
error planted error: the template refuses to dispatch
positive-rc planted error: the template returns 2 for an error (returned 2
LIST
# a measurement: the first step verified, then only the plugin's calls
"$EG_EPGATE" launch -n 2 --timeout 60 -- "$EG_EPGATE" bench --engine \
	"plugin:$so,layout=expert" --iters 5 --warmup 1 --tokens 16 \
	--hidden 128 >"$EG_TMP/bench.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'dispatch_us' "$EG_TMP/bench.out"; then
	eg_ok "bench --engine plugin: $(grep -m1 -o 'dispatch_us.*' "$EG_TMP/bench.out" | tr -s ' ')"
else
	eg_not_ok "bench --engine plugin: exit $rc"
	tail -n 20 "$EG_TMP/bench.out" | sed 's/^/# /'
fi
"$EG_EPGATE" launch -n 2 --timeout 60 -- "$EG_EPGATE" bench --engine \
	"plugin:$fdir/libeg-fault-combine-ulp.so" --iters 5 --warmup 1 \
	--tokens 16 --hidden 128 >"$EG_TMP/bench.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'wrong; not measuring' "$EG_TMP/bench.out"; then
	eg_ok "bench of a wrong plugin refused: $(grep -m1 -o 'wrong; not measuring.*' "$EG_TMP/bench.out" | cut -c1-80)"
else
	eg_not_ok "bench of a wrong plugin: exit $rc"
	tail -n 20 "$EG_TMP/bench.out" | sed 's/^/# /'
fi
# a profile whose arms are two builds of one library (two option sets of
# the template) beside epgate's a2a: every arm is measured as a point of
# the sweep; a wrong library as an arm fails its points
cat >"$EG_TMP/plug.profile" <<PROF
profile: plug
description: "plugin arms in a profile (suites/l2/plugin.sh)"
transport: fabric
provider: shm
launcher: local
timeout: 30
repetitions: {warmup: 1, iters: 3, launches: 1}
base: {world: 2, nodes: 1, num_comms: 1, concurrency: 16, hidden: 128, experts: 8, topk: 2, dtype: bf16, routing: uniform}
sweeps:
  - name: libs
    arms: [a2a, "plugin:$so,layout=expert", "plugin:$so,layout=rank"]
    axes: {concurrency: [8, 16]}
PROF
"$EG_EPGATE" bench profile "$EG_TMP/plug.profile" --no-gates \
	--results "$EG_TMP/plug.json" --reports "$EG_TMP/pruns" >"$EG_TMP/plug.out" 2>&1
rc=$?
np=$(grep -c '"arm": "plugin:' "$EG_TMP/plug.json" 2>/dev/null)
na=$(grep -c '"arm": "a2a"' "$EG_TMP/plug.json" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "${np:-0}" -eq 4 ] && [ "${na:-0}" -eq 2 ]; then
	eg_ok "a profile with two plugin arms beside a2a: 6 of 6 points measured"
else
	eg_not_ok "profile with plugin arms: exit $rc, $np plugin and $na a2a points"
	tail -n 20 "$EG_TMP/plug.out" | sed 's/^/# /'
fi
sed "s|plugin:$so,layout=rank|plugin:$fdir/libeg-fault-combine-ulp.so|" \
	"$EG_TMP/plug.profile" >"$EG_TMP/bad.profile"
"$EG_EPGATE" bench profile "$EG_TMP/bad.profile" --no-gates \
	--results "$EG_TMP/bad.json" --reports "$EG_TMP/pruns" >"$EG_TMP/bad.out" 2>&1
rc=$?
nb=$(grep -c 'combine-ulp' "$EG_TMP/bad.json" 2>/dev/null)
if [ "$rc" -eq 1 ] && [ "${nb:-1}" -eq 0 ] && grep -q ' 2 failed' "$EG_TMP/bad.out"; then
	eg_ok "a wrong plugin as a profile arm: its 2 points fail verification, exit 1"
else
	eg_not_ok "a wrong plugin as a profile arm: exit $rc, $nb of its points in the results"
	tail -n 20 "$EG_TMP/bad.out" | sed 's/^/# /'
fi
eg_done
