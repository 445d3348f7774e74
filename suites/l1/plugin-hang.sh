#!/bin/sh
# A plugin that hangs, in `epgate check` (docs/plugins.md, "Verdicts"
# and "Hangs"). Every rank hanging at once (the planted hang-empty: a
# dispatch no rank has tokens for), with no peer left waiting, is the
# case's FAIL naming the call that did not return and where (each
# rank's call is bounded), and a new job runs the cases after it, in L1 and L2 (exit 1, never the 99 of
# a job whose log names no cause). A plugin that hangs in every case (the
# planted hang) stops `check` after 3 hangs: the cases left skipped
# saying why, the progress and the last line saying so; --max-hangs and
# EPGATE_MAX_HANGS set the count (the option wins), 0 runs every case.
# Short deadlines (EPGATE_TIMEOUT) keep each hang short; nothing here
# measures a time.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/check-lib.sh"
if [ ! -f "$so" ] || [ ! -f "$f/libeg-fault-hang-empty.so" ] ||
	! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP the template plugin, its faults or l2-rank not built"
	exit 0
fi
# world 2: a case before the empty one, the empty one, a case after it
zf=$EG_TMP/zero.ini
cat >"$zf" <<'INI'
hidden = 64
topk = 2
world = 2
experts = 8
[pz2-base]
tokens = 16
[pz2-zero]
tokens = 0
[pz2-after]
tokens = 12
INI
# six cases over worlds 1, 2 and 3: the planted hang hangs in each
hf=$EG_TMP/hangs.ini
cat >"$hf" <<'INI'
hidden = 64
topk = 2
experts = 8
[ph1-a]
world = 1
tokens = 16
[ph1-b]
world = 1
tokens = 8
[ph2-a]
world = 2
tokens = 16
[ph2-b]
world = 2
tokens = 12
[ph2-c]
world = 2
tokens = 8
[ph3-a]
world = 3
experts = 6
tokens = 16
INI

# --- the fixture passes with the template: only the fault fails it
chk tpl "plugin:$so" --workload "$zf" --iters 1
if [ "$rc" -eq 0 ] && [ "$(last tpl)" = "PASS: 3 passed, 0 failed (exit 0)" ]; then
	eg_ok "the template passes the three world-2 cases, pz2-zero (no tokens anywhere) among them"
else
	eg_not_ok "the template on the fixture: exit $rc"
	show tpl
fi

# --- every rank hangs in pz2-zero, L1 (a job of 2 ranks): each rank's
# bound on its plugin call (EPGATE_TIMEOUT and a grace) ends it before
# the job's deadline; the case FAILs naming the rank, the call and where
# it hung, and pz2-after runs in a second job. (The job's-deadline
# verdict, "ranks 0, 1 all hung", for calls no bound ends, is held on
# its log by test_job_crash's test_hang_all.)
hung="plugin template: dispatch did not return within [0-9.]* s (EPGATE_TIMEOUT 2 s and a grace of 2 s) in pz2-zero, iteration 0, dispatch"
EPGATE_TIMEOUT=2 chk z1 "plugin:$f/libeg-fault-hang-empty.so" --workload "$zf" --iters 1
pt=$(point z1 pz2-zero)
if [ "$rc" -eq 1 ] && [ "$(last z1)" = "FAIL: 2 passed, 1 failed (exit 1)" ] &&
	echo "$pt" | grep -q "engine_message: '$hung" &&
	echo "$pt" | grep -q '^  stage: dispatch' &&
	grep -q '^ok [0-9]* - pz2-base:' "$EG_TMP/z1.tap" &&
	grep -q '^ok [0-9]* - pz2-after:' "$EG_TMP/z1.tap" &&
	grep -q 'world 2: 2 job(s) of 2 ranks' "$EG_TMP/z1.out" &&
	grep -q '^FAIL pz2-zero: dispatch did not return (deadline expired) (iteration 0, rank [01]): ' "$EG_TMP/z1.out" &&
	! grep -q 'names no cause' "$EG_TMP/z1.out" && valid z1; then
	eg_ok "L1, every rank hangs: pz2-zero FAIL ($(grep -m1 '^FAIL pz2-zero' "$EG_TMP/z1.out" | cut -c1-100)...), pz2-after passes in a second job, exit 1"
else
	eg_not_ok "L1, every rank hangs: exit $rc"
	echo "$pt" | sed 's/^/# /' | head -n 14
	show z1
fi

# --- the same in L2 (check --l2): the case's FAIL, a new job after it
EPGATE_TIMEOUT=2 chk z2 "plugin:$f/libeg-fault-hang-empty.so" --l2 --workload "$zf" --iters 1
pt=$(point z2 "l2 [^ ]*: pz2-zero")
if [ "$rc" -eq 1 ] && [ "$(last z2)" = "FAIL: 2 passed, 1 failed (exit 1)" ] &&
	echo "$pt" | grep -q "engine_message: '$hung" &&
	grep -q '^ok [0-9]* - l2 [^ ]*: pz2-after:' "$EG_TMP/z2.tap" &&
	grep -q '(job 2): 1 passed, 0 failed' "$EG_TMP/z2.out" &&
	! grep -q 'never ran\|: job$' "$EG_TMP/z2.tap" && valid z2; then
	eg_ok "L2, every rank hangs: pz2-zero FAIL naming the call that did not return and where, pz2-after passes in job 2, exit 1"
else
	eg_not_ok "L2, every rank hangs: exit $rc"
	echo "$pt" | sed 's/^/# /' | head -n 14
	show z2
fi

# --- a plugin that hangs in every case: check stops after 3 hangs
why='not run: epgate check stopped after 3 hangs (--max-hangs 3; 0 runs every case)'
EPGATE_TIMEOUT=2 chk h3 "plugin:$f/libeg-fault-hang.so" --workload "$hf" --iters 1
if [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$EG_TMP/h3.tap")" -eq 3 ] &&
	[ "$(grep -c "^ok [0-9]* - .* # SKIP $why\$" "$EG_TMP/h3.tap")" -eq 3 ] &&
	grep -q '^  L1  stopped after 3 hangs (--max-hangs 3; 0 runs every case): the cases left are skipped$' "$EG_TMP/h3.out" &&
	[ "$(last h3)" = "FAIL: 0 passed, 3 failed, 3 skipped (exit 1): stopped after 3 hangs (--max-hangs 3; 0 runs every case), 3 cases not run" ] &&
	valid h3 && grep -q "$why" "$EG_TMP/h3.xml" &&
	"$EG_EPGATE" check --help | grep -q 'default: 3, or'; then
	eg_ok "every case hangs: 3 FAIL, the 3 left skipped saying why, the last line: $(last h3 | cut -c1-60)..."
else
	eg_not_ok "every case hangs: exit $rc"
	show h3
fi

# --- the option wins over the variable; 0 runs every case
EPGATE_TIMEOUT=2 EPGATE_MAX_HANGS=1 chk h0 "plugin:$f/libeg-fault-hang.so" --workload "$hf" \
	--iters 1 --max-hangs 0
if [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$EG_TMP/h0.tap")" -eq 6 ] &&
	[ "$(last h0)" = "FAIL: 0 passed, 6 failed (exit 1)" ] && ! grep -q 'stopped' "$EG_TMP/h0.out"; then
	eg_ok "--max-hangs 0 (over EPGATE_MAX_HANGS=1): all 6 cases run and fail"
else
	eg_not_ok "--max-hangs 0: exit $rc"
	show h0
fi

# --- the variable alone, in L2: after 1 hang the jobs left never start
EPGATE_TIMEOUT=2 EPGATE_MAX_HANGS=1 chk hl2 "plugin:$f/libeg-fault-hang.so" --l2 --workload "$hf" --iters 1
nskip=$(grep -c '# SKIP not run: epgate check stopped after 1 hang (--max-hangs 1; 0 runs every case)$' "$EG_TMP/hl2.tap")
if [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$EG_TMP/hl2.tap")" -eq 1 ] && [ "$nskip" -ge 3 ] &&
	[ "$(last hl2)" = "FAIL: 0 passed, 1 failed, $nskip skipped (exit 1): stopped after 1 hang (--max-hangs 1; 0 runs every case), $nskip cases not run" ] &&
	[ "$(grep -c '^  L2  \[' "$EG_TMP/hl2.out")" -eq 1 ] && valid hl2; then
	eg_ok "EPGATE_MAX_HANGS=1, check --l2: 1 FAIL, the $nskip workloads left skipped, no job after the hang"
else
	eg_not_ok "EPGATE_MAX_HANGS=1 --l2: exit $rc"
	show hl2
fi

# --- a variable that is not a count: bad input, said
EPGATE_MAX_HANGS=three chk bad "plugin:$so" --workload "$zf"
if [ "$rc" -eq 99 ] && grep -q '^epgate check: EPGATE_MAX_HANGS "three": want a count' "$EG_TMP/bad.out"; then
	eg_ok "EPGATE_MAX_HANGS=three: exit 99, said"
else
	eg_not_ok "EPGATE_MAX_HANGS=three: exit $rc"
	show bad
fi
eg_done
