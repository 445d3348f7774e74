#!/bin/sh
# L2, continued: check --l2 hands its ranks what it is given (a filter,
# keys, --world choosing the jobs, a workloads file), and a planted
# multi-process fault is caught bit for bit in every job.
. "${EG_SRCDIR:-.}/suites/lib.sh"

if ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP epgate built without l2-rank"
	exit 0
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

eg_done
