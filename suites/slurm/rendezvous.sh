#!/bin/bash
# The rendezvous under srun on a real two-node Slurm (cluster.sh): rank 0
# is found by the step's first node name; when that name does not
# resolve, the others fail in seconds saying what to set, and
# EPGATE_ROOT_ADDR gives the address; a wrongly placed task is named and,
# with --kill-on-bad-exit, ends its step at once; across nodes the
# automatic choice's fallback to tcp is a warning. docs/world.md.
. "${EG_SRCDIR:-.}/suites/slurm/lib.sh"
eg_slurm_start
export EPGATE_SECRET=0123456789abcdef0123456789abcdef

# l2 NAME SRUN-ARGS... -- ENV...: an l2-rank step (w2/w4-base only) with
# the variables given set in every task; sets rc, dt.
l2() {
	local name=$1 a=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a+=("$1")
		shift
	done
	shift
	local t0=$SECONDS
	# each task's output straight to its own file (slurmstepd writes it):
	# srun's forwarding can drop a task's last line when the step is
	# killed at once (--kill-on-bad-exit)
	rm -f "$EG_TMP/$name".task*.log
	timeout 120 srun --kill-on-bad-exit=1 --time=2 \
		--output="$EG_TMP/$name.task%t.log" "${a[@]}" \
		env "$@" "$EG_EPGATE" l2-rank --filter -base </dev/null >"$EG_TMP/$name.log" 2>&1
	rc=$?
	dt=$((SECONDS - t0))
	cat "$EG_TMP/$name".task*.log >>"$EG_TMP/$name.log" 2>/dev/null
}

# --- the step's first node does not resolve (a name the nodes' resolver
# does not know): the ranks' deadline is 60 s, the failure comes first
NOHOST=(SLURM_STEP_NODELIST=eg-no-such-node SLURM_JOB_NODELIST=eg-no-such-node)
l2 nohost -N 2 -n 2 -m block -- "${NOHOST[@]}" EPGATE_TIMEOUT=60
if [ "$rc" -ne 0 ] && [ "$dt" -le 30 ] &&
	grep -q 'host "eg-no-such-node" (first node of SLURM_STEP_NODELIST) does not resolve.*set EPGATE_ROOT_ADDR' "$EG_TMP/nohost.log"; then
	eg_ok "an unresolvable first node fails in ${dt} s, not 60: $(grep -m1 -o 'cannot find rank 0: .*' "$EG_TMP/nohost.log" | cut -c1-120)..."
else
	eg_not_ok "an unresolvable first node: exit $rc after ${dt} s (deadline 60 s)"
	eg_show "$EG_TMP/nohost.log"
fi
# EPGATE_ROOT_ADDR gives rank 0's address instead
l2 rootaddr -N 2 -n 2 -m block -- "${NOHOST[@]}" EPGATE_TIMEOUT=60 EPGATE_ROOT_ADDR=127.0.0.1
if [ "$rc" -eq 0 ] && grep -q '^l2: 1 workloads' "$EG_TMP/rootaddr.log"; then
	eg_ok "EPGATE_ROOT_ADDR=127.0.0.1 with the same unresolvable name: the step passes"
else
	eg_not_ok "EPGATE_ROOT_ADDR=127.0.0.1: exit $rc"
	eg_show "$EG_TMP/rootaddr.log"
fi
# with a port of its own
l2 rootport -N 2 -n 4 --ntasks-per-node=2 -m block -- "${NOHOST[@]}" EPGATE_ROOT_ADDR=127.0.0.1:$((30000 + RANDOM % 20000))
if [ "$rc" -eq 0 ] && grep -q 'providers intra=shm inter=tcp;ofi_rxm' "$EG_TMP/rootport.log"; then
	eg_ok "EPGATE_ROOT_ADDR=127.0.0.1:PORT: 4 ranks on 2 nodes pass"
else
	eg_not_ok "EPGATE_ROOT_ADDR=127.0.0.1:PORT: exit $rc"
	eg_show "$EG_TMP/rootport.log"
fi

# --- tasks in cyclic layout: named, and the step ends at once
l2 cyclic -N 2 -n 4 --ntasks-per-node=2 -m cyclic -- EPGATE_TIMEOUT=60
if [ "$rc" -ne 0 ] && [ "$dt" -le 30 ] &&
	grep -q 'should be on node .* (use block distribution: srun -m block)' "$EG_TMP/cyclic.log"; then
	eg_ok "srun -m cyclic: exit $rc in ${dt} s: $(grep -m1 -o 'SLURM_NODEID=.*' "$EG_TMP/cyclic.log")"
else
	eg_not_ok "srun -m cyclic: exit $rc in ${dt} s, want the layout named within 30 s"
	eg_show "$EG_TMP/cyclic.log"
fi

# --- across nodes the automatic choice tries efa and falls back to tcp:
# said once per step, by rank 0
l2 auto -N 2 -n 4 --ntasks-per-node=2 -m block -- EPGATE_TIMEOUT=60
n=$(grep -c 'epgate: warning: provider efa is not on this host.*cross-node traffic falls back to tcp;ofi_rxm' "$EG_TMP/auto.log")
if [ "$rc" -eq 0 ] && [ "$n" -eq 1 ] &&
	grep -q 'providers intra=shm inter=tcp;ofi_rxm' "$EG_TMP/auto.log"; then
	eg_ok "the automatic fallback to tcp across nodes: one warning in the step's output"
else
	eg_not_ok "the automatic fallback to tcp across nodes: exit $rc, $n warnings (want 1)"
	eg_show "$EG_TMP/auto.log"
fi
eg_done
