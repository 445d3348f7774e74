#!/bin/sh
# epgate stress, run to run (docs/stress.md, "Run to run"): a fixed
# combine order promises the same bytes in every process.
# - the template (layout=expert, a fixed order of its own; and the self
#   engine at world 2) gives call 0 the same bytes in two fresh processes
#   of other allocation histories; --hashes writes the hash the report
#   shows, and --compare-hashes of that file passes;
# - ORDER_PER_PROCESS (plugins/template/faults.h: each token summed
#   forwards or backwards as a per-process seed, drawn from where a block
#   and the stack landed, says) passes `epgate check` and every
#   call-to-call comparison of stress, and fails run to run;
# - --compare-hashes with one hash planted wrong fails the case; a
#   malformed hash file is exit 99 naming its line.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/stress/stress-lib.sh"

need_template order-per-process
opp=$f/libeg-fault-order-per-process.so
# fp32 (a bf16 output rounds most order differences away), random data,
# top-k 4 (with 2 rows a + b = b + a)
shape="--world=1 --experts=8 --topk=4 --hidden=64 --tokens=16 --dtype=fp32 --data=random"

# the case's run-to-run hash, as stress.json has it
hash() { grep -A3 '"run_to_run": {' "$EG_TMP/s.json" | grep -m1 '"hash":' | sed 's/.*"hash": "//; s/".*//'; }
same='"verdict": "the same bytes in 2 fresh processes"'

stress "plugin:$tpl,layout=expert" --calls 60 $shape --hashes "$EG_TMP/h.txt"
h=$(hash)
if [ "$rc" -eq 0 ] && grep -q "$same" "$EG_TMP/s.json" &&
	grep -q "run to run: the same bytes in 2 fresh processes (call 0's hash $h; history 1: $h; history 2: $h)" "$EG_TMP/s.out" &&
	[ "$(grep -c "^$h --name=cli " "$EG_TMP/h.txt")" -eq 1 ]; then
	eg_ok "template,layout=expert: call 0 the same bytes in 2 fresh processes of other histories, hash $h, written by --hashes"
else
	eg_not_ok "template,layout=expert run to run: exit $rc, hash ${h:-none}"
	show
fi

stress self --world=2 --calls 20
if [ "$rc" -eq 0 ] && grep -q "$same" "$EG_TMP/s.json"; then
	eg_ok "self, world 2 (in process): the same bytes in 2 fresh processes, hash $(hash)"
else
	eg_not_ok "self run to run: exit $rc"
	show
fi

# the fault: what passed before this check passes still
"$EG_EPGATE" check --engine "plugin:$opp,layout=expert" $shape \
	--reports "$EG_TMP/runs" >"$EG_TMP/c.out" 2>&1
crc=$?
stress "plugin:$opp,layout=expert" --calls 60 $shape
if [ "$crc" -eq 0 ] && [ "$rc" -eq 1 ] &&
	grep -q '"failures": 0,' "$EG_TMP/s.json" &&
	grep -q '"verdict": "none: identical inputs gave identical bytes"' "$EG_TMP/s.json" &&
	grep -q '"category": "nondeterministic run to run"' "$EG_TMP/s.json" &&
	grep -q '"verdict": "differs: the same inputs gave other bytes in a fresh process of another allocation history"' "$EG_TMP/s.json"; then
	eg_ok "order-per-process: check passes, stress's calls all pass and agree call to call, run to run: $(grep -m1 'run to run:' "$EG_TMP/s.out" | sed 's/^ *run to run: //')"
else
	eg_not_ok "order-per-process: check exit $crc, stress exit $rc"
	sed 's/^/# /' "$EG_TMP/c.out" | tail -n 3
	show
fi

# another run against the first's hashes: the same; one planted wrong
stress "plugin:$tpl,layout=expert" --calls 20 $shape \
	--compare-hashes "$EG_TMP/h.txt"
if [ "$rc" -eq 0 ] && grep -q "$EG_TMP/h.txt:2: $h, the same" "$EG_TMP/s.out"; then
	eg_ok "--compare-hashes: another run, the same hash as the first's file"
else
	eg_not_ok "--compare-hashes, the same: exit $rc"
	show
fi
case $h in
f*) bad=0${h#?} ;;
*) bad=f${h#?} ;;
esac
sed "s/^$h /$bad /" "$EG_TMP/h.txt" >"$EG_TMP/bad.txt"
stress "plugin:$tpl,layout=expert" --calls 20 $shape \
	--compare-hashes "$EG_TMP/bad.txt"
if [ "$rc" -eq 1 ] && grep -q "$EG_TMP/bad.txt:2: $bad, differs" "$EG_TMP/s.out" &&
	grep -q '"verdict": "differs: the same inputs gave other bytes in the run of the compared hashes"' "$EG_TMP/s.json"; then
	eg_ok "--compare-hashes: a hash planted wrong ($bad for $h) fails the case"
else
	eg_not_ok "--compare-hashes, planted wrong: exit $rc"
	show
fi
echo "not-a-hash --name=cli" >"$EG_TMP/mal.txt"
stress "plugin:$tpl,layout=expert" --calls 20 $shape \
	--compare-hashes "$EG_TMP/mal.txt"
if [ "$rc" -eq 99 ] && grep -q "mal.txt:1: want a hash (16 hex digits), a space and the case's keys" "$EG_TMP/s.out"; then
	eg_ok "--compare-hashes: a malformed line is exit 99 naming it"
else
	eg_not_ok "--compare-hashes, malformed: exit $rc"
	show
fi
eg_done
