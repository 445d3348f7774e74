# Shared by suites/l2/plugin.sh and plugin-nodes.sh (sourced after
# suites/lib.sh): the plugin battery run as one L2 job.
battery=$EG_SRCDIR/fixtures/workloads/plugin-l2.ini
leftovers() { pgrep -f "$EG_TMP" >/dev/null 2>&1; }
bjob() { # name engine world ranks-per-node filter
	rm -f "$EG_TMP/$1.jsonl"
	"$EG_EPGATE" launch -n "$3" --ranks-per-node "$4" --timeout 60 -- \
		"$EG_EPGATE" l2-rank --engine "$2" --iters 2 \
		--workload "$battery" --filter "$5" \
		--results "$EG_TMP/$1.jsonl" >"$EG_TMP/$1.out" 2>&1
}
