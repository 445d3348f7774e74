#!/bin/sh
# JUnit that keeps its cases: an L2 job whose rank is killed mid-job
# (EPGATE_FAULT=kill:1:dispatch:3, docs/faults.md) still reports every
# workload it owed, the ones it never ran as skips that say why, so CI
# history keeps all of them (docs/reports.md).
. "${EG_SRCDIR:-.}/suites/lib.sh"

S=$EG_SRCDIR
if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 77
fi
# what the jobs owe, independently of the L2 run: the W=4 workloads of
# the matrix (every quick configuration with 4 ranks runs all of them)
owed=$("$EG_EPGATE" check --workload "$S/fixtures/workloads/l2-matrix.ini" \
	--filter w4- --list | grep -c ' W=4 ')
x=$EG_TMP/kill.xml
EPGATE_FAULT=kill:1:dispatch:3 EPGATE_TIMEOUT=5 "$EG_EPGATE" check --l2 \
	--filter w4- --reports "$EG_TMP/runs" --tap "$EG_TMP/kill.tap" \
	--junit "$x" >"$EG_TMP/out" 2>&1
rc=$?

# every configuration's classname holds every owed workload, once
check() { # JUNIT: prints what is wrong, nothing when all is there
	cls=$(sed -n 's/.*<testcase classname="\(epgate\.l2\.[^"]*\)" name="job".*/\1/p' "$1" | sort -u)
	[ -n "$cls" ] || echo "no job error case"
	for c in $cls; do
		n=$(grep -c "<testcase classname=\"$c\" name=\"w4-" "$1")
		[ "$n" -eq "$owed" ] || echo "$c: $n of $owed workloads"
	done
}
jobs=$(grep -c 'name="job"' "$x")
cases=$(grep -c '<testcase classname="epgate\.l2\.[^"]*" name="w4-' "$x")
skips=$(grep -c '<skipped message="never ran: the job ended (exit [0-9]*) before it"' "$x")
wrong=$(check "$x")
if [ "$rc" -eq 99 ] && [ "$jobs" -ge 1 ] && [ -z "$wrong" ] &&
	[ "$cases" -eq $((jobs * owed)) ] && [ "$skips" -ge "$jobs" ] &&
	[ "$skips" -lt "$cases" ]; then
	eg_ok "a rank killed in each of $jobs jobs: all $cases owed cases in the JUnit ($((cases - skips)) ran, $skips skipped with the reason), plus $jobs job errors"
else
	eg_not_ok "killed jobs: exit $rc, $jobs jobs, $cases cases of $((jobs * owed)), $skips skips"
	echo "$wrong" | head -n 5 | sed 's/^/# /'
	tail -n 5 "$EG_TMP/out" | sed 's/^/# /'
fi
if "$XMLLINT" --noout --schema "$S/reports/schema/junit.xsd" "$x" 2>"$EG_TMP/xl"; then
	eg_ok "that JUnit is valid against reports/schema/junit.xsd"
else
	eg_not_ok "that JUnit is invalid"
	head -n 5 "$EG_TMP/xl" | sed 's/^/# /'
fi
# the TAP says the same: a skip per case never run, with the reason
tskips=$(grep -c '^ok [0-9]* - l2 [^:]*: w4-[^ ]* # SKIP never ran: the job ended (exit [0-9]*) before it$' "$EG_TMP/kill.tap")
if [ "$tskips" -eq "$skips" ]; then
	eg_ok "the TAP has the same $tskips skips"
else
	eg_not_ok "TAP skips $tskips, JUnit $skips"
fi
# the check catches a case gone missing (the old reports lost them)
grep -v 'name="w4-mask"' "$x" >"$EG_TMP/lost.xml"
if [ -n "$(check "$EG_TMP/lost.xml")" ]; then
	eg_ok "a planted missing case is caught: $(check "$EG_TMP/lost.xml" | head -n 1)"
else
	eg_not_ok "the check missed a planted missing case"
fi
eg_done
