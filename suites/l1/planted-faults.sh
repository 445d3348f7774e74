#!/bin/sh
# End to end: each planted-fault engine must make `epgate check` fail
# (exit 1), with a TAP "not ok" whose YAML names the field that caught
# it and a repro line, and a JUnit <failure>. A harness that lets any of
# these through is broken.
. "${EG_SRCDIR:-.}/suites/lib.sh"

while read -r fault field; do
	tap=$EG_TMP/$fault.tap
	xml=$EG_TMP/$fault.xml
	"$EG_EPGATE" check --quick --engine="fault:$fault" --tap="$tap" \
		--junit="$xml" >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -ne 1 ]; then
		eg_not_ok "fault:$fault: exit $rc, want 1"
		continue
	fi
	if grep -q '^not ok' "$tap" &&
		grep -q "^    $field: [1-9]" "$tap" &&
		grep -q '^  repro: epgate check ' "$tap" &&
		grep -q '<failure' "$xml"; then
		eg_ok "fault:$fault caught by $field ($(grep -c '^not ok' "$tap") of $(grep -c '^ok\|^not ok' "$tap") workloads)"
	else
		eg_not_ok "fault:$fault: report does not name $field"
		sed 's/^/# /' "$tap" | head -n 30
	fi
done <<'LIST'
drop-row num_rows
dup-row duplicate_rows
swap-src src
src-id src
weight-slot topk_w
prefix rank_prefix
bitflip x
nan nonfinite
stale x
combine-ulp combine
LIST
eg_done
