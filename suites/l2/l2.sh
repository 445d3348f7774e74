#!/bin/sh
# L2: the multi-process engines over libfabric (the quick configuration
# set), the planted faults the shapes of the matrix exist to catch
# (another reduction order, a row's tail summed wrong, an expert mapped to
# its rank with a shift, send lists kept from the first step), then the
# fault tests: a rank killed in the middle of a dispatch, a rank that
# stalls, each ending in a reported error (not in the launcher's guard
# deadline), with every process gone and earlier results intact. Nothing
# is timed against a clock.
. "${EG_SRCDIR:-.}/suites/lib.sh"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 77
fi
leftovers() { pgrep -f "$EG_TMP" >/dev/null 2>&1; }

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

# --- check --l2 hands what it is given to the ranks: a filter and keys
# (H=32 as the ranks report it back), --world choosing the jobs, a file
l2check() {
	out=$1
	shift
	EPGATE_TIMEOUT=20 "$EG_EPGATE" check --l2 --reports="$EG_TMP/runs-$out" \
		--tap="$EG_TMP/$out.tap" --junit="$EG_TMP/$out.xml" "$@" \
		>"$EG_TMP/$out.out" 2>&1
}
points() { grep -c '^ok\|^not ok' "$EG_TMP/$1.tap"; }
l2check keys --filter w3-base --hidden=32
rc=$?
n=$(grep -c '^ok [0-9]* - l2 [^:]*: w3-base: W=3 .*H=32 ' "$EG_TMP/keys.tap")
if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && [ "$(points keys)" -eq 2 ]; then
	eg_ok "check --l2 --filter w3-base --hidden=32: the two W=3 jobs ran w3-base alone, H=32 on the ranks"
else
	eg_not_ok "check --l2 --filter w3-base --hidden=32: exit $rc, $n of $(points keys) points right"
	sed 's/^/# /' "$EG_TMP/keys.tap" | head -n 20
fi
l2check world --filter w4-base --world=2
rc=$?
if [ "$rc" -eq 0 ] && [ "$(points world)" -eq 1 ] &&
	grep -q '^ok 1 - l2 a2a.w2.n1.tcp.k1: w4-base: W=2 ' "$EG_TMP/world.tap"; then
	eg_ok "check --l2 --world=2: only the W=2 job, and its ranks ran W=2"
else
	eg_not_ok "check --l2 --filter w4-base --world=2: exit $rc, $(points world) points"
	sed 's/^/# /' "$EG_TMP/world.tap" | head -n 20
fi
cat >"$EG_TMP/mine.ini" <<'EOF'
experts = 12
topk = 3
[mine-w2]
world = 2
tokens = 5
[mine-w3]
world = 3
tokens = 7
EOF
l2check file --workload "$EG_TMP/mine.ini"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(points file)" -eq 3 ] &&
	[ "$(grep -c '^ok [0-9]* - l2 [^:]*: mine-w[23]: ' "$EG_TMP/file.tap")" -eq 3 ]; then
	eg_ok "check --l2 --workload FILE: its 2 workloads in the 3 jobs of their worlds"
else
	eg_not_ok "check --l2 --workload FILE: exit $rc, $(points file) points"
	sed 's/^/# /' "$EG_TMP/file.tap" | head -n 20
fi

# --- check --full writes its L2 reports beside L1's: check-l2.tap and
# check-l2.junit.xml (not check.tap.l2.tap); the W=2 part of the full set
"$EG_EPGATE" check --full --filter w2-base --reports "$EG_TMP/runs-full" \
	>"$EG_TMP/full.out" 2>&1
rc=$?
dir=$(ls -d "$EG_TMP"/runs-full/*/ 2>/dev/null | head -n 1)
if [ "$rc" -eq 0 ] && [ -s "${dir}check-l2.tap" ] &&
	[ -s "${dir}check-l2.junit.xml" ] &&
	[ "$(grep -c '^ok' "${dir}check-l2.tap")" -ge 8 ] &&
	! ls "$dir" | grep -q '\.l2\.'; then
	eg_ok "check --full: L2 reports check-l2.tap and check-l2.junit.xml ($(grep -c '^ok' "${dir}check-l2.tap") W=2 jobs)"
else
	eg_not_ok "check --full: exit $rc, reports: $(ls "$dir" 2>/dev/null | tr '\n' ' ')"
	tail -n 5 "$EG_TMP/full.out" | sed 's/^/# /'
fi

# --- a planted multi-process fault (docs/faults.md): fault:order claims
# the canonical order and sums combine in another; random data must fail
# bit for bit. Rank 1 has no tokens, so it finds nothing wrong while its
# peers do: every rank still runs every iteration, and each job ends with
# the mismatch named, not with a peer waiting for a deadline.
l2check order --engine fault:order --filter w4-rand-bf16 --zero_ranks=1
rc=$?
bad=$(grep -c '^not ok [0-9]* - l2 fault-order.w4[^:]*: w4-rand-bf16' "$EG_TMP/order.tap")
if [ "$rc" -eq 1 ] && [ "$bad" -eq 5 ] && [ "$(points order)" -eq 5 ] &&
	[ "$(grep -c '^  stage: combine' "$EG_TMP/order.tap")" -eq 5 ] &&
	[ "$(grep -c '^    combine: [1-9]' "$EG_TMP/order.tap")" -eq 5 ] &&
	! grep -q ' job$' "$EG_TMP/order.tap" &&
	! grep -q 'deadline' "$EG_TMP"/runs-order/*/*.log; then
	eg_ok "fault:order caught bit for bit in all 5 W=4 jobs (combine named, no job error, no deadline)"
else
	eg_not_ok "fault:order: exit $rc, $bad of $(points order) jobs caught"
	sed 's/^/# /' "$EG_TMP/order.tap" | head -n 30
	tail -n 5 "$EG_TMP"/runs-order/*/*.log | sed 's/^/# /'
fi

# --- the planted faults that survived every test before the matrix had
# its shapes (docs/faults.md): each is caught where its shape is, and
# passes where the shape cannot show it.
# fault:order on fp32 random data with top-k 4: every job of W >= 3
# fails at combine; W = 2 cannot show an order and passes.
l2check order32 --engine fault:order --filter e6-rand-fp32
rc=$?
bad=$(grep -c '^not ok [0-9]* - l2 fault-order.w[34][^:]*: w[34]-e6-rand-fp32' "$EG_TMP/order32.tap")
w2=$(grep -c '^ok [0-9]* - l2 fault-order.w2[^:]*: w2-e6-rand-fp32' "$EG_TMP/order32.tap")
if [ "$rc" -eq 1 ] && [ "$bad" -ge 3 ] && [ "$w2" -eq 1 ] &&
	[ "$((bad + w2))" -eq "$(points order32)" ] &&
	[ "$(grep -c '^  stage: combine' "$EG_TMP/order32.tap")" -eq "$bad" ]; then
	eg_ok "fault:order on fp32 random data: caught in all $bad jobs of W=3 and 4, the W=2 job passes"
else
	eg_not_ok "fault:order on fp32 random data: exit $rc, $bad caught, $w2 W=2 passes of $(points order32)"
	sed 's/^/# /' "$EG_TMP/order32.tap" | head -n 30
fi
# faultcase NAME ENGINE CATCH STAGE PASS: ENGINE fails every W=3 job of
# workload CATCH at STAGE and passes every one of PASS
faultcase() {
	l2check "$1" --engine "$2" --filter "$3"
	rc1=$?
	n1=$(points "$1")
	bad=$(grep -c "^not ok [0-9]* - l2 [^:]*: $3: " "$EG_TMP/$1.tap")
	stg=$(grep -c "^  stage: $4" "$EG_TMP/$1.tap")
	l2check "$1-ok" --engine "$2" --filter "$5"
	rc2=$?
	good=$(grep -c "^ok [0-9]* - l2 [^:]*: $5: " "$EG_TMP/$1-ok.tap")
	if [ "$rc1" -eq 1 ] && [ "$n1" -ge 1 ] && [ "$bad" -eq "$n1" ] &&
		[ "$stg" -eq "$n1" ] && [ "$rc2" -eq 0 ] &&
		[ "$good" -eq "$(points "$1-ok")" ] && [ "$good" -ge 1 ]; then
		eg_ok "$2: caught at $4 in all $n1 jobs of $3, passes $5"
	else
		eg_not_ok "$2: $3 exit $rc1 ($bad of $n1 caught at $4: $stg), $5 exit $rc2"
		sed 's/^/# /' "$EG_TMP/$1.tap" "$EG_TMP/$1-ok.tap" | head -n 30
	fi
}
# a combine whose unrolled loop sums a row's tail from the wrong place:
# H = 24 (8 mod 16) shows it, H = 97 does not
faultcase tail fault:tail w3-e3-h24 combine w3-e5-h97
# expert to rank with a shift: 5 experts per rank show it, 4 do not
faultcase shift fault:shift w3-e5-h97 dispatch w3-base
# send lists built on the first dispatch and kept: the steps (routing,
# token counts and the empty rank changing) show it, iterations do not
faultcase cache fault:route-cache w3-steps dispatch w3-base

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
