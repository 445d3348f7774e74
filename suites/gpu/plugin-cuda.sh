#!/bin/sh
# A plugin on CUDA memory: the template engine with its inputs, native
# layout and results in device memory (plugins/template/cuda.c), through
# epgate's device path for plugins: in process at world 1 in each layout
# and key mode, with epgate's NCCL communicator, and over two ranks.
# Skips without CUDA in the build or without a GPU.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

so=$EG_BUILDDIR/plugins/template/libeg-cuda-template.so
matrix=$EG_SRCDIR/fixtures/workloads/plugin-w1.ini
if [ ! -f "$so" ]; then
	echo "1..0 # SKIP built without CUDA"
	exit 0
fi
"$EG_EPGATE" check --engine "plugin:$so" --world=1 --tap="$EG_TMP/p.tap" \
	--junit="$EG_TMP/p.xml" >"$EG_TMP/out" 2>&1
if [ $? -eq 77 ]; then
	echo "1..0 # SKIP $(grep -m1 -o "SKIP.*" "$EG_TMP/p.tap" | sed "s/^SKIP //")"
	exit 0
fi
n=$(grep -c '^\[' "$matrix")
for opts in "" ",layout=expert" ",layout=rank,keys=content" ",nccl=1"; do
	"$EG_EPGATE" check --engine "plugin:$so$opts" --workload "$matrix" \
		--tap="$EG_TMP/t.tap" --junit="$EG_TMP/t.xml" >"$EG_TMP/out" 2>&1
	rc=$?
	p=$(grep -c '^ok' "$EG_TMP/t.tap")
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "cuda template${opts}: $p of $n world-1 workloads pass"
	else
		eg_not_ok "cuda template$opts: exit $rc, $p of $n pass"
		grep -A 20 '^not ok' "$EG_TMP/t.tap" | head -n 40 | sed 's/^/# /'
		tail -n 5 "$EG_TMP/out" | sed 's/^/# /'
	fi
done
if "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	"$EG_EPGATE" launch -n 2 --timeout 120 -- "$EG_EPGATE" l2-rank \
		--engine "plugin:$so,layout=expert" \
		--workload "$EG_SRCDIR/fixtures/workloads/l2-matrix.ini" \
		--results "$EG_TMP/l2.jsonl" >"$EG_TMP/l2.out" 2>&1
	rc=$?
	p=$(grep -c '"status":"pass"' "$EG_TMP/l2.jsonl" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$p" -ge 15 ]; then
		eg_ok "cuda template over 2 ranks: $p workloads pass"
	else
		eg_not_ok "cuda template over 2 ranks: exit $rc, $p pass"
		tail -n 20 "$EG_TMP/l2.out" | sed 's/^/# /'
	fi
fi
eg_done
