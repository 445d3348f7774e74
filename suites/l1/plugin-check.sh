#!/bin/sh
# epgate check of a plugin at every world size (docs/plugins.md, "How a
# plugin runs"): the template passes its cases at world 1 (in process)
# and beyond (one job of ranks per world size), with no option the L1
# matrix and the plugin battery, --quick twelve of the matrix and the
# world-1 battery, --world=N that world's cases; the same commands fail
# on planted faults, also on those only the battery reaches; a bad
# counter fails its dispatch (no combine after it); a library that
# aborts, calls exit(0) or hangs gets a verdict of its own on that case
# (CRASH with its assert text and signal, or a hang naming the rank
# waited on), and the cases after it still run; exit codes 0, 1, 77 and
# 99 hold, a plugin that does not load said once. In L2, `check --l2
# --engine plugin:PATH` runs the L2 matrix and the battery; a library's
# crash, exit(0), error, positive return code or hang is that case's
# CRASH or FAIL with exit 1 (never 99), and a new job runs the cases
# after it; a crash names the workload, step, phase and rank (from its
# peers when it said nothing) with a repro line that crashes the same
# way, and the peers' logs say a peer was lost.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/l1/check-lib.sh"
if [ ! -f "$so" ] || ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP the template plugin or l2-rank not built"
	exit 0
fi
# worlds 1, 2 and 3; odd token counts where the planted abort fires
# (pw1-odd, pw3-odd, step 3 of pw3-steps: seed 2), top-k 1 where the
# planted exit(0) does (pw1-k1, pw2-k1: pw2-after runs after it)
fx=$EG_TMP/worlds.ini
cat >"$fx" <<'INI'
hidden = 64
topk = 2
[pw1-base]
world = 1
experts = 8
tokens = 16
[pw1-odd]
world = 1
experts = 8
tokens = 17
[pw1-k1]
world = 1
experts = 8
topk = 1
tokens = 8
[pw2-base]
world = 2
experts = 8
tokens = 16
[pw2-k1]
world = 2
experts = 8
topk = 1
tokens = 8
[pw2-after]
world = 2
experts = 8
tokens = 12
[pw3-odd]
world = 3
experts = 6
tokens = 17
[pw3-base]
world = 3
experts = 6
tokens = 16
[pw3-steps]
world = 3
experts = 6
tokens = 8
steps = 4
seed = 2
INI

# --- the template, the quick matrix: 12 cases of the L1 matrix (beyond
# world 1 as jobs) and the plugin battery's world-1 cases (in process)
nb1=$(grep -c '^\[' "$EG_SRCDIR/fixtures/workloads/plugin-w1.ini")
nq=$((12 + nb1))
chk quick "plugin:$so" --quick
ok=$(grep -c '^ok' "$EG_TMP/quick.tap")
jobs=$(grep -c 'job(s) of [0-9]* ranks' "$EG_TMP/quick.out")
if [ "$rc" -eq 0 ] && [ "$ok" -eq "$nq" ] && [ "$jobs" -ge 4 ] && valid quick &&
	grep -q '^ok [0-9]* - p1-h1001: ' "$EG_TMP/quick.tap" &&
	tail -n 1 "$EG_TMP/quick.out" | grep -q "^PASS: $nq passed, 0 failed (exit 0)\$"; then
	eg_ok "template --quick: $nq of $nq cases pass (12 of the matrix, in $jobs world sizes beyond 1 as jobs of ranks; the $nb1 of the world-1 battery)"
else
	eg_not_ok "template --quick: exit $rc, $ok of $nq pass, $jobs jobs"
	show quick
fi

# --- no option at all: the L1 matrix and the whole plugin battery (at
# world 1 and over ranks), every world size
nall=$(cat "$EG_SRCDIR/fixtures/workloads/l1-matrix.ini" "$EG_SRCDIR/fixtures/workloads/plugin-w1.ini" \
	"$EG_SRCDIR/fixtures/workloads/plugin-l2.ini" | grep -c '^\[')
chk plain "plugin:$so"
if [ "$rc" -eq 0 ] && valid plain &&
	grep -q '^ok [0-9]* - p2-e520-t300: ' "$EG_TMP/plain.tap" &&
	grep -q '^ok [0-9]* - p1-e320-t300: ' "$EG_TMP/plain.tap" &&
	tail -n 1 "$EG_TMP/plain.out" | grep -q "^PASS: $nall passed, 0 failed (exit 0)\$"; then
	eg_ok "template, no option: $nall of $nall cases pass (the L1 matrix and the plugin battery)"
else
	eg_not_ok "template, no option: exit $rc, want $nall passed"
	show plain
fi

# --- library bugs only the battery's shapes reach (a last chunk left
# unwritten, a repeated expert's slot dropped, 8-bit expert ids): the
# plain command fails on each, and so does --quick (its world-1 battery)
while read -r fault case; do
	chk "b-$fault" "plugin:$f/libeg-fault-$fault.so"
	prc=$rc
	pcase=$(grep -c "^not ok [0-9]* - $case: " "$EG_TMP/b-$fault.tap")
	chk "q-$fault" "plugin:$f/libeg-fault-$fault.so" --quick
	if [ "$prc" -eq 1 ] && [ "$pcase" -eq 1 ] && [ "$rc" -eq 1 ] &&
		grep -q "^not ok [0-9]* - $case: " "$EG_TMP/q-$fault.tap"; then
		eg_ok "planted $fault: the plain command and --quick fail (exit 1), $case among the failures: $(tail -n 1 "$EG_TMP/b-$fault.out")"
	else
		eg_not_ok "planted $fault: plain exit $prc ($case failed: $pcase), --quick exit $rc"
		show "b-$fault" 4
		show "q-$fault" 4
	fi
done <<'LIST'
last-chunk p1-h1001
dedup-slots p1-e320-t300
expert-id-8bit p1-e320-t300
LIST

# --- expert_count in rows, not slots, in a job of ranks: the last rank's
# counters fail the duplicate-id case, the message naming the expert,
# both counts and the definition (docs/semantics.md), in TAP and said
chk ecount "plugin:$f/libeg-fault-expert-count-rows.so" --iters 1 \
	--workload "$EG_SRCDIR/fixtures/workloads/plugin-l2.ini" --filter p2-rand-dup
pe=$(point ecount p2-rand-dup)
if [ "$rc" -eq 1 ] && echo "$pe" | grep -q '^    expert_count: [1-9]' &&
	[ "$(echo "$pe" | sed -n '/^  wrong:/,/^  first_mismatches:/p' | wc -l)" -eq 3 ] &&
	echo "$pe" | grep -q "message: 'expert_count of expert [0-9]* (local [0-9]*) on rank 1: got [0-9]*, expected [0-9]*; expert_count counts slots" &&
	grep -q '^  that is: expert_count of expert [0-9]* (local [0-9]*) on rank 1: got' "$EG_TMP/ecount.out"; then
	eg_ok "planted expert-count-rows, W=2 in a job: $(grep -m1 -o 'expert_count of expert.*expected [0-9]*' "$EG_TMP/ecount.out")"
else
	eg_not_ok "planted expert-count-rows, W=2: exit $rc"
	show ecount
fi

# --- --world=N alone narrows a plugin's matrix (and battery) to world
# N; for other engines keys alone still make one workload
nw3=$(cat "$EG_SRCDIR/fixtures/workloads/l1-matrix.ini" "$EG_SRCDIR/fixtures/workloads/plugin-w1.ini" \
	"$EG_SRCDIR/fixtures/workloads/plugin-l2.ini" | grep -c '^world *= *3$')
chk w3 "plugin:$so" --world=3
w3=$(grep -c '^ok [0-9]* - .*: W=3 ' "$EG_TMP/w3.tap")
"$EG_EPGATE" check --world=4 --list >"$EG_TMP/self4.out" 2>&1
if [ "$rc" -eq 0 ] && [ "$nw3" -ge 3 ] && [ "$w3" -eq "$nw3" ] &&
	[ "$(grep -c '^ok' "$EG_TMP/w3.tap")" -eq "$nw3" ] &&
	grep -q '^ok [0-9]* - p3-h333: ' "$EG_TMP/w3.tap" &&
	[ "$(wc -l <"$EG_TMP/self4.out")" -eq 1 ] && grep -q '^cli  *W=4 ' "$EG_TMP/self4.out"; then
	eg_ok "--world=3 with a plugin: its $nw3 cases of world 3 pass (matrix and battery); check --world=4 alone: one workload from keys"
else
	eg_not_ok "--world=3: exit $rc, $w3 of $nw3 W=3 cases pass"
	show w3
	sed 's/^/# /' "$EG_TMP/self4.out"
fi

# --- a dispatch with a counter past its stride: the dispatch's finding
# (native_count), no combine after it (the template's combine would
# crash on that counter), in process and in jobs of ranks
chk count "plugin:$f/libeg-fault-bad-count.so" --workload "$fx" --iters 1
nfx=$(grep -c '^\[' "$fx")
if [ "$rc" -eq 1 ] &&
	tail -n 1 "$EG_TMP/count.out" | grep -q "^FAIL: 0 passed, $nfx failed (exit 1)\$" &&
	point count pw2-base | grep -q 'native_count: 1' &&
	point count pw3-steps | grep -q 'native_count: 1' &&
	! grep -q 'status: crash' "$EG_TMP/count.tap"; then
	eg_ok "planted bad count: all $nfx cases FAIL on native_count in dispatch, none crashed in combine"
else
	eg_not_ok "planted bad count: exit $rc"
	show count
fi

# --- the same command, a planted fault: the cases fail, naming the field
chk drop "plugin:$f/libeg-fault-drop-row.so" --quick
bad=$(grep -c '^not ok' "$EG_TMP/drop.tap")
if [ "$rc" -eq 1 ] && [ "$bad" -ge 10 ] && grep -q 'missing_rows: [1-9]' "$EG_TMP/drop.tap" &&
	grep -q '^not ok .* W=16 ' "$EG_TMP/drop.tap" && valid drop; then
	eg_ok "planted drop-row, same command: exit 1, $bad of $nq cases fail on missing_rows (W=16 among them)"
else
	eg_not_ok "planted drop-row: exit $rc, $bad cases failed"
	show drop
fi

# --- an assert in the library: CRASH with its text, signal and repro,
# in process and in a job; the cases after it run (a job launched again)
chk abort "plugin:$f/libeg-fault-abort.so" --workload "$fx" --iters 1
p1=$(point abort pw1-odd)
p3=$(point abort pw3-odd)
ps=$(point abort pw3-steps)
if [ "$rc" -eq 1 ] &&
	tail -n 1 "$EG_TMP/abort.out" | grep -q '^FAIL: 6 passed, 0 failed, 3 crashed (exit 1)$' &&
	echo "$p1" | grep -q 'status: crash' && echo "$p1" | grep -q 'signal: SIGABRT' &&
	echo "$p1" | grep -q "Assertion .*planted abort: the template takes even token counts only" &&
	echo "$p3" | grep -q 'rank: 2' && echo "$p3" | grep -q 'Assertion' &&
	echo "$p3" | grep -q 'repro: epgate check --engine=plugin:.*--name=pw3-odd --world=3' &&
	echo "$ps" | grep -q 'where: pw3-steps, step 3 of 4, iteration 0, dispatch' &&
	grep -q '^ok [0-9]* - pw3-base:' "$EG_TMP/abort.tap" &&
	[ "$(grep -c '<error [^>]*type="crash"' "$EG_TMP/abort.xml")" -eq 3 ] && valid abort &&
	grep -q '^CRASH pw3-odd: dispatch, iteration 0, rank 2: rank 2 ended by signal 6 (SIGABRT' "$EG_TMP/abort.out" &&
	grep -q '^  said: .*Assertion' "$EG_TMP/abort.out"; then
	eg_ok "planted abort: 3 cases CRASH (SIGABRT, the assert's text, where, repro), 6 pass, pw3-base after the crash"
else
	eg_not_ok "planted abort: exit $rc"
	show abort 30
fi

# the repro line of the crash in a job crashes the same way, alone
cmd=$(grep -m1 '^  repro: epgate check .*--name=pw3-odd' "$EG_TMP/abort.out" | sed 's/^  repro: epgate //')
# shellcheck disable=SC2086
eval "\"$EG_EPGATE\" $cmd" --reports "$EG_TMP/runs" --tap "$EG_TMP/re.tap" \
	--junit "$EG_TMP/re.xml" >"$EG_TMP/re.out" 2>&1
rc=$?
if [ -n "$cmd" ] && [ "$rc" -eq 1 ] &&
	grep -q '^FAIL: 0 passed, 0 failed, 1 crashed (exit 1)$' "$EG_TMP/re.out"; then
	eg_ok "the crash's repro line, run as printed: the same CRASH, exit 1"
else
	eg_not_ok "repro \"$cmd\": exit $rc"
	show re
fi

# --- exit(0) in the library: CRASH in process and in a job, not a pass
chk exit0 "plugin:$f/libeg-fault-exit0.so" --workload "$fx" --iters 1
if [ "$rc" -eq 1 ] &&
	tail -n 1 "$EG_TMP/exit0.out" | grep -q '^FAIL: 7 passed, 0 failed, 2 crashed (exit 1)$' &&
	point exit0 pw1-k1 | grep -q 'exited with status 0' &&
	point exit0 pw2-k1 | grep -q 'crash: rank [01] ended by exit(0) inside the workload' &&
	point exit0 pw2-k1 | grep -q 'exit_status: 0' && valid exit0; then
	eg_ok "planted exit(0): pw1-k1 and pw2-k1 CRASH (status 0), 7 cases pass"
else
	eg_not_ok "planted exit(0): exit $rc"
	show exit0
fi

# --- a hang beyond world 1: the rank waited on, where it was
EPGATE_TIMEOUT=2 chk hang "plugin:$f/libeg-fault-hang.so" --workload "$fx" \
	--filter pw2 --iters 1
if [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$EG_TMP/hang.tap")" -eq 3 ] &&
	point hang pw2-k1 | grep -q "hang: '\\?rank 1 did not answer its peers within the deadline" &&
	point hang pw2-k1 | grep -q 'where: pw2-k1, iteration 0, dispatch' && valid hang; then
	eg_ok "planted hang at world 2: its 3 cases FAIL naming rank 1 and where it was (dispatch)"
else
	eg_not_ok "planted hang: exit $rc"
	show hang
fi
# the hang's repro line, run as printed (with the same short deadline):
# the same case, the same hang
repro=$(point hang pw2-k1 | sed -n 's/^  repro: epgate //p')
# shellcheck disable=SC2086
EPGATE_TIMEOUT=2 "$EG_EPGATE" $repro --reports "$EG_TMP/runs" --tap "$EG_TMP/hang2.tap" \
	>"$EG_TMP/hang2.out" 2>&1
rc=$?
if [ -n "$repro" ] && [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$EG_TMP/hang2.tap")" -eq 1 ] &&
	grep -q "rank 1 did not answer its peers within the deadline" "$EG_TMP/hang2.tap"; then
	eg_ok "the hang's repro line, run as printed: pw2-k1 hangs again on rank 1 (exit 1)"
else
	eg_not_ok "the hang's repro '$repro': exit $rc"
	show hang2
fi

# --- exit codes: 77 with the reason on the last line, 99 on a bad engine
cu=$EG_BUILDDIR/plugins/template/libeg-cuda-template.so
if [ ! -f "$cu" ]; then
	eg_ok "exit 77 # SKIP the CUDA template is not built"
else
	chk cuda "plugin:$cu" --workload "$fx" --filter base
	if [ "$rc" -eq 0 ]; then
		eg_ok "exit 77 # SKIP a CUDA device is here: the CUDA template runs"
	elif [ "$rc" -eq 77 ] &&
		tail -n 1 "$EG_TMP/cuda.out" | grep -q '^SKIP: 0 passed, 0 failed, 3 skipped (exit 77): pw1-base: '; then
		eg_ok "nothing can run: exit 77, why on the last line: $(tail -n 1 "$EG_TMP/cuda.out" | cut -c1-90)"
	else
		eg_not_ok "the CUDA template without a device: exit $rc"
		show cuda
	fi
fi
chk bad "plugin:$EG_TMP/none.so" --workload "$fx"
if [ "$rc" -eq 99 ] && [ "$(grep -c "none.so" "$EG_TMP/bad.out")" -eq 1 ] &&
	! grep -q 'unknown engine' "$EG_TMP/bad.out"; then
	eg_ok "a plugin that does not load: exit 99, why said once: $(cut -c1-100 "$EG_TMP/bad.out")"
else
	eg_not_ok "a plugin that does not load: exit $rc"
	show bad
fi

# --- L2: check --l2 --engine plugin:PATH runs, its files named safely
chk l2 "plugin:$so" --l2 --workload "$fx" --filter pw3-base
logs=$(ls "$EG_TMP"/runs/*/l2-plugin-libeg-template.so.w3.*.log 2>/dev/null | wc -l)
if [ "$rc" -eq 0 ] && [ "$(grep -c '^ok' "$EG_TMP/l2.tap")" -eq 2 ] && [ "$logs" -eq 2 ]; then
	eg_ok "check --l2 --engine plugin:PATH: 2 jobs pass (logs l2-plugin-libeg-template.so.w3.*)"
else
	eg_not_ok "check --l2 --engine plugin:PATH: exit $rc, $logs logs"
	show l2
fi

# --- L2: exit(0) on every rank is a failure naming the rank and workload
# (CRASH, exit 1: the library's failure, not epgate's), and a new job
# runs the workload after it
chk l2exit "plugin:$f/libeg-fault-exit0.so" --l2 --workload "$fx" --filter pw2
if [ "$rc" -eq 1 ] && grep -q '^ok [0-9]* - l2 .*: pw2-base:' "$EG_TMP/l2exit.tap" &&
	point l2exit "l2 [^ ]*: pw2-k1" | grep -q 'crash: rank [01] ended by exit(0) inside the workload' &&
	grep -q '^ok [0-9]* - l2 .*: pw2-after:' "$EG_TMP/l2exit.tap" &&
	! grep -q 'never ran' "$EG_TMP/l2exit.tap" &&
	grep -q 'the job exited 1 after 1 of 3 workloads: rank [01] ended by exit(0) inside the workload .* in pw2-k1, iteration 0, dispatch' "$EG_TMP/l2exit.out" &&
	grep -q '(job 2): 1 passed, 0 failed' "$EG_TMP/l2exit.out" &&
	tail -n 1 "$EG_TMP/l2exit.out" | grep -q '^FAIL: 2 passed, 0 failed, 1 crashed (exit 1)$'; then
	eg_ok "L2, exit(0) on every rank: exit 1, pw2-k1 CRASH naming the rank, pw2-base kept, pw2-after passes in a new job"
else
	eg_not_ok "L2, exit(0): exit $rc"
	show l2exit
fi

# --- L2: whatever way the library fails, the case's verdict and exit 1
# (never the harness's 99), every case of the job run: a SIGSEGV from a
# library that reset its handler (CRASH, where its peers lost it; the
# peers' logs say a peer was lost, not that their plugin failed), an
# error returned, a positive return code, a hang (FAIL naming the rank
# waited on)
while read -r fault want; do
	EPGATE_TIMEOUT=3 chk "l2-$fault" "plugin:$f/libeg-fault-$fault.so" --l2 \
		--workload "$fx" --filter pw2 --iters 1
	pt=$(point "l2-$fault" "l2 [^ ]*: pw2-base")
	log=$(ls "$EG_TMP"/runs/*/l2-plugin-libeg-fault-"$fault".so.w2.*.log 2>/dev/null | head -n 1)
	good=1
	case $fault in
	crash)
		# rank 0 either sees its peer go (a peer was lost) or is
		# stopped by the launcher first (SIGTERM): which comes first
		# is the machine's timing; never that its plugin failed
		echo "$pt" | grep -q 'stage: dispatch' &&
			echo "$pt" | grep -q 'where: pw2-base, iteration 0, dispatch (where its peers lost it)' || good=0
		for l in "$EG_TMP"/runs/*/l2-plugin-libeg-fault-crash.so.w2.*.log; do
			grep -q 'rank 0: plugin template: dispatch: a peer was lost\|rank 0: stopped by signal 15' "$l" &&
				! grep -q 'reported an error' "$l" || good=0
		done
		[ -n "$log" ] || good=0
		;;
	hang) echo "$pt" | grep -q "hang: '\?rank 1 did not answer its peers" || good=0 ;;
	*) echo "$pt" | grep -q "engine_message: .*planted error" || good=0 ;;
	esac
	if [ "$rc" -eq 1 ] && [ "$good" -eq 1 ] &&
		tail -n 1 "$EG_TMP/l2-$fault.out" | grep -q "^FAIL: $want (exit 1)\$" &&
		! grep -q 'never ran' "$EG_TMP/l2-$fault.tap" && valid "l2-$fault"; then
		eg_ok "L2, planted $fault: exit 1, $want, each case run: $(echo "$pt" | grep -m1 'crash:\|hang:\|engine_message:' | cut -c1-90)"
	else
		eg_not_ok "L2, planted $fault: exit $rc, want $want (exit 1)"
		echo "$pt" | sed 's/^/# /' | head -n 14
		show "l2-$fault"
	fi
done <<'LIST'
crash 0 passed, 0 failed, 3 crashed
error 0 passed, 3 failed
positive-rc 0 passed, 3 failed
hang 0 passed, 3 failed
LIST

# --- L2 of a plugin with no --workload: the L2 matrix and the plugin
# battery over ranks (p2-*: only the battery has them); library bugs
# only the battery reaches fail it
chk l2bat "plugin:$so" --l2 --filter p2-
nb2=$(grep -c '^\[p2-' "$EG_SRCDIR/fixtures/workloads/plugin-l2.ini")
pass=$(grep -c '^ok [0-9]* - l2 [^ ]*: p2-' "$EG_TMP/l2bat.tap")
chk l2e8 "plugin:$f/libeg-fault-expert-id-8bit.so" --l2 --filter p2-e520
e8=$rc
chk l2lc "plugin:$f/libeg-fault-last-chunk.so" --l2 --filter p2-h1001
if [ "$pass" -eq "$nb2" ] && [ "$nb2" -ge 4 ] &&
	[ "$e8" -eq 1 ] && grep -q '^not ok [0-9]* - l2 [^ ]*: p2-e520-t300' "$EG_TMP/l2e8.tap" &&
	[ "$rc" -eq 1 ] && grep -q '^not ok [0-9]* - l2 [^ ]*: p2-h1001' "$EG_TMP/l2lc.tap"; then
	eg_ok "check --l2 of a plugin runs the battery: the template passes its $nb2 world-2 cases, expert-id-8bit and last-chunk fail (exit 1)"
else
	eg_not_ok "check --l2 battery: template $pass of $nb2, expert-id-8bit exit $e8, last-chunk exit $rc"
	show l2bat 6
	show l2e8 6
	show l2lc 6
fi

# --- L2: a crash in a steps workload names its step, phase, rank; repro
chk l2abort "plugin:$f/libeg-fault-abort.so" --l2 --workload "$fx" --filter pw3-steps
pt=$(point l2abort "l2 [^ ]*n2[^ ]*: pw3-steps")
cmd=$(echo "$pt" | sed -n 's/^  repro: epgate launch \(.*\)-- epgate \(.*\)$/launch \1-- "$EG_EPGATE" \2/p')
if [ "$rc" -eq 1 ] && echo "$pt" | grep -q 'status: crash' &&
	echo "$pt" | grep -q 'where: pw3-steps, step 3 of 4, iteration 0, dispatch' &&
	echo "$pt" | grep -q 'rank: 2' && echo "$pt" | grep -q 'Assertion' &&
	grep -q 'rank 2 ended by signal 6 (SIGABRT, Aborted) in pw3-steps, step 3 of 4, iteration 0, dispatch' "$EG_TMP/l2abort.out" &&
	grep -q '^    repro: epgate launch -n 3' "$EG_TMP/l2abort.out" && valid l2abort; then
	eg_ok "L2 crash: exit 1, step 3 of 4, dispatch, rank 2, the assert's text and a repro line"
else
	eg_not_ok "L2 crash: exit $rc"
	show l2abort
fi
# shellcheck disable=SC2086
eval "\"$EG_EPGATE\" $cmd" >"$EG_TMP/l2re.out" 2>&1
rc=$?
if [ -n "$cmd" ] && [ "$rc" -ne 0 ] &&
	grep -q 'rank 2: ended by signal 6 (SIGABRT) in pw3-steps, step 3 of 4, iteration 0, dispatch' "$EG_TMP/l2re.out"; then
	eg_ok "its repro line, run as printed: rank 2 ends the same way, exit $rc"
else
	eg_not_ok "L2 repro \"$cmd\": exit $rc"
	show l2re
fi

# --- TAP with CRASH points stays valid: prove reads it (TAP 13)
EPGATE_TAP_VERSION=13 chk abort13 "plugin:$f/libeg-fault-abort.so" --workload "$fx" \
	--filter pw1 --iters 1
"$PROVE" -e cat "$EG_TMP/abort13.tap" >"$EG_TMP/prove.out" 2>&1
if ! command -v "$PROVE" >/dev/null 2>&1; then
	eg_ok "prove # SKIP no prove here"
elif ! grep -q 'Parse errors' "$EG_TMP/prove.out" &&
	grep -q 'Tests=3' "$EG_TMP/prove.out"; then
	eg_ok "prove reads the TAP with a CRASH point: 3 points, no parse error"
else
	eg_not_ok "prove on the CRASH TAP"
	show prove
fi
eg_done
