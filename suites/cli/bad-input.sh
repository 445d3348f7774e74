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

# --help on every command: exit 0 and a usage line.
for cmd in "" check run launch bench gate l2-rank l2-gpu-rank bench-rank version; do
	if "$EG_EPGATE" $cmd --help >"$EG_TMP/out" 2>&1 &&
		grep -q "^usage: epgate" "$EG_TMP/out"; then
		eg_ok "epgate $cmd --help"
	else
		eg_not_ok "epgate $cmd --help"
	fi
done
eg_done
