#!/bin/sh
# Results files an older epgate wrote (docs/results-v1.md, "Older
# files"), one of each earlier shape in fixtures/results-older/: one
# launch per point and no transport class (2026-11-29), launches without
# a class (2026-12-01), a class without the libraries as loaded
# (2026-12-02). Each reads; what can be derived is (the class from the
# transport, the versions from the old string) and judged; what cannot
# makes the gate inconclusive with "recorded by an older epgate: FIELD
# missing; re-record", never a failure -- while the same field missing
# from a file of this epgate still fails, and a planted mismatch of a
# field the evidence gate reads fails naming it.
. "${EG_SRCDIR:-.}/suites/lib.sh"
O=$EG_SRCDIR/fixtures/results-older
cd "$EG_TMP" || exit 99

gate() { # gate NAME FIELD EXPECT...: a gate file with one evidence gate
	n=$1 f=$2
	shift 2
	printf 'profile: older\ngates:\n  - name: %s\n    sentence: "%s"\n' "$n" "$n"
	printf '    rule: evidence\n    field: %s\n    expect: [%s]\n' "$f" "$*"
}
run() { # run OUT ARGS...: epgate gate, its exit status in $rc
	out=$1
	shift
	"$EG_EPGATE" gate --reports "$EG_TMP/r" "$@" >"$out" 2>&1
	rc=$?
}

gate class transport_class socket, tcp, shm >class.gate
for f in 20261129-one-launch 20261201-launches 20261202-class; do
	run out --gates class.gate "$O/$f.json"
	if [ "$rc" -eq 0 ] && grep -q '^PASS .*class' out; then
		eg_ok "$f: reads; transport_class $(grep -o 'transport_class [a-z]* on all' out | head -n 1)"
	else
		eg_not_ok "$f: exit $rc"
		sed 's/^/# /' out | head -n 10
	fi
done
if grep -q "derived for an older epgate's file" out; then
	eg_not_ok "20261202-class has its own class: nothing to derive"
else
	eg_ok "20261202-class: its own class, not a derived one"
fi
run out --gates class.gate "$O/20261129-one-launch.json"
if grep -q "derived for an older epgate's file" out &&
	grep -q 'transport_class derived from transport' "$EG_TMP"/r/*/gate.tap; then
	eg_ok "20261129: the class is said to be derived (verdict and TAP)"
else
	eg_not_ok "20261129: the derived class is not said"
fi
gate nccl nccl '"2.28.3"' >nccl.gate
run out --gates nccl.gate "$O/20261129-one-launch.json"
if [ "$rc" -eq 0 ] && grep -q '^PASS .*nccl 2.28.3' out; then
	eg_ok "20261129: NCCL's version derived from the old versions string"
else
	eg_not_ok "20261129: nccl: exit $rc"
	sed 's/^/# /' out | head -n 6
fi

# what cannot be derived: inconclusive, saying so; --strict fails on it
gate lib lib_version '"1.0"' >lib.gate
for f in 20261129-one-launch 20261201-launches 20261202-class; do
	run out --gates lib.gate "$O/$f.json"
	if [ "$rc" -eq 0 ] && grep -q "^INCONCLUSIVE .*$f.json: recorded by an older epgate: lib_version missing; re-record" out; then
		eg_ok "$f: lib_version: inconclusive, 'recorded by an older epgate: lib_version missing; re-record'"
	else
		eg_not_ok "$f: lib_version: exit $rc, want 0 and the older-epgate message"
		sed 's/^/# /' out | head -n 6
	fi
done
run out --gates lib.gate --strict "$O/20261202-class.json"
if [ "$rc" -eq 1 ]; then
	eg_ok "--strict: the older file's inconclusive gate fails the run"
else
	eg_not_ok "--strict: exit $rc, want 1"
fi
# a field the older epgate wrote where it applied: missing is missing
gate prov provider efa >prov.gate
run out --gates prov.gate "$O/20261129-one-launch.json"
if [ "$rc" -eq 1 ] && grep -q '^FAIL .*provider (no evidence recorded)' out; then
	eg_ok "20261129: provider (written then too) missing: FAIL, not 'older'"
else
	eg_not_ok "20261129: provider: exit $rc, want 1"
	sed 's/^/# /' out | head -n 6
fi
# the same file as this epgate's (revision 2): a missing field fails
sed '2s/"context": {/"context": {"revision": 2, /' "$O/20261202-class.json" >new.json
run out --gates lib.gate new.json
if [ "$rc" -eq 1 ] && grep -q '^FAIL .*lib_version (no evidence recorded)' out; then
	eg_ok "revision 2 without lib_version: FAIL (no evidence recorded)"
else
	eg_not_ok "revision 2 without lib_version: exit $rc, want 1"
	sed 's/^/# /' out | head -n 6
fi
# planted: the library's version recorded, and one point's wrong
sed 's/"evidence": {/"evidence": {"lib_version": "1.0", /' new.json >lib.json
sed '0,/"lib_version": "1.0"/s//"lib_version": "0.9"/' lib.json >bad.json
run out --gates lib.gate lib.json
rc_ok=$rc
run out --gates lib.gate bad.json
if [ "$rc_ok" -eq 0 ] && [ "$rc" -eq 1 ] &&
	grep -q '^FAIL .*lib_version 0.9 at .*want 1.0' out; then
	eg_ok "field: lib_version: passes on 1.0, a planted 0.9 fails naming it"
else
	eg_not_ok "field: lib_version: exit $rc_ok and $rc, want 0 and 1"
	sed 's/^/# /' out | head -n 6
fi
sed '2s/"context": {/"context": {"revision": 0, /' "$O/20261202-class.json" >rev0.json
run out --gates lib.gate rev0.json
if [ "$rc" -eq 99 ] && grep -q 'context.revision: expected an integer >= 1' out; then
	eg_ok "a bad revision: refused, naming it"
else
	eg_not_ok "revision 0: exit $rc, want 99"
fi

# regression: one launch per point cannot feed the launch statistics
cat >reg.gate <<'EOF'
profile: older
gates:
  - name: step-regression
    sentence: "The step time does not regress."
    rule: regression
    metric: step_us
    aggregate: median
EOF
f=$O/20261129-one-launch.json
run out --gates reg.gate --baseline "$f" "$f"
if [ "$rc" -eq 0 ] && grep -q '^INCONCLUSIVE .*20261129-one-launch.json: recorded by an older epgate: launches missing; re-record' out &&
	! grep -q 'needs 2 launches' out; then
	eg_ok "regression on one launch per point: 'recorded by an older epgate: launches missing; re-record'"
else
	eg_not_ok "regression on one launch per point: exit $rc"
	sed 's/^/# /' out | head -n 6
fi
f=$O/20261201-launches.json
run out --gates reg.gate --baseline "$f" "$f"
if ! grep -q 'older epgate' out && grep -q 'step-regression' out; then
	eg_ok "regression on the launches of 2026-12-01: judged ($(grep -o '^[A-Z]*  *step-regression' out | cut -d' ' -f1))"
else
	eg_not_ok "regression on 2026-12-01's launches"
	sed 's/^/# /' out | head -n 6
fi

# the report's header shows what the older file says
"$EG_EPGATE" report --results "$O/20261129-one-launch.json" -o p.html >out 2>&1
if grep -q '<tr data-key="nccl"><th>nccl</th><td>2.28.3</td>' p.html &&
	grep -q '<tr data-key="transport_class"><th>transport_class</th><td>socket</td>' p.html; then
	eg_ok "report: the header's evidence of the older file (nccl 2.28.3, socket)"
else
	eg_not_ok "report: no evidence in the header"
	grep -A 12 'id="evidence"' p.html | sed 's/^/# /'
fi
eg_done
