#!/bin/sh
# The local profile end to end: `epgate bench --profile local` measures
# every point of profiles/local.profile in 6 launches (one `epgate launch`
# job per pass, world and node count, in a shuffled order), writes a
# results file the reader accepts with every launch recorded, and the
# profile's gates (gates/local.gate) pass on it.  The run's time is
# said, not judged: 3 to 12 minutes on the 2-core host, by its load; the
# timeout only ends a hang (make check-long).  A snapshot taken
# during the run must already be a valid results file (incremental,
# atomic writes); the points carry their transport class. Planted faults
# are suites/bench/planted.sh (short scripts: automake shows a script's
# output only when it ends).  See docs/profiles.md.
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
timeout 2400 "$EG_EPGATE" bench --profile local --reports "$RUNS" \
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
echo "# epgate bench --profile local: exit $rc in $((t1 - t0)) s (not judged: a timing)"
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
	grep -q '"transport_class": "tcp"' "$R" && grep -q '"transport_class": "shm"' "$R" &&
	grep -q '"bound": "' "$R" && grep -q '"model_issue_us"' "$R" &&
	grep -q '"libfabric": "' "$R"; then
	eg_ok "points carry samples, the provider and transport class that ran, the model line; the context the versions"
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

eg_done
