#!/bin/sh
# Signal storm: stop signals sent to running jobs, again and again, must
# end them cleanly: no crash (no rank or driver "killed by signal 11",
# no exit 1 for a stop), no hang (every job ends by itself, under a
# watchdog), no PSM backtrace file (*.btr). epgate owns its signal
# dispositions (lib/world/signals.c): IPATH_NO_BACKTRACE is unset here on
# purpose, so that libfabric's PSM installs its handlers in every process
# unless epgate resets them. Bounded: a fixed number of jobs, each under
# a watchdog; no fixed sleeps (readiness is polled, with a cap).
# Skips (77) without libfabric.
. "${EG_SRCDIR:-.}/suites/lib.sh"

unset IPATH_NO_BACKTRACE
: "${EG_SIGNAL_JOBS:=6}"
# (b)'s jobs that signal one rank: more of them measure how often the
# launcher blames the wrong rank (docs/perf-notes.md, 2026-12-08);
# EG_SIGNAL_SETTLE: the launcher's --settle (0: none, as before it)
: "${EG_SIGNAL_RANK_JOBS:=1}"
wd=$EG_TMP/wd
mkdir -p "$wd"
cd "$wd" || exit 99 # a .btr file lands in the working directory

if ! "$EG_EPGATE" launch -n 2 -- "$EG_EPGATE" l2-rank --filter w2-base \
	--iters 1 >"$EG_TMP/probe" 2>&1; then
	if grep -q 'built without libfabric' "$EG_TMP/probe"; then
		echo "1..0 # SKIP built without libfabric"
		exit 0
	fi
	eg_not_ok "a plain L2 job before the storm"
	sed 's/^/# /' "$EG_TMP/probe" | tail -n 20
fi

# children PID: the pids whose parent is PID
children() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' '; }

# threads PID: how many threads PID runs (0 when gone)
threads() { ls "/proc/$1/task" 2>/dev/null | wc -l; }

# ready LAUNCHER N T: until the launcher has N children each running at
# least T threads (the transport's progress threads: the ranks are in
# their run loop); 20 s at most. Prints the ranks' pids.
ready() {
	_t=0
	while [ $_t -lt 400 ]; do
		ranks=$(children "$1")
		n=0 up=0
		for p in $ranks; do
			n=$((n + 1))
			[ "$(threads "$p")" -ge "$3" ] && up=$((up + 1))
		done
		if [ "$n" -eq "$2" ] && [ "$up" -eq "$2" ]; then
			echo "$ranks"
			return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
		_t=$((_t + 1))
	done
	return 1
}

# Whatever a failed check leaves running (launchers, drivers) goes.
started=
eg_cleanup() {
	for p in $started; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p"
	done
}
trap 'eg_cleanup; rm -rf "$EG_TMP"' EXIT
trap 'exit 99' INT TERM

btr() { find "$wd" -name '*.btr' | wc -l; }

jobs=0 signals=0 crashes=0 hangs=0 stops_bad=0

# job OUT ARGS...: an L2 job that runs until stopped, in the background;
# sets lp.
job() {
	out=$1
	shift
	"$EG_EPGATE" launch -n 3 --ranks-per-node 3 \
		${EG_SIGNAL_SETTLE:+--settle "$EG_SIGNAL_SETTLE"} -- \
		"$EG_EPGATE" l2-rank --filter w3-base --iters 1000000 "$@" \
		>"$out" 2>&1 &
	lp=$!
	started="$started $lp"
	jobs=$((jobs + 1))
}

# reap PID: waits for PID, at most 60 s (the watchdog: then SIGKILL and
# status 124, a hang); sets rc.
reap() {
	k=0
	while kill -0 "$1" 2>/dev/null && [ $k -lt 1200 ]; do
		sleep 0.05
		k=$((k + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1"
		wait "$1"
		rc=124
	else
		wait "$1"
		rc=$?
	fi
}

# judge OUT RC: counts a crash (a signal the launcher did not send, or a
# segfault anywhere) and a hang (the watchdog's 124).
judge() {
	if [ "$2" -eq 124 ]; then
		hangs=$((hangs + 1))
		return 1
	fi
	if grep -Eq 'signal (11|7|4|6)|Segmentation|Backtrace' "$1"; then
		crashes=$((crashes + 1))
		return 1
	fi
	return 0
}

# (a) SIGTERM to the launcher of running jobs: every rank stopped by the
# launcher's one SIGTERM, reported as stopped, exit 99.
i=0
while [ $i -lt "$EG_SIGNAL_JOBS" ]; do
	case $((i % 4)) in
	0) opt="--provider shm --num-comms 1" ;;
	1) opt="--provider shm --num-comms 4" ;;
	2) opt="--provider tcp --num-comms 2" ;;
	*) opt="--num-comms 4" ;;
	esac
	out=$EG_TMP/a$i
	# shellcheck disable=SC2086
	job "$out" $opt
	if ready "$lp" 3 2 >/dev/null; then
		kill -TERM "$lp"
		signals=$((signals + 1))
	fi
	reap "$lp"
	what="SIGTERM to a running job ($opt)"
	if judge "$out" "$rc" && [ "$rc" -eq 99 ] &&
		grep -q '^\[launch\] got SIGTERM; stopping ranks 0, 1, 2' "$out" &&
		[ "$(grep -c '^\[launch\] rank [0-2] stopped by signal 15$' "$out")" -eq 3 ] &&
		! grep -q 'exited with status\|killed by signal' "$out"; then
		eg_ok "$what: 3 ranks stopped by signal 15, exit 99"
	else
		stops_bad=$((stops_bad + 1))
		eg_not_ok "$what: exit $rc"
		sed 's/^/# /' "$out" | tail -n 15
	fi
	i=$((i + 1))
done

# (b) two signals at once to the launcher, then to one rank: SIGTERM and
# SIGINT back to back. The launcher's second signal means SIGKILL now;
# a rank dies of the first one (default disposition), never of a crash.
i=0
while [ $i -lt $((1 + EG_SIGNAL_RANK_JOBS)) ]; do
	out=$EG_TMP/b$i
	job "$out" --provider shm --num-comms 2
	if ranks=$(ready "$lp" 3 2); then
		if [ $i -eq 0 ]; then
			kill -TERM "$lp"
			kill -INT "$lp"
		else
			r=$(echo "$ranks" | sed -n 2p)
			kill -TERM "$r"
			kill -INT "$r"
		fi
		signals=$((signals + 2))
	fi
	reap "$lp"
	if [ $i -eq 0 ]; then
		what="SIGTERM and SIGINT at once to the launcher"
		# pending signals arrive lowest number first: SIGINT
		want='^\[launch\] got SIG\(TERM\|INT\); stopping ranks'
	else
		what="SIGTERM and SIGINT at once to one rank"
		want='^\[launch\] rank 1 killed by signal \(15\|2\)$'
	fi
	if judge "$out" "$rc" && [ "$rc" -eq 99 ] && grep -q "$want" "$out" &&
		! grep -q 'exited with status' "$out"; then
		eg_ok "$what: exit 99, no crash"
	else
		stops_bad=$((stops_bad + 1))
		eg_not_ok "$what: exit $rc"
		sed 's/^/# /' "$out" | tail -n 15
	fi
	i=$((i + 1))
done

# (c) SIGTERM to every rank at once (as srun stops a step): each dies of
# it, none exits 1 as if it had failed a check.
out=$EG_TMP/c
job "$out" --provider tcp --num-comms 2
if ranks=$(ready "$lp" 3 2); then
	# shellcheck disable=SC2086
	kill -TERM $ranks
	signals=$((signals + 3))
fi
reap "$lp"
if judge "$out" "$rc" && [ "$rc" -eq 99 ] &&
	grep -q '^\[launch\] rank [0-2] killed by signal 15$' "$out" &&
	! grep -q 'exited with status' "$out"; then
	eg_ok "SIGTERM to every rank at once: they die of it, exit 99"
else
	stops_bad=$((stops_bad + 1))
	eg_not_ok "SIGTERM to every rank at once: exit $rc"
	sed 's/^/# /' "$out" | tail -n 15
fi

# (d) SIGTERM to the driver (`epgate check --l2`) while its job runs: it
# dies of the signal (shell status 143, not a failing 1) and takes its
# launcher and ranks along (the job's PR_SET_PDEATHSIG).
i=0
while [ $i -lt 2 ]; do
	out=$EG_TMP/d$i
	"$EG_EPGATE" check --l2 --filter w3-base \
		--iters 1000000 --reports "$EG_TMP/runs" >"$out" 2>&1 &
	dp=$!
	started="$started $dp"
	jobs=$((jobs + 1))
	ok=0
	t=0
	while [ $t -lt 400 ] && [ $ok -eq 0 ]; do
		for l in $(children "$dp"); do
			ready "$l" 3 2 >/dev/null && ok=1 && lp=$l &&
				started="$started $lp"
			break
		done
		t=$((t + 1))
		[ $ok -eq 0 ] && sleep 0.05
	done
	if [ $ok -eq 1 ]; then
		kill -TERM "$dp"
		signals=$((signals + 1))
	fi
	reap "$dp"
	# the launcher ends by itself once its driver is gone
	k=0
	while kill -0 "$lp" 2>/dev/null && [ $k -lt 400 ]; do
		sleep 0.05
		k=$((k + 1))
	done
	left=0
	kill -0 "$lp" 2>/dev/null && left=1 && hangs=$((hangs + 1))
	if judge "$out" "$rc" && [ $ok -eq 1 ] && [ "$rc" -eq 143 ] &&
		[ $left -eq 0 ]; then
		eg_ok "SIGTERM to check --l2: dies of it (143), its job stops"
	else
		stops_bad=$((stops_bad + 1))
		eg_not_ok "SIGTERM to check --l2: ready $ok, exit $rc, launcher left $left"
		sed 's/^/# /' "$out" | tail -n 15
	fi
	i=$((i + 1))
done

n=$(btr)
if [ "$n" -eq 0 ]; then
	eg_ok "no .btr backtrace file written"
else
	eg_not_ok "$n .btr backtrace files written"
	find "$wd" -name '*.btr' | head -n 3 | sed 's/^/# /'
fi
echo "# storm: $jobs jobs, $signals signals, $crashes crashes, $hangs hangs, $stops_bad bad stops, $n .btr files"
eg_done
