#!/bin/sh
# The plugin path in process (L1, world 1, each case in a forked child):
# the template plugin in every layout and key mode passes the world-1
# matrix; a workload it cannot run is a skip; each planted-fault plugin
# built from it ends its case with the right verdict (the field that
# caught it, its own error string, the signal that killed it, the
# deadline), on the workload of the matrix that reaches it; and the
# loader refuses what it must, saying why.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

so=$EG_BUILDDIR/plugins/template/libeg-template.so
matrix=$EG_SRCDIR/fixtures/workloads/plugin-w1.ini
if [ ! -f "$so" ]; then
	echo "1..0 # SKIP $so not built"
	exit 0
fi
n=$(grep -c '^\[' "$matrix")

for opts in "" ",layout=rank" ",layout=expert" ",keys=content" \
	",layout=rank,keys=content" ",layout=expert,keys=content"; do
	"$EG_EPGATE" check --engine "plugin:$so$opts" --workload "$matrix" \
		--tap="$EG_TMP/t.tap" --junit="$EG_TMP/t.xml" >"$EG_TMP/out" 2>&1
	rc=$?
	p=$(grep -c '^ok' "$EG_TMP/t.tap")
	if [ "$rc" -eq 0 ] && [ "$p" -eq "$n" ]; then
		eg_ok "template${opts:-,layout=flat}: $p of $n world-1 workloads pass"
	else
		eg_not_ok "template$opts: exit $rc, $p of $n pass"
		grep -A 20 '^not ok' "$EG_TMP/t.tap" | head -n 40 | sed 's/^/# /'
	fi
done

# a workload beyond world 1: check runs it as a job of ranks
# (suites/l1/plugin-check.sh tests that path)
"$EG_EPGATE" check --engine "plugin:$so" --world=2 --reports="$EG_TMP/runs" \
	--tap="$EG_TMP/s.tap" --junit="$EG_TMP/s.xml" >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^ok 1 - .*W=2 ' "$EG_TMP/s.tap" &&
	grep -q 'jobs of ranks' "$EG_TMP/out"; then
	eg_ok "world 2: the case runs as a job of 2 ranks"
else
	eg_not_ok "world 2: exit $rc"
	sed 's/^/# /' "$EG_TMP/out" | tail -n 20
fi

# planted faults: name, options, the workload that reaches it (the
# fixture says why), what the TAP report must show
while read -r fault opts case want; do
	fso=$EG_BUILDDIR/plugins/faults/libeg-fault-$fault.so
	[ "$opts" = - ] && opts=
	rm -f "$EG_TMP/f.tap"
	t0=$(date +%s)
	# a short deadline for the hang alone: the others keep the default,
	# so a loaded machine cannot turn a slow right call into a hang; the
	# time taken is said, never judged
	set --
	[ "$fault" = hang ] && set -- env EPGATE_TIMEOUT=2
	"$@" "$EG_EPGATE" check --engine "plugin:$fso$opts" \
		--workload "$matrix" --filter "$case" --iters 1 \
		--tap="$EG_TMP/f.tap" --junit="$EG_TMP/f.xml" >"$EG_TMP/out" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	if [ "$rc" -eq 1 ] &&
		grep -q '^not ok' "$EG_TMP/f.tap" &&
		grep -q -- "$want" "$EG_TMP/f.tap" &&
		grep -q '<failure\|<error [^>]*type="crash"' "$EG_TMP/f.xml"; then
		eg_ok "fault $fault caught by $case in ${dt} s: $(grep -m1 -o -- "$want.*" "$EG_TMP/f.tap" | cut -c1-80)"
	else
		eg_not_ok "fault $fault: $case: exit $rc after ${dt} s, report lacks \"$want\""
		sed -n '/^not ok/,$p' "$EG_TMP/f.tap" | head -n 30 | sed 's/^/# /'
	fi
done <<'LIST'
error - p1-base engine_message: .*planted error: the template refuses to dispatch
crash - p1-base killed by signal 11
hang - p1-base did not return within the deadline of 2.0 s
copy-differs ,layout=expert p1-base native_copy: [1-9]
drop-row - p1-base missing_rows: [1-9]
dup-key - p1-base duplicate_rows: [1-9]
bad-count - p1-base native_count: [1-9]
combine-ulp - p1-base combine: [1-9]
positive-rc - p1-base engine_message: .*returns 2 for an error (returned 2
bf16-tail - p1-h1001 native_unwritten: [1-9]
last-chunk - p1-h1001 native_unwritten: [1-9]
scale-pitch - p1-fp8-t21 scales: [1-9]
write-past - p1-base native_guard: [1-9]
input-written - p1-base native_input: [1-9]
unrouted-unwritten - p1-mask-all native_unwritten: [1-9]
expert-id-8bit - p1-e320-t300 topk_idx: [1-9]
token-8bit - p1-e320-t300 native_key: [1-9]
dedup-slots - p1-dup-rand topk_w: [1-9]
dedup-slots ,layout=rank,keys=content p1-dup-rand topk_w: [1-9]
expert-count-rows - p1-dup-rand expert_count of expert [0-9]* (local [0-9]*) on rank 0: got [0-9]*, expected [0-9]*; expert_count counts slots
expert-count-rows ,layout=rank,keys=content p1-e320-t300 expert_count counts slots: the top-k slots of the received rows
masked-times-zero - p1-nonfinite-mask combine: [1-9]
masked-times-zero ,layout=expert p1-nonfinite-fp8 combine: [1-9]
LIST

# a masked slot's weight 0 times rows it reads anyway: 0 x finite changes
# no bit, so every finite case passes; every non-finite case (all with
# masked slots) fails on combine, with NaN where the reference has none
fso=$EG_BUILDDIR/plugins/faults/libeg-fault-masked-times-zero.so
nfc=$(grep -c '^nonfinite *= *[ie]' "$matrix")
"$EG_EPGATE" check --engine "plugin:$fso" --workload "$matrix" --iters 1 \
	--tap="$EG_TMP/m.tap" --junit="$EG_TMP/m.xml" >"$EG_TMP/out" 2>&1
rc=$?
bad=$(grep -c '^not ok' "$EG_TMP/m.tap")
nfbad=$(grep -c '^not ok .* nonfinite=' "$EG_TMP/m.tap")
leak=$(grep -c '^    nonfinite: [1-9]' "$EG_TMP/m.tap")
if [ "$rc" -eq 1 ] && [ "$nfc" -ge 2 ] && [ "$bad" -eq "$nfc" ] &&
	[ "$nfbad" -eq "$nfc" ] && [ "$leak" -eq "$nfc" ]; then
	eg_ok "fault masked-times-zero: the $nfc non-finite cases fail with NaN in other tokens, the other $((n - nfc)) pass"
else
	eg_not_ok "fault masked-times-zero: exit $rc, $bad failed ($nfbad non-finite, of $nfc; $leak with stray NaN/Inf)"
	grep '^not ok' "$EG_TMP/m.tap" | sed 's/^/# /'
	sed 's/^/# /' "$EG_TMP/out" | tail -n 12
fi

# expert_count in rows, not slots: exactly the duplicate-id cases fail,
# each on expert_count alone (without duplicates rows and slots agree)
fso=$EG_BUILDDIR/plugins/faults/libeg-fault-expert-count-rows.so
dups=$(grep -c '^dup *= *0*[.1-9]' "$matrix")
"$EG_EPGATE" check --engine "plugin:$fso" --workload "$matrix" --iters 1 \
	--tap="$EG_TMP/r.tap" --junit="$EG_TMP/r.xml" >"$EG_TMP/out" 2>&1
rc=$?
bad=$(grep -c '^not ok' "$EG_TMP/r.tap")
dupbad=$(grep -c '^not ok .* dup=' "$EG_TMP/r.tap")
others=$(sed -n '/^  wrong:/,/^  first_mismatches:/p' "$EG_TMP/r.tap" |
	grep -v '^  wrong:\|^  first_mismatches:\|expert_count:' | grep -c .)
if [ "$rc" -eq 1 ] && [ "$dups" -ge 2 ] && [ "$bad" -eq "$dups" ] &&
	[ "$dupbad" -eq "$dups" ] && [ "$others" -eq 0 ] &&
	grep -q '^  that is: expert_count of expert' "$EG_TMP/out"; then
	eg_ok "fault expert-count-rows: the $dups duplicate-id cases fail on expert_count alone, the other $((n - dups)) pass"
else
	eg_not_ok "fault expert-count-rows: exit $rc, $bad failed ($dupbad with dup, of $dups), $others other fields wrong"
	grep '^not ok' "$EG_TMP/r.tap" | sed 's/^/# /'
	sed 's/^/# /' "$EG_TMP/out" | tail -n 12
fi

# the scale tier (fixtures/workloads/scale.ini, opt-in: check --scale):
# the faults only the sizes people run show, each on its case
tier=$EG_SRCDIR/fixtures/workloads/scale.ini
while read -r fault case want; do
	fso=$EG_BUILDDIR/plugins/faults/libeg-fault-$fault.so
	"$EG_EPGATE" check --engine "plugin:$fso" --workload "$tier" \
		--filter "$case" --iters 1 --tap="$EG_TMP/z.tap" \
		--junit="$EG_TMP/z.xml" >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q -- "^    $want" "$EG_TMP/z.tap"; then
		eg_ok "fault $fault caught by $case: $(grep -m1 '^FAIL' "$EG_TMP/out" | cut -c1-90)"
	else
		eg_not_ok "fault $fault: $case: exit $rc, report lacks \"$want\""
		sed 's/^/# /' "$EG_TMP/out" | tail -n 12
	fi
done <<'LIST'
staging-8k scale-dsv3 x: [1-9]
recv-index-16bit scale-recv-70k native_key: [1-9]
LIST
nt=$(grep -c '^\[' "$tier")
"$EG_EPGATE" check --engine "plugin:$so" --list >"$EG_TMP/l0" 2>&1
"$EG_EPGATE" check --engine "plugin:$so" --scale --list >"$EG_TMP/l1" 2>&1
if [ "$(grep -c '^scale-' "$EG_TMP/l0")" -eq 0 ] &&
	[ "$(grep -c '^scale-' "$EG_TMP/l1")" -eq "$nt" ]; then
	eg_ok "the scale tier is opt-in: check --scale adds its $nt cases"
else
	eg_not_ok "check --scale: $(grep -c '^scale-' "$EG_TMP/l1") of $nt tier cases listed, $(grep -c '^scale-' "$EG_TMP/l0") without it"
fi

# the loader: a newer ABI and a missing entry are refused, naming why
while read -r variant want; do
	"$EG_EPGATE" check --engine \
		"plugin:$EG_BUILDDIR/plugins/faults/libeg-abi-$variant.so" \
		--world=1 --tap=/dev/null --junit="$EG_TMP/a.xml" >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 99 ] && grep -q -- "$want" "$EG_TMP/out"; then
		eg_ok "abi $variant refused: $(grep -m1 -o -- "$want.*" "$EG_TMP/out" | cut -c1-80)"
	else
		eg_not_ok "abi $variant: exit $rc"
		sed 's/^/# /' "$EG_TMP/out"
	fi
done <<'LIST'
newer built for epgate plugin ABI version 3, but this epgate speaks version 2
no-entry no symbol eg_plugin_entry
LIST
eg_done
