# Shared helpers of the Slurm tests (sourced by bash scripts): the
# script's own deadline, a two-node Slurm of its own (cluster.sh) torn
# down on every exit, and sbatch --wait with a time limit.
# Exit codes: automake's; 77 with the reason when Slurm cannot start.

# The whole script, teardown included, under a deadline: a stuck job or
# daemon ends as an error, never as a hung CI.
if [ -z "${EG_SLURM_DEADLINE:-}" ]; then
	export EG_SLURM_DEADLINE=${EG_SLURM_TEST_S:-480}
	exec timeout -k 20 "$EG_SLURM_DEADLINE" bash "$0" "$@"
fi

. "${EG_SRCDIR:-.}/suites/lib.sh"
# munged runs as user munge and must reach its socket under here
chmod 755 "$EG_TMP"
SLURM_D=$EG_TMP/slurm
CLUSTER=$EG_SRCDIR/suites/slurm/cluster.sh
export EPGATE_SRC=$EG_SRCDIR EPGATE=$EG_EPGATE EPGATE_RUNS=$EG_TMP/runs
export IPATH_NO_BACKTRACE=1
# every blocking step of a rank: well under a job's time limit
export EPGATE_TIMEOUT=${EPGATE_TIMEOUT:-20}

eg_slurm_stop() {
	if [ -f "$SLURM_D/env" ]; then
		# jobs first (their steps outlive slurmd), then the daemons
		timeout 10 scancel --quiet --user=root >/dev/null 2>&1
		local deadline=$((SECONDS + 20))
		while [ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] &&
			[ "$SECONDS" -lt "$deadline" ]; do
			sleep 0.2
		done
	fi
	"$CLUSTER" stop "$SLURM_D" >/dev/null 2>&1
}
# a failed test keeps Slurm's side of it: what slurmctld and the slurmd
# logged as errors (a step launch that timed out, a task killed), before
# the cluster and its logs go with the temporary folder
eg_slurm_evidence() {
	[ "${eg_fails:-0}" -gt 0 ] || return 0
	echo "# Slurm's logs, their error lines:"
	grep -h -i -E 'error|timed out|kill|signal' "$SLURM_D"/log/*.log 2>/dev/null |
		tail -n 30 | sed 's/^/#   /'
}
trap 'eg_slurm_evidence; eg_slurm_stop; rm -rf "$EG_TMP"' EXIT
trap 'echo "Bail out! deadline or signal"; exit 99' TERM INT HUP

eg_slurm_start() {
	"$CLUSTER" start "$SLURM_D" >"$EG_TMP/cluster.out" 2>&1
	local rc=$?
	if [ "$rc" -eq 77 ]; then
		echo "1..0 # SKIP $(cat "$SLURM_D/skip" 2>/dev/null || tail -n 1 "$EG_TMP/cluster.out")"
		exit 77
	elif [ "$rc" -ne 0 ]; then
		echo "Bail out! cluster.sh start: exit $rc: $(tail -n 3 "$EG_TMP/cluster.out")"
		exit 99
	fi
	. "$SLURM_D/env"
	echo "# $(tail -n 1 "$EG_TMP/cluster.out")"
}

# eg_sbatch NAME SBATCH-ARGS... -- sets rc (sbatch --wait's exit, the
# job's), job (its id), out (its output file), run (its run folder).
eg_sbatch() {
	local name=$1
	shift
	out=$EG_TMP/$name.out
	timeout "${EG_SBATCH_S:-300}" sbatch --wait --time="${EG_JOB_MIN:-5}" \
		--job-name="$name" -o "$out" "$@" >"$EG_TMP/$name.sub" 2>&1
	rc=$?
	job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$EG_TMP/$name.sub")
	run=$(sed -n 's/^epgate.sbatch: .* run folder \(.*\)$/\1/p' "$out" 2>/dev/null | head -n 1)
}

# eg_sacct JOB: "STATE EXIT:SIGNAL" as Slurm recorded it (jobcomp/filetxt).
eg_sacct() {
	timeout 10 sacct -c -j "$1" -n -o state,exitcode 2>/dev/null |
		awk 'NF >= 2 {print $1, $2; exit}'
}

# eg_show FILE...: a failure's evidence, as TAP comments, each line
# ended (a file without a last newline, as jansson writes summary.json,
# would glue the next test's "ok N" to it and hide it from TAP).
eg_show() {
	tail -n 25 "$@" 2>/dev/null | awk '{ print "# " $0 }'
}

# eg_show_jobs FOLDER: the last lines of every L2 job's log in a run
# folder (what a failed job said: its ranks' errors, srun's).
eg_show_jobs() {
	for f in "$1"/l2-*.log; do
		[ -f "$f" ] || continue
		echo "== ${f##*/}"
		tail -n 6 "$f"
	done 2>/dev/null | awk '{ print "# " $0 }'
}

# eg_valid_junit FILE: valid against the XSD.
eg_valid_junit() {
	"$XMLLINT" --noout --schema "$EG_SRCDIR/reports/schema/junit.xsd" "$1" 2>/dev/null
}

# eg_valid_tap FILE: a TAP stream with a plan that matches its points,
# numbered 1..N in order.
eg_valid_tap() {
	awk '/^(not )?ok [0-9]+/ { n++; k = ($1 == "not") ? $3 : $2; if (k != n) bad = 1 }
	     /^1\.\.[0-9]+/ { split($1, p, "\\.\\."); plan = p[2] }
	     END { exit !(plan != "" && plan == n && !bad) }' "$1"
}
