#!/bin/sh
# L2, continued: the shapes of the matrix (docs/l2.md, "Shapes") catch
# the planted faults that once passed every test -- another reduction
# order, a row's tail summed wrong, an expert mapped to its rank with a
# shift, send lists kept from the first step -- each where its shape is,
# passing where it cannot show; and check --full names its L2 reports
# check-l2.tap and check-l2.junit.xml.
. "${EG_SRCDIR:-.}/suites/lib.sh"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 0
fi

l2check() {
	out=$1
	shift
	EPGATE_TIMEOUT=20 "$EG_EPGATE" check --l2 --reports="$EG_TMP/runs-$out" \
		--tap="$EG_TMP/$out.tap" --junit="$EG_TMP/$out.xml" "$@" \
		>"$EG_TMP/$out.out" 2>&1
}
points() { grep -c '^ok\|^not ok' "$EG_TMP/$1.tap"; }

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

# --- check --full writes its L2 reports beside L1's: check-l2.tap and
# check-l2.junit.xml (not check.tap.l2.tap); one W=2 workload, in L1 and
# in the W=2 jobs of the full set
printf '[mine-w2]\nworld = 2\nexperts = 8\ntopk = 2\ntokens = 6\n' \
	>"$EG_TMP/mine.ini"
"$EG_EPGATE" check --full --workload "$EG_TMP/mine.ini" \
	--reports "$EG_TMP/runs-full" >"$EG_TMP/full.out" 2>&1
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

eg_done
