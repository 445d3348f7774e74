#!/bin/sh
# L2, continued: the fault tests -- a rank killed in the middle of a
# dispatch, a rank that stalls, each ending in a reported error (not in
# the launcher's guard deadline: nothing here reads a clock), with every
# process gone and earlier results intact.
. "${EG_SRCDIR:-.}/suites/lib.sh"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 0
fi
leftovers() { pgrep -f "$EG_TMP" >/dev/null 2>&1; }

# --- a rank killed in the middle of its 3rd dispatch (2nd workload)
job() {
	"$EG_EPGATE" launch -n 4 --ranks-per-node 2 --timeout 60 -- \
		"$EG_EPGATE" l2-rank --engine a2a --provider shm --iters 2 \
		--filter w4- --results "$EG_TMP/$1.jsonl" >"$EG_TMP/$1.out" 2>&1
}
guarded() { ! grep -q '^\[launch\] deadline 60.0 s expired' "$EG_TMP/$1.out"; }
EPGATE_FAULT=kill:2:dispatch:3 EPGATE_TIMEOUT=5 job kill
rc=$?
lines=$(wc -l <"$EG_TMP/kill.jsonl" 2>/dev/null || echo 0)
if [ "$rc" -ne 0 ] && guarded kill && [ "$lines" -eq 1 ] &&
	grep -q 'rank 2 killed by signal 9' "$EG_TMP/kill.out" && ! leftovers; then
	eg_ok "kill mid-dispatch: exit $rc, 1 result kept: $(grep -m1 'killed by signal' "$EG_TMP/kill.out")"
else
	eg_not_ok "kill mid-dispatch: exit $rc, $lines results"
	sed 's/^/# /' "$EG_TMP/kill.out" | tail -n 20
fi

# --- a rank that stalls in its 3rd combine: peers' deadline (5 s) fires
EPGATE_FAULT=stall:1:combine:3 EPGATE_TIMEOUT=5 job stall
rc=$?
lines=$(wc -l <"$EG_TMP/stall.jsonl" 2>/dev/null || echo 0)
if [ "$rc" -ne 0 ] && guarded stall && [ "$lines" -eq 1 ] &&
	grep -q 'deadline.*rank.* 1\b\|waits on.* 1\b' "$EG_TMP/stall.out" && ! leftovers; then
	eg_ok "stall in combine: exit $rc, 1 result kept: $(grep -m1 'deadline' "$EG_TMP/stall.out")"
else
	eg_not_ok "stall in combine: exit $rc, $lines results"
	sed 's/^/# /' "$EG_TMP/stall.out" | tail -n 20
fi

# --- the same kill seen through the reports: earlier results, then the
# job's error with its log
EPGATE_FAULT=kill:1:dispatch:5 EPGATE_TIMEOUT=5 "$EG_EPGATE" check --l2 \
	--reports="$EG_TMP/runs2" --tap="$EG_TMP/f.tap" --junit="$EG_TMP/f.xml" \
	>"$EG_TMP/f.out" 2>&1
rc=$?
if [ "$rc" -eq 99 ] && grep -q '^ok 1 - l2 ' "$EG_TMP/f.tap" &&
	grep -q '^not ok .* job$' "$EG_TMP/f.tap" &&
	grep -q 'log_tail' "$EG_TMP/f.tap" &&
	"$XMLLINT" --noout --schema "$EG_SRCDIR/reports/schema/junit.xsd" "$EG_TMP/f.xml" 2>/dev/null; then
	eg_ok "reports keep what ran before the kill, then the job error ($(grep -c '^not ok' "$EG_TMP/f.tap") failing jobs)"
else
	eg_not_ok "fault through the reports: exit $rc"
	head -n 30 "$EG_TMP/f.tap" | sed 's/^/# /'
fi
eg_done
