#!/bin/sh
# L2: the multi-process engines over libfabric, the quick configuration
# set as `epgate run` and make check use it: results, JUnit, the
# providers used. suites/l2/l2-keys.sh (what check --l2 hands its ranks,
# a planted fault) and l2-faults.sh (killed and stalled ranks) go on:
# short scripts, since automake shows a script's output only when it ends.
. "${EG_SRCDIR:-.}/suites/lib.sh"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 0
fi

# --- the quick L2 set, as `epgate run` and make check use it
tap=$EG_TMP/l2.tap
xml=$EG_TMP/l2.xml
t0=$(date +%s)
EPGATE_TIMEOUT=20 "$EG_EPGATE" check --l2 --reports="$EG_TMP/runs" \
	--tap="$tap" --junit="$xml" >"$EG_TMP/out" 2>&1
rc=$?
t1=$(date +%s)
if [ "$rc" -eq 0 ]; then
	eg_ok "epgate check --l2: $(tail -n 1 "$EG_TMP/out") in $((t1 - t0)) s"
else
	eg_not_ok "epgate check --l2 exit $rc"
	sed 's/^/# /' "$EG_TMP/out" | tail -n 30
	grep -A 14 '^not ok' "$tap" | head -n 60 | sed 's/^/# /'
fi
n=$(grep -c '^ok' "$tap")
cfgs=$(grep '^ok' "$tap" | sed 's/^ok [0-9]* - l2 \([^:]*\):.*/\1/' | sort -u | wc -l)
if [ "$n" -ge 100 ] && [ "$cfgs" -ge 10 ]; then
	eg_ok "$n L2 results over $cfgs configurations"
else
	eg_not_ok "only $n L2 results over $cfgs configurations"
fi
if "$XMLLINT" --noout --schema "$EG_SRCDIR/reports/schema/junit.xsd" "$xml" 2>"$EG_TMP/xl"; then
	eg_ok "L2 JUnit valid against the XSD"
else
	eg_not_ok "L2 JUnit invalid"
	sed 's/^/# /' "$EG_TMP/xl"
fi
if grep -q 'transport: \|providers intra=' "$EG_TMP"/runs/*/l2-a2a.w4.n2.auto.k4.log; then
	eg_ok "job log records the providers used: $(grep -h 'providers' "$EG_TMP"/runs/*/l2-a2a.w4.n2.auto.k4.log | sed 's/^\[0\] //')"
else
	eg_not_ok "no provider evidence in the job log"
fi

# each case's JUnit time is its own (rank 0's, in its results line), not
# the job's time split evenly
log=$(ls "$EG_TMP"/runs/*/l2-a2a.w4.n2.shm.k1.jsonl 2>/dev/null | head -n 1)
same=0
total=0
for w in $(sed -n 's/.*"workload":"\([^"]*\)".*/\1/p' "$log" 2>/dev/null); do
	s=$(sed -n "s/.*\"workload\":\"$w\".*\"seconds\":\([0-9.e-]*\).*/\1/p" "$log" | awk '{printf "%.3f", $1}')
	j=$(grep -o "classname=\"epgate.l2.a2a.w4.n2.shm.k1\" name=\"$w\" time=\"[0-9.]*\"" "$xml" |
		sed 's/.*time="\([0-9.]*\)"/\1/')
	total=$((total + 1))
	[ -n "$s" ] && [ "$s" = "$j" ] && same=$((same + 1))
done
if [ "$total" -ge 10 ] && [ "$same" -eq "$total" ]; then
	eg_ok "JUnit times are each case's own: $total cases of a2a.w4.n2.shm.k1 match rank 0's seconds"
else
	eg_not_ok "JUnit times: $same of $total cases match rank 0's seconds"
fi
eg_done
