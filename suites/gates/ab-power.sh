#!/bin/sh
# The power of `epgate bench ab`'s default verdict (docs/gates.md, "A/B
# power"): RUNS A/B jobs with B 10% slower at half the points and RUNS
# A/A jobs, on the null backend's modeled steps with a launch spread
# (sim:US~P: each launch of each arm drawn with its own level, P%, heavy
# tailed), each job with its own EPGATE_SIM_SEED, so the counts are the
# same on every run and any machine. Prints the hits (exit 1 on the
# A/B jobs) and the false alarms (exit 1 on the A/A jobs); exits 1 when
# fewer than 19 of 20 are caught or more than 1 of 20 alarm (scaled to
# RUNS). Not in make check (a few minutes): `make ab-power`.
#   usage: ab-power.sh EPGATE [RUNS] [SPREAD%] [LAUNCHES] [-- bench ab options]
usage='usage: ab-power.sh EPGATE [RUNS] [SPREAD%] [LAUNCHES] [-- bench ab options]'
[ $# -ge 1 ] || { echo "$usage" >&2; exit 99; }
E=$1
shift
RUNS=20 P=8 L=6 n=0
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	case $1 in
	'' | *[!0-9]*) echo "ab-power.sh: \"$1\" is not a whole number; $usage" >&2; exit 99 ;;
	esac
	n=$((n + 1))
	case $n in
	1) RUNS=$1 ;;
	2) P=$1 ;;
	3) L=$1 ;;
	*) echo "$usage" >&2; exit 99 ;;
	esac
	shift
done
[ "${1:-}" = -- ] && shift
T=$(mktemp -d) || exit 99
trap 'rm -rf "$T"' EXIT
cat >"$T/p.profile" <<EOF2
profile: abpower
transport: null
repetitions: {warmup: 1, iters: 6, launches: $L}
base: {world: 1, nodes: 1}
sweeps:
  - {name: s, arms: ["sim:50"], axes: {concurrency: [2, 4, 8, 16, 32, 64, 128, 256]}}
EOF2
hits=0 alarms=0 errors=0
i=1
while [ "$i" -le "$RUNS" ]; do
	for k in ab aa; do
		if [ $k = ab ]; then b="sim:50>16:55~$P"; else b="sim:50>16:50~$P"; fi
		EPGATE_SIM_SEED=$i "$E" bench ab "$T/p.profile" --a "sim:50~$P" \
			--b "$b" --arm sim:50 --metric step_us --seed "$i" \
			--reports "$T/runs" "$@" \
			>"$T/$k.$i.out" 2>&1
		rc=$?
		case $k.$rc in
		ab.1) hits=$((hits + 1)) ;;
		aa.1) alarms=$((alarms + 1)) ;;
		*.0) ;;
		*) errors=$((errors + 1)); tail -n 3 "$T/$k.$i.out" ;;
		esac
		printf '%s seed %d: exit %d: %s\n' $k "$i" $rc \
			"$(grep -E '^(FAIL|INCONCLUSIVE) ' "$T/$k.$i.out" | awk '{print $2}' | tr '\n' ' ')"
	done
	i=$((i + 1))
done
echo "ab-power: spread ${P}%, $L launches, 8 points, B +10% at 4: caught $hits of $RUNS, false alarms $alarms of $RUNS"
[ "$errors" -eq 0 ] || { echo "ab-power: $errors job(s) neither passed nor failed"; exit 99; }
[ $((hits * 20)) -ge $((19 * RUNS)) ] && [ $((alarms * 20)) -le "$RUNS" ]
