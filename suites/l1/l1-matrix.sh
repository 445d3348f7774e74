#!/bin/sh
# L1: the self engine over the whole workload matrix, bit-exact; then the
# reports it wrote must be valid: JUnit against the shipped XSD, TAP
# through prove. Also checks that the reports catch a failing case.
. "${EG_SRCDIR:-.}/suites/lib.sh"

tap=$EG_TMP/l1.tap
junit=$EG_TMP/l1.junit.xml
"$EG_EPGATE" check --tap="$tap" --junit="$junit" -v >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	eg_ok "epgate check: $(tail -n 1 "$EG_TMP/out")"
else
	eg_not_ok "epgate check exit $rc"
	sed 's/^/# /' "$EG_TMP/out" | head -n 60
fi
n=$(grep -c '^ok ' "$tap")
if [ "$n" -ge 50 ]; then eg_ok "matrix has $n passing workloads (>= 50)"; else eg_not_ok "only $n passing workloads"; fi

if "$XMLLINT" --noout --schema "$EG_SRCDIR/reports/schema/junit.xsd" "$junit" 2>"$EG_TMP/xl"; then
	eg_ok "JUnit report valid against reports/schema/junit.xsd"
else
	eg_not_ok "JUnit report invalid"; sed 's/^/# /' "$EG_TMP/xl"
fi
# Debian 12's Test::Harness (3.44) predates TAP 14 and rejects its version
# line; our TAP 14 uses only the TAP 13 subset (no subtests, no pragmas),
# so older harnesses read the same file with the version line lowered.
if [ "$(sed -n 1p "$tap")" = "TAP version 14" ]; then
	eg_ok "TAP report declares version 14"
else
	eg_not_ok "TAP report version line: $(sed -n 1p "$tap")"
fi
ptap=$tap
if ! perl -MTest::Harness -e 'exit($Test::Harness::VERSION >= 3.48 ? 0 : 1)' 2>/dev/null; then
	ptap=$EG_TMP/l1.v13.tap
	sed '1s/^TAP version 14$/TAP version 13/' "$tap" >"$ptap"
fi
if "$PROVE" -e cat "$ptap" >"$EG_TMP/prove" 2>&1; then
	eg_ok "prove accepts the TAP report"
else
	eg_not_ok "prove rejects the TAP report"; sed 's/^/# /' "$EG_TMP/prove"
fi
# ...and rejects a broken one (a skipped number), so the check can fail.
sed -e '1s/^TAP version 14$/TAP version 13/' -e 's/^ok 2 /ok 3 /' "$tap" >"$EG_TMP/broken.tap"
if "$PROVE" -e cat "$EG_TMP/broken.tap" >/dev/null 2>&1; then
	eg_not_ok "prove accepted a TAP file with a numbering error"
else
	eg_ok "prove rejects a TAP file with a numbering error"
fi

# A single workload given by options: reports well-formed too.
"$EG_EPGATE" check --world=3 --experts=6 --topk=2 --tokens=list:0,5,0 \
	--tap="$EG_TMP/one.tap" --junit="$EG_TMP/one.xml" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^1\.\.1$' "$EG_TMP/one.tap" &&
	"$XMLLINT" --noout --schema "$EG_SRCDIR/reports/schema/junit.xsd" "$EG_TMP/one.xml" 2>/dev/null; then
	eg_ok "single workload from options: passes, plan 1..1, valid JUnit"
else
	eg_not_ok "single workload from options (exit $rc)"
fi
eg_done
