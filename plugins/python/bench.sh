#!/bin/sh
# The Python bridge's own cost per call (a benchmark, not a test; docs/
# python.md, "What the bridge costs"): `epgate bench engine` at one rank
# of the C template, the numpy reference adapter and numpy_ep_replay (the
# reference's first answer returned again: what is left is the bridge),
# each call also timed around the plugin's call (EPGATE_PLUGIN_PHASES=1).
#
#   sh plugins/python/bench.sh [EPGATE] [TOKENS HIDDEN EXPERTS TOPK ITERS]
#
# Run from a build tree (plugin:template and plugin:python found by name).
# Prints one line per engine: dispatch and combine, epgate's step (median)
# and the call itself (mean), microseconds.
set -u
eg=${1:-./epgate}
T=${2:-128} H=${3:-1024} E=${4:-16} K=${5:-4} N=${6:-200}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eg-pybench.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
metric() { # FILE NAME: the first number after the name in rank 0's table
	awk -v m="$2" '$1 == "[0]" && $2 == m { print $3; exit }' "$1"
}
printf "%-36s %12s %12s %12s %12s\n" "engine (T=$T H=$H E=$E K=$K, $N calls)" \
	"dispatch_us" "call_us" "combine_us" "call_us"
for eng in plugin:template plugin:python,module=numpy_ep \
	plugin:python,module=numpy_ep_replay; do
	EPGATE_PLUGIN_PHASES=1 "$eg" launch -n 1 --timeout 600 -- "$eg" bench \
		engine "$eng" --tokens "$T" --hidden "$H" --experts "$E" \
		--topk "$K" -w 20 -n "$N" >"$tmp/out" 2>&1 || {
		echo "$eng: exit $? ($(tail -n 1 "$tmp/out"))"
		continue
	}
	printf "%-36s %12s %12s %12s %12s\n" "$eng" \
		"$(metric "$tmp/out" dispatch_us)" \
		"$(metric "$tmp/out" phase_plugin_dispatch_us)" \
		"$(metric "$tmp/out" combine_us)" \
		"$(metric "$tmp/out" phase_plugin_combine_us)"
done
