#!/bin/sh
# TAP for every consumer (docs/reports.md, "Harness compatibility"):
# epgate's TAP files as written, version 13 read by Debian 12's prove
# (Test::Harness 3.44, which refuses version 14) and version 14 by npm's
# tap-parser in strict mode (installed by CI, .ci/run; a skip here
# without it). Both must parse every file without an error and count
# the same points as epgate reports.
. "${EG_SRCDIR:-.}/suites/lib.sh"

S=$EG_SRCDIR
SEED=$S/fixtures/campaigns/p5en-ep16.recorded.json
G=$S/gates/p5en-ep16.gate
NODE_PATH=${EPGATE_NODE_PATH:-$(npm root -g 2>/dev/null)}
export NODE_PATH

# the files: a gate run (failures, a skip, YAML), check (a planted fault:
# failures with diagnostics), a batch job's report (skips with reasons)
write() { # VERSION: every file, in $EG_TMP/vVERSION
	d=$EG_TMP/v$1
	mkdir -p "$d"
	"$EG_EPGATE" gate --gates "$G" "$SEED" --tap-version "$1" \
		--tap "$d/gate.tap" --junit "$d/gate.xml" >/dev/null 2>&1
	EPGATE_TAP_VERSION=$1 "$EG_EPGATE" check --quick --engine fault:bitflip \
		--tap "$d/check.tap" --junit "$d/check.xml" >/dev/null 2>&1
	printf 'l2\tw4\t4\t1\t2.0\t-\t-\tkilled\nperf\tlocal\t4\t-\t0\t-\t-\tnot on this host\n' >"$EG_TMP/steps"
	"$EG_EPGATE" job-report --steps "$EG_TMP/steps" --tap-version "$1" \
		--tap "$d/job.tap" --junit "$d/job.xml" >/dev/null 2>&1
}
write 13
write 14
ok=1
for f in gate check job; do
	for v in 13 14; do
		[ "$(head -n 1 "$EG_TMP/v$v/$f.tap")" = "TAP version $v" ] || ok=0
	done
done
if [ "$ok" -eq 1 ] && [ "$(grep -c '^ok\|^not ok' "$EG_TMP/v13/gate.tap")" -eq 16 ] &&
	[ "$(sed 1d "$EG_TMP/v13/gate.tap")" = "$(sed 1d "$EG_TMP/v14/gate.tap")" ]; then
	eg_ok "--tap-version 13|14 and EPGATE_TAP_VERSION: gate, check and job-report write that version line, the rest the same"
else
	eg_not_ok "the version line is not the one asked for"
	head -n 1 "$EG_TMP"/v1[34]/*.tap | sed 's/^/# /'
fi

# counts as epgate writes them: points, not ok, skips, todos
# counts FILE: points, not ok (a TODO among them: tap-parser counts an
# inconclusive gate's "not ok # TODO" as a fail and a todo), skips, todos
counts() {
	printf '%s %s %s %s\n' "$(grep -c '^ok\|^not ok' "$1")" \
		"$(grep -c '^not ok' "$1")" "$(grep -c '^ok .* # SKIP' "$1")" \
		"$(grep -c '^not ok .* # TODO' "$1")"
}

# --- prove (Test::Harness) on version 13: no parse error, same counts
if ! command -v "$PROVE" >/dev/null 2>&1; then
	eg_ok "prove # SKIP no prove here"
else
	pv=$("$PROVE" --version 2>&1 | head -n 1)
	for f in gate check job; do
		"$PROVE" -v -e cat "$EG_TMP/v13/$f.tap" >"$EG_TMP/p.$f" 2>&1
		n=$(counts "$EG_TMP/v13/$f.tap")
		tests=$(sed -n 's/.*Tests: \([0-9]*\).*/\1/p; s/^Files=1, Tests=\([0-9]*\),.*/\1/p' "$EG_TMP/p.$f" | head -n 1)
		if ! grep -q 'Parse errors' "$EG_TMP/p.$f" && [ "$tests" = "${n%% *}" ]; then
			eg_ok "prove ($pv) reads $f.tap (TAP 13): $tests points, no parse error"
		else
			eg_not_ok "prove on $f.tap (TAP 13): $tests points of ${n%% *}"
			grep -i 'parse\|wstat\|Tests' "$EG_TMP/p.$f" | head -n 5 | sed 's/^/# /'
		fi
	done
	# the check catches a broken file: a point gone, the plan wrong
	sed '/^ok 2 /d' "$EG_TMP/v13/gate.tap" >"$EG_TMP/short.tap"
	"$PROVE" -e cat "$EG_TMP/short.tap" >"$EG_TMP/ps" 2>&1
	if grep -q 'Parse errors' "$EG_TMP/ps"; then
		eg_ok "a planted missing point: prove reports a parse error"
	else
		eg_not_ok "prove did not see the missing point"
	fi
	# the reason for 13: this prove refuses 14 (3.48 and later take it)
	"$PROVE" -e cat "$EG_TMP/v14/gate.tap" >"$EG_TMP/p14" 2>&1
	if grep -q "TAP specified version 14 but we don't know about versions later than 13" "$EG_TMP/p14"; then
		eg_ok "this prove refuses TAP 14, as Debian 12's does: --tap-version 13 is what it reads"
	else
		eg_ok "this prove ($pv) takes TAP 14 too"
	fi
fi

# --- npm's tap-parser, strict, on version 14: no error, same counts
if ! node -e 'require("tap-parser")' >/dev/null 2>&1; then
	eg_ok "tap-parser (TAP 14) # SKIP tap-parser not installed (sh setup.sh --report-tools; CI does)"
else
	for f in gate check job; do
		out=$(node "$S/suites/report/tap14.js" "$EG_TMP/v14/$f.tap")
		rc=$?
		set -- $(counts "$EG_TMP/v14/$f.tap")
		if [ "$rc" -eq 0 ] && echo "$out" | grep -q "\"count\":$1,\"pass\":[0-9]*,\"fail\":$2,\"todo\":$4,\"skip\":$3,.*\"errors\":\[\]"; then
			eg_ok "tap-parser --strict reads $f.tap (TAP 14): $out"
		else
			eg_not_ok "tap-parser --strict on $f.tap: exit $rc, $out (want $1 points, $2 failed, $3 skipped, $4 todo)"
		fi
	done
	# the checker catches a file that is not TAP
	sed '3i this line is not TAP' "$EG_TMP/v14/gate.tap" >"$EG_TMP/broken.tap"
	if ! node "$S/suites/report/tap14.js" "$EG_TMP/broken.tap" >"$EG_TMP/b.out"; then
		eg_ok "a planted non-TAP line fails the strict parse: $(cat "$EG_TMP/b.out")"
	else
		eg_not_ok "a planted non-TAP line passed the strict parse"
	fi
fi

# --- bad versions: the option refuses, the environment warns
"$EG_EPGATE" gate --gates "$G" "$SEED" --tap-version 12 --tap "$EG_TMP/x.tap" \
	--junit "$EG_TMP/x.xml" >"$EG_TMP/o" 2>&1
rc=$?
EPGATE_TAP_VERSION=15 "$EG_EPGATE" gate --gates "$G" "$SEED" --tap "$EG_TMP/y.tap" \
	--junit "$EG_TMP/y.xml" >"$EG_TMP/o2" 2>&1
if [ "$rc" -eq 99 ] && grep -q -- '--tap-version "12": want 13 or 14' "$EG_TMP/o" &&
	grep -q 'EPGATE_TAP_VERSION="15": want 13 or 14; writing TAP version 14' "$EG_TMP/o2" &&
	[ "$(head -n 1 "$EG_TMP/y.tap")" = "TAP version 14" ]; then
	eg_ok "--tap-version 12: exit 99 naming it; EPGATE_TAP_VERSION=15: a warning, version 14"
else
	eg_not_ok "bad versions: exit $rc"
	cat "$EG_TMP/o" "$EG_TMP/o2" | sed 's/^/# /'
fi
eg_done
