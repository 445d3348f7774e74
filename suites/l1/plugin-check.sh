#!/bin/sh
# epgate check of a plugin at every world size (docs/plugins.md, "How a
# plugin runs"): the template passes its cases at world 1 (in process)
# and beyond (one job of ranks per world size); the same command fails
# on a planted fault; a library that aborts, calls exit(0) or hangs gets
# a verdict of its own on that case (CRASH with its assert text and
# signal, or a hang naming the rank waited on), and the cases after it
# still run; exit codes 0, 1, 77 and 99 hold. In L2, `check --l2
# --engine plugin:PATH` runs, a library's exit(0) is a failure naming
# the rank and the workload, and a crash names the workload, step,
# phase and rank with a repro line that crashes the same way.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"

so=$EG_BUILDDIR/plugins/template/libeg-template.so
f=$EG_BUILDDIR/plugins/faults
xsd=$EG_SRCDIR/reports/schema/junit.xsd
if [ ! -f "$so" ] || ! "$EG_EPGATE" l2-rank --help >/dev/null 2>&1; then
	echo "1..0 # SKIP the template plugin or l2-rank not built"
	exit 0
fi
# worlds 1, 2 and 3; odd token counts where the planted abort fires
# (pw1-odd, pw3-odd, step 3 of pw3-steps: seed 2), top-k 1 where the
# planted exit(0) does
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
chk() { # NAME ENGINE [ARGS...]: $EG_TMP/NAME.{tap,xml,out}, $rc
	n=$1
	e=$2
	shift 2
	"$EG_EPGATE" check --engine "$e" --reports "$EG_TMP/runs" \
		--tap "$EG_TMP/$n.tap" --junit "$EG_TMP/$n.xml" "$@" \
		>"$EG_TMP/$n.out" 2>&1
	rc=$?
}
valid() { "$XMLLINT" --noout --schema "$xsd" "$EG_TMP/$1.xml" 2>/dev/null; }
show() { sed 's/^/# /' "$EG_TMP/$1.out" | tail -n "${2:-15}"; }
point() { grep -A 30 "^not ok [0-9]* - $2:" "$EG_TMP/$1.tap" | sed '/^  \.\.\./q'; }

# --- the template, the quick matrix: every case, beyond world 1 as jobs
chk quick "plugin:$so" --quick
ok=$(grep -c '^ok' "$EG_TMP/quick.tap")
jobs=$(grep -c 'job(s) of [0-9]* ranks' "$EG_TMP/quick.out")
if [ "$rc" -eq 0 ] && [ "$ok" -eq 12 ] && [ "$jobs" -ge 4 ] && valid quick &&
	tail -n 1 "$EG_TMP/quick.out" | grep -q '^PASS: 12 passed, 0 failed (exit 0)$'; then
	eg_ok "template --quick: 12 of 12 cases pass, in $jobs world sizes beyond 1 as jobs of ranks"
else
	eg_not_ok "template --quick: exit $rc, $ok of 12 pass, $jobs jobs"
	show quick
fi

# --- the same command, a planted fault: the cases fail, naming the field
chk drop "plugin:$f/libeg-fault-drop-row.so" --quick
bad=$(grep -c '^not ok' "$EG_TMP/drop.tap")
if [ "$rc" -eq 1 ] && [ "$bad" -ge 10 ] && grep -q 'missing_rows: [1-9]' "$EG_TMP/drop.tap" &&
	grep -q '^not ok .* W=16 ' "$EG_TMP/drop.tap" && valid drop; then
	eg_ok "planted drop-row, same command: exit 1, $bad of 12 cases fail on missing_rows (W=16 among them)"
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
	tail -n 1 "$EG_TMP/abort.out" | grep -q '^FAIL: 5 passed, 0 failed, 3 crashed (exit 1)$' &&
	echo "$p1" | grep -q 'status: crash' && echo "$p1" | grep -q 'signal: SIGABRT' &&
	echo "$p1" | grep -q "Assertion .*planted abort: the template takes even token counts only" &&
	echo "$p3" | grep -q 'rank: 2' && echo "$p3" | grep -q 'Assertion' &&
	echo "$p3" | grep -q 'repro: epgate check --engine=plugin:.*--name=pw3-odd --world=3' &&
	echo "$ps" | grep -q 'where: pw3-steps, step 3 of 4, iteration 0, dispatch' &&
	grep -q '^ok [0-9]* - pw3-base:' "$EG_TMP/abort.tap" &&
	[ "$(grep -c '<error [^>]*type="crash"' "$EG_TMP/abort.xml")" -eq 3 ] && valid abort &&
	grep -q '^CRASH pw3-odd: dispatch, iteration 0, rank 2: rank 2 ended by signal 6 (SIGABRT' "$EG_TMP/abort.out" &&
	grep -q '^  said: .*Assertion' "$EG_TMP/abort.out"; then
	eg_ok "planted abort: 3 cases CRASH (SIGABRT, the assert's text, where, repro), 5 pass, pw3-base after the crash"
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
	tail -n 1 "$EG_TMP/exit0.out" | grep -q '^FAIL: 6 passed, 0 failed, 2 crashed (exit 1)$' &&
	point exit0 pw1-k1 | grep -q 'exited with status 0' &&
	point exit0 pw2-k1 | grep -q 'crash: rank [01] ended by exit(0) inside the workload' &&
	point exit0 pw2-k1 | grep -q 'exit_status: 0' && valid exit0; then
	eg_ok "planted exit(0): pw1-k1 and pw2-k1 CRASH (status 0), 6 cases pass"
else
	eg_not_ok "planted exit(0): exit $rc"
	show exit0
fi

# --- a hang beyond world 1: the rank waited on, where it was
EPGATE_TIMEOUT=2 chk hang "plugin:$f/libeg-fault-hang.so" --workload "$fx" \
	--filter pw2 --iters 1
if [ "$rc" -eq 1 ] && [ "$(grep -c '^not ok' "$EG_TMP/hang.tap")" -eq 2 ] &&
	point hang pw2-k1 | grep -q "hang: '\\?rank 1 did not answer its peers within the deadline" &&
	point hang pw2-k1 | grep -q 'where: pw2-k1, iteration 0, dispatch' && valid hang; then
	eg_ok "planted hang at world 2: both cases FAIL naming rank 1 and where it was (dispatch)"
else
	eg_not_ok "planted hang: exit $rc"
	show hang
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
if [ "$rc" -eq 99 ]; then
	eg_ok "a plugin that does not load: exit 99"
else
	eg_not_ok "a plugin that does not load: exit $rc"
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
chk l2exit "plugin:$f/libeg-fault-exit0.so" --l2 --workload "$fx" --filter pw2
if [ "$rc" -ne 0 ] && grep -q '^ok [0-9]* - l2 .*: pw2-base:' "$EG_TMP/l2exit.tap" &&
	point l2exit "l2 [^ ]*: pw2-k1" | grep -q 'crash: rank [01] ended by exit(0) inside the workload' &&
	grep -q 'the job exited 1 after 1 of 2 workloads: rank [01] ended by exit(0) inside the workload .* in pw2-k1, iteration 0, dispatch' "$EG_TMP/l2exit.out"; then
	eg_ok "L2, exit(0) on every rank: exit $rc, pw2-k1 CRASH naming the rank, pw2-base kept"
else
	eg_not_ok "L2, exit(0): exit $rc"
	show l2exit
fi

# --- L2: a crash in a steps workload names its step, phase, rank; repro
chk l2abort "plugin:$f/libeg-fault-abort.so" --l2 --workload "$fx" --filter pw3-steps
pt=$(point l2abort "l2 [^ ]*n2[^ ]*: pw3-steps")
cmd=$(echo "$pt" | sed -n 's/^  repro: epgate launch \(.*\)-- epgate \(.*\)$/launch \1-- "$EG_EPGATE" \2/p')
if [ "$rc" -ne 0 ] && echo "$pt" | grep -q 'status: crash' &&
	echo "$pt" | grep -q 'where: pw3-steps, step 3 of 4, iteration 0, dispatch' &&
	echo "$pt" | grep -q 'rank: 2' && echo "$pt" | grep -q 'Assertion' &&
	grep -q 'rank 2 ended by signal 6 (SIGABRT, Aborted) in pw3-steps, step 3 of 4, iteration 0, dispatch' "$EG_TMP/l2abort.out" &&
	grep -q '^    repro: epgate launch -n 3' "$EG_TMP/l2abort.out" && valid l2abort; then
	eg_ok "L2 crash: step 3 of 4, dispatch, rank 2, the assert's text and a repro line"
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
