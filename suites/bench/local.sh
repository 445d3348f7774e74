#!/bin/sh
# The local profile end to end: `epgate bench --profile local` measures
# every point of profiles/local.profile in 6 launches (one `epgate launch`
# job per pass, world and node count, in a shuffled order), writes a
# results file the reader accepts with every launch recorded, and the
# profile's gates (gates/local.gate) pass on it.  The run is timed
# (target: about a minute on a 2-core host, launches included).  A snapshot taken
# during the run must already be a valid results file (incremental,
# atomic writes); planted faults in copies of the results must be caught
# by the gates or the reader.  See docs/profiles.md.
. "${EG_SRCDIR:-.}/suites/lib.sh"

RUNS=$EG_TMP/runs
mkdir -p "$RUNS"

# The plan: how many points the profile has.
"$EG_EPGATE" bench --profile local --list >"$EG_TMP/list.out" 2>&1
npts=$(grep -c '^  point ' "$EG_TMP/list.out")
if [ "$npts" -gt 0 ]; then
	eg_ok "the local profile lists $npts points"
else
	eg_not_ok "the local profile lists its points"
	cat "$EG_TMP/list.out"
fi

# points_in FILE: points in a results file (one per line).
points_in() {
	n=$(grep -c '^  {"id": ' "$1" 2>/dev/null)
	echo "${n:-0}"
}

t0=$(date +%s)
timeout 600 "$EG_EPGATE" bench --profile local --reports "$RUNS" \
	>"$EG_TMP/bench.out" 2>"$EG_TMP/bench.err" &
bench=$!
# a snapshot while it runs: the file must be valid at any moment
snap=""
while kill -0 "$bench" 2>/dev/null; do
	r=$(ls "$RUNS"/*/bench-local.json 2>/dev/null | head -n 1)
	if [ -z "$snap" ] && [ -n "$r" ] && [ "$(points_in "$r")" -ge 2 ]; then
		cp "$r" "$EG_TMP/snapshot.json" && snap=$EG_TMP/snapshot.json
	fi
	sleep 0.2
done
wait "$bench"
rc=$?
t1=$(date +%s)
echo "# epgate bench --profile local: exit $rc in $((t1 - t0)) s (target: about 60 s)"
if [ "$rc" -eq 0 ]; then
	eg_ok "epgate bench --profile local exits 0 (all points measured, gates pass)"
else
	eg_not_ok "epgate bench --profile local exits 0 (got $rc)"
	tail -n 20 "$EG_TMP/bench.err" "$EG_TMP/bench.out" | sed 's/^/# /'
fi

R=$(ls "$RUNS"/*/bench-local.json 2>/dev/null | head -n 1)
if [ -n "$R" ] && [ "$(points_in "$R")" -eq "$npts" ]; then
	eg_ok "the results file holds all $npts points"
else
	eg_not_ok "the results file holds all $npts points (got $(points_in "${R:-/dev/null}"))"
fi
RUN=$(dirname "${R:-$RUNS/x/y}")

# the reader, through epgate gate with the profile's gate file
"$EG_EPGATE" gate --gates "$EG_SRCDIR/gates/local.gate" --tap "$EG_TMP/g.tap" \
	--junit "$EG_TMP/g.xml" "$R" >"$EG_TMP/g.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q '^not ok' "$EG_TMP/g.tap"; then
	eg_ok "epgate gate accepts the results and gates/local.gate passes"
else
	eg_not_ok "epgate gate accepts the results and gates/local.gate passes (exit $rc)"
	sed 's/^/# /' "$EG_TMP/g.out"
fi
if [ -s "$RUN/bench-gates.tap" ] && grep -q '^1\.\.' "$RUN/bench-gates.tap" &&
	[ -s "$RUN/bench-gates.junit.xml" ]; then
	eg_ok "the run folder has the gates' TAP and JUnit"
else
	eg_not_ok "the run folder has the gates' TAP and JUnit"
fi

# what a point must carry: raw samples, evidence of the path, a model
if grep -q '"samples": \[' "$R" && grep -q '"provider": "tcp;ofi_rxm"' "$R" &&
	grep -q '"bound": "' "$R" && grep -q '"model_issue_us"' "$R" &&
	grep -q '"libfabric": "' "$R"; then
	eg_ok "points carry samples, the provider that ran, the model line; the context the versions"
else
	eg_not_ok "points carry samples, the provider that ran, the model line; the context the versions"
fi
# launches: every point in 6, each sample's launch and the spread kept
if grep -q '"passes": \[0, 1, 2, 3, 4, 5' "$R" &&
	grep -q '"launches": \[10, 10, 10, 10, 10, 10' "$R" &&
	grep -q '"cv_between": ' "$R" &&
	grep -q '"plan": {.*"launches": 6' "$R" && grep -q '"machine": "' "$R"; then
	eg_ok "each point has 6 launches recorded, their spread, the plan and the machine"
else
	eg_not_ok "launches recorded in the results"
fi

# progress: not a terminal here, so one plain line per point
if grep -q '^\[local\] pass 1 of 6, w4 n2: point 3 of [0-9]*, elapsed .* ETA' "$EG_TMP/bench.err" &&
	grep -q '^\[local\] pass 6 of 6, w4 n1: done, 2 point(s)' "$EG_TMP/bench.err"; then
	eg_ok "progress: plain lines per point with elapsed and ETA when not a terminal"
else
	eg_not_ok "progress: plain lines per point with elapsed and ETA"
	head -n 5 "$EG_TMP/bench.err" | sed 's/^/# /'
fi

# the snapshot taken mid-run: valid, and a part of the whole
if [ -n "$snap" ]; then
	"$EG_EPGATE" gate --gates "$EG_SRCDIR/gates/local.gate" --tap /dev/null \
		--junit "$EG_TMP/s.xml" "$snap" >"$EG_TMP/s.out" 2>&1
	rc=$?
	if { [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; } &&
		[ "$(points_in "$snap")" -lt "$npts" ]; then
		eg_ok "a snapshot taken during the run is a valid results file ($(points_in "$snap") points)"
	else
		eg_not_ok "a snapshot taken during the run is a valid results file (exit $rc)"
		sed 's/^/# /' "$EG_TMP/s.out"
	fi
else
	eg_not_ok "a snapshot taken during the run (none taken)"
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
