#!/bin/sh
# Every bad argument or workload file gets one clear line naming the
# argument or file:line, and exit 99.
. "${EG_SRCDIR:-.}/suites/lib.sh"

# expect_bad "<substring of stderr>" args...
expect_bad() {
	want=$1
	shift
	"$EG_EPGATE" "$@" >"$EG_TMP/out" 2>"$EG_TMP/err"
	rc=$?
	if [ "$rc" -ne 99 ]; then
		eg_not_ok "epgate $* exits 99 (got $rc)"
		sed 's/^/# /' "$EG_TMP/err"
	elif ! grep -qF -- "$want" "$EG_TMP/err"; then
		eg_not_ok "epgate $* says '$want'"
		sed 's/^/# /' "$EG_TMP/err"
	else
		eg_ok "epgate $* -> 99: $(head -n 1 "$EG_TMP/err")"
	fi
}

B="$EG_SRCDIR/fixtures/workloads/bad"
expect_bad 'unknown command "frobnicate"' frobnicate
expect_bad 'unknown option "--frobnicate"' check --frobnicate
expect_bad "unexpected argument" check extra
expect_bad "--world=-3" check --world=-3
expect_bad "--world=abc" check --world=abc
expect_bad "divisible" check --world=4 --experts=10
expect_bad "topk" check --experts=8 --topk=9
expect_bad "--dtype=fp16" check --dtype=fp16
expect_bad "--routing=zipff:1" check --routing=zipff:1
expect_bad "--hidden=" check --hidden=99999999999
expect_bad "--iters" check --iters=0
expect_bad "--engine" check --engine=nope --world=2
expect_bad "missing.ini" check --workload="$EG_TMP/missing.ini"
for f in "$B"/*.ini; do
	want=$(sed -n '1s/^# expect: //p' "$f")
	expect_bad "$want" check --workload="$f"
done
expect_bad 'unknown option "--frobnicate"' run --frobnicate
# L2 checks what its ranks would run before launching any
expect_bad "one rank per process" check --l2 --engine fault:bitflip
expect_bad "--hidden=" check --l2 --hidden=99999999999
expect_bad "--engine" l2-rank --engine self
expect_bad "--memory" l2-rank --memory disk
expect_bad "need --memory cuda" l2-rank --path nvlink
expect_bad "--path" l2-gpu-rank --path moon
expect_bad "--provider" l2-gpu-rank --provider tcp
expect_bad "--iters" l2-rank --iters 0

# numbers: a negative where none is allowed is out of range, not "not a
# number"; a default that breaks a workload is named as the default
expect_bad "--mask=-0.1: mask: -0.1 is out of range [0, 1]" check --mask=-0.1
expect_bad "experts=8 is not divisible by world=6 (experts=8 is the default: give --experts)" \
	check --world=6 --tokens=uneven:9

# where a command writes: the argument, the path and why -- never
# "input/output error" -- and no run folder left by a command that
# failed before running anything
expect_bad "--reports /proc/nope: cannot create the folder /proc/nope: " check --reports /proc/nope
expect_bad "--tap /nonexistent/dir/x.tap: the folder /nonexistent/dir does not exist" \
	check --tap /nonexistent/dir/x.tap --reports "$EG_TMP/r-tap"
expect_bad "--junit $EG_TMP: is a folder; give a file" check --junit "$EG_TMP" --reports "$EG_TMP/r-tap"
expect_bad "--tap /nonexistent/dir/x.tap: the folder /nonexistent/dir does not exist" \
	check --l2 --tap /nonexistent/dir/x.tap --reports "$EG_TMP/r-tap"
expect_bad 'no profile "nope"' bench profile nope --reports "$EG_TMP/r-prof"
if ! grep -qi 'input/output error' "$EG_TMP/err" && [ -z "$(ls -A "$EG_TMP/r-tap" 2>/dev/null)" ] &&
	[ -z "$(ls -A "$EG_TMP/r-prof" 2>/dev/null)" ]; then
	eg_ok "commands that failed before running left no run folder"
else
	eg_not_ok "run folders left: $(ls "$EG_TMP/r-tap" "$EG_TMP/r-prof" 2>&1 | tr '\n' ' ')"
fi
"$EG_EPGATE" bench profile p5en-ep16 --reports "$EG_TMP/r-slurm" >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 77 ] && grep -q 'runs under Slurm' "$EG_TMP/out" &&
	[ -z "$(ls -A "$EG_TMP/r-slurm" 2>/dev/null)" ]; then
	eg_ok "bench profile p5en-ep16 outside Slurm: 77, says why, no run folder"
else
	eg_not_ok "bench profile p5en-ep16 outside Slurm: exit $rc, folders: $(ls "$EG_TMP/r-slurm" 2>&1)"
fi

# exit codes that agree: nothing selected is 77 with or without --list
for args in "--filter=zzz" "--filter=zzz --list"; do
	# shellcheck disable=SC2086
	"$EG_EPGATE" check $args --reports "$EG_TMP/r-none" >"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ] && grep -q 'no workload matches --filter zzz (of [0-9]* in the L1 matrix)' "$EG_TMP/out"; then
		eg_ok "check $args: 77, $(head -n 1 "$EG_TMP/out" | cut -c1-70)"
	else
		eg_not_ok "check $args: exit $rc, want 77"
		sed 's/^/# /' "$EG_TMP/out"
	fi
done
# a libfabric provider the host lacks is a bad argument (99), said once
"$EG_EPGATE" launch -n 2 -- "$EG_EPGATE" bench raw --provider nope >"$EG_TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 77 ] && grep -q 'built without libfabric' "$EG_TMP/out"; then
	eg_ok "bench raw --provider nope # SKIP built without libfabric"
elif [ "$rc" -eq 99 ] && [ "$(grep -c -- '--provider nope: provider nope is not on this host' "$EG_TMP/out")" -eq 1 ]; then
	eg_ok "bench raw --provider nope: 99, said once"
else
	eg_not_ok "bench raw --provider nope: exit $rc, want 99"
	sed 's/^/# /' "$EG_TMP/out"
fi
# a report to a device (/dev/null) is written into it, never replaced by
# a file: a null device of our own, made where root may make one
if [ "$(id -u)" -eq 0 ] && mknod "$EG_TMP/null" c 1 3 2>/dev/null; then
	"$EG_EPGATE" gate --gates "$EG_SRCDIR/gates/p5en-ep16.gate" --tap "$EG_TMP/null" \
		--junit "$EG_TMP/null" "$EG_SRCDIR/fixtures/campaigns/p5en-ep16.recorded.json" \
		>"$EG_TMP/out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && [ -c "$EG_TMP/null" ] && [ ! -e "$EG_TMP/null.tmp" ]; then
		eg_ok "--tap and --junit to a null device: written through it, still a device"
	else
		eg_not_ok "--junit to a null device: exit $rc, $(ls -l "$EG_TMP/null")"
	fi
else
	eg_ok "--junit to a null device # SKIP cannot make a device node here (not root)"
fi

# --help on every command: exit 0 and a usage line.
for cmd in "" check run launch bench gate l2-rank l2-gpu-rank bench-rank version \
	preflight job-report; do
	if "$EG_EPGATE" $cmd --help >"$EG_TMP/out" 2>&1 &&
		grep -q "^usage: epgate" "$EG_TMP/out"; then
		eg_ok "epgate $cmd --help"
	else
		eg_not_ok "epgate $cmd --help"
	fi
done
eg_done
