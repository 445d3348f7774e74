#!/bin/sh
# The production-scale tier (fixtures/workloads/scale.ini, issue 36)
# within its memory budget, 2 GiB of address space a process (ulimit -v:
# a case beyond it fails its allocation, shown below with 1 GiB): the
# self engine and the template pass every case, and DeepSeek-V3's
# prefill batch (4096 tokens of 7168 channels); the planted faults only
# these sizes show fail their case and pass the other.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

tier=$EG_SRCDIR/fixtures/workloads/scale.ini
tpl=$EG_BUILDDIR/plugins/template/libeg-template.so
f=$EG_BUILDDIR/plugins/faults
if [ ! -f "$tpl" ] || [ ! -f "$f/libeg-fault-staging-8k.so" ]; then
	echo "1..0 # SKIP the template plugins are not built"
	exit 0
fi
n=$(grep -c '^\[' "$tier")
budget=2097152 # KiB: 2 GiB

# run NAME KIB ENGINE ARGS...: check under a ulimit -v of KIB
run() {
	nm=$1
	kib=$2
	e=$3
	shift 3
	(
		# dash's and bash's ulimit have -v (POSIX's has only -f)
		# shellcheck disable=SC3045
		ulimit -v "$kib" || exit 99
		"$EG_EPGATE" check --engine "$e" --workload "$tier" --iters 1 \
			--tap="$EG_TMP/$nm.tap" --junit="$EG_TMP/$nm.xml" "$@" \
			>"$EG_TMP/$nm.out" 2>&1
	)
	rc=$?
}

for e in self "plugin:$tpl"; do
	t0=$(date +%s)
	run pass $budget "$e"
	p=$(grep -c '^ok' "$EG_TMP/pass.tap")
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "$e: the $n cases of the tier pass within 2 GiB in $(($(date +%s) - t0)) s"
	else
		eg_not_ok "$e: exit $rc, $p of $n pass"
		sed 's/^/# /' "$EG_TMP/pass.out" | tail -n 12
	fi
done

t0=$(date +%s)
run prefill $budget "plugin:$tpl" --filter scale-dsv3 --tokens=4096
if [ "$rc" -eq 0 ] && grep -q '^ok 1 - .*H=7168 T=4096' "$EG_TMP/prefill.tap"; then
	eg_ok "template: DeepSeek-V3's prefill batch (4096 x 7168 bf16) passes within 2 GiB in $(($(date +%s) - t0)) s"
else
	eg_not_ok "template: the 4096-token DeepSeek-V3 case: exit $rc"
	sed 's/^/# /' "$EG_TMP/prefill.out" | tail -n 12
fi

# the budget holds: half of it is too little for that batch
run small 1048576 "plugin:$tpl" --filter scale-dsv3 --tokens=4096
if [ "$rc" -eq 1 ] && grep -q 'Cannot allocate memory' "$EG_TMP/small.out"; then
	eg_ok "the bound is real: under 1 GiB the batch fails: $(grep -m1 -o 'create returned.*' "$EG_TMP/small.out" | cut -c1-80)"
else
	eg_not_ok "under 1 GiB: exit $rc"
	sed 's/^/# /' "$EG_TMP/small.out" | tail -n 8
fi

# each fault fails its case (the field named) and passes the other
while read -r fault case want; do
	run "f-$fault" $budget "plugin:$f/libeg-fault-$fault.so"
	tap=$EG_TMP/f-$fault.tap
	if [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$tap")" -eq 1 ] &&
		grep -q "^not ok .* - $case:" "$tap" &&
		grep -q -- "^    $want" "$tap"; then
		eg_ok "fault $fault: fails $case alone ($(grep -m1 -o -- "$want.*" "$tap"))"
	else
		eg_not_ok "fault $fault: exit $rc, $(grep -c '^not ok' "$tap") failed, want $case with \"$want\""
		grep '^not ok' "$tap" | sed 's/^/# /'
	fi
done <<'LIST'
staging-8k scale-dsv3 x: [1-9]
recv-index-16bit scale-recv-70k native_key: [1-9]
LIST
eg_done
