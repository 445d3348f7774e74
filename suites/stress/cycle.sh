#!/bin/sh
# epgate stress's instance cycling, long instance and call-time trend
# (docs/stress.md, "Instances" and "Slow drift") against the template's
# planted faults (plugins/template/intermittent.h):
# - the template passes: flat call time, nothing left per instance;
# - LEAK_PER_INSTANCE (destroy forgets 1 MiB and a descriptor) passes a
#   run without instance cycling (the watch over one instance's calls
#   sees nothing) and fails the default one, per instance +1 MiB and +1
#   descriptor;
# - TUNED_PATH_LATE (wrong from an instance's call 1536 on) passes the
#   old floor (435 calls: 300 checked) and fails the default budget,
#   whose one instance makes 2048 calls, from call 1536 on;
# - SLOW_GROWTH (call n spins n microseconds) gives the right bytes and
#   fails the trend;
# - a flat library never fails the trend with busy loops beside it
#   (suites/loaded.sh, as make check-loaded), five runs in a row.
# shellcheck disable=SC2086 # $shape: split into its options on purpose
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "${EG_SRCDIR:-.}/suites/stress/stress-lib.sh"
need_template slow-growth
# the line of the terminal's report that starts with WORD
line() { grep -m1 "^    $1:" "$EG_TMP/s.out"; }

# the template: the default budget (--for: 2048 calls on one instance,
# 64 instances after), flat, nothing left behind
stress "plugin:$tpl" --for 0.1s $shape
rc=$?
if [ "$rc" -eq 0 ] && grep -q '"one_instance_calls": 2048' "$EG_TMP/s.json" &&
	line "one instance" | grep -q 'trend: flat within bound' &&
	line instances | grep -q '64 of 64 created.*0 of 128 calls failed.*descriptors +0 (bound 4)'; then
	eg_ok "template: $(line "one instance" | sed 's/^ *//')"
else
	eg_not_ok "template: exit $rc"
	show
fi

# LEAK_PER_INSTANCE: today's watch (one instance's calls) passes it
stress "plugin:$f/libeg-fault-leak-per-instance.so" --calls 300 \
	--instances 0 $shape
rc=$?
if [ "$rc" -eq 0 ]; then
	eg_ok "leak-per-instance: passes the watch over one instance's 300 calls (--instances 0)"
else
	eg_not_ok "leak-per-instance without cycling: exit $rc"
	show
fi
stress "plugin:$f/libeg-fault-leak-per-instance.so" --calls 300 $shape
rc=$?
if [ "$rc" -eq 1 ] && grep -q '"failures": 0,' "$EG_TMP/s.json" &&
	line instances | grep -q 'descriptors +63 (bound 4).*per instance: resident memory +1.0[0-9]* MiB, descriptors +1.00' &&
	grep -q 'instance cycling failed' "$EG_TMP/s.xml"; then
	eg_ok "leak-per-instance: fails instance cycling: $(line instances | sed 's/.*per instance/per instance/')"
else
	eg_not_ok "leak-per-instance: exit $rc"
	show
fi

# TUNED_PATH_LATE: the old floor's 435 calls pass, the default fails
stress "plugin:$f/libeg-fault-tuned-path-late.so" --calls 435 $shape
rc=$?
if [ "$rc" -eq 0 ]; then
	eg_ok "tuned-path-late: passes 435 calls (the old floor: 300 checked)"
else
	eg_not_ok "tuned-path-late, 435 calls: exit $rc"
	show
fi
stress "plugin:$f/libeg-fault-tuned-path-late.so" --for 0.1s $shape
rc=$?
if [ "$rc" -eq 1 ] &&
	grep -q '"category": "call-count/state dependent: from call 1536 of an instance on' "$EG_TMP/s.json" &&
	grep -q '"repro_sequence": "epgate stress .* --calls=1537 ' "$EG_TMP/s.json"; then
	eg_ok "tuned-path-late: the default budget (2048 calls on one instance) fails it from call 1536 on, its 1537-call sequence printed"
else
	eg_not_ok "tuned-path-late, default budget: exit $rc"
	show
fi

# SLOW_GROWTH: the right bytes, a call time that grows
stress "plugin:$f/libeg-fault-slow-growth.so" --calls 1000 --instances 0 \
	$shape
rc=$?
if [ "$rc" -eq 1 ] && grep -q '"failures": 0,' "$EG_TMP/s.json" &&
	grep -q '"verdict": "within bound"' "$EG_TMP/s.json" &&
	line "one instance" | grep -q 'trend: call time grows: +[0-9]*% over 1000 calls' &&
	grep -q 'call time grows' "$EG_TMP/s.xml"; then
	eg_ok "slow-growth: every call right, $(line "one instance" | sed 's/.*trend: //')"
else
	eg_not_ok "slow-growth: exit $rc"
	show
fi

# a flat library under load: 2 busy loops beside each of five runs
flat=0
for i in 1 2 3 4 5; do
	EG_BUSY_LOOPS=2 sh "$EG_SRCDIR/suites/loaded.sh" "$EG_EPGATE" stress \
		--engine "plugin:$tpl" --tap="$EG_TMP/s.tap" \
		--junit="$EG_TMP/s.xml" --json="$EG_TMP/s.json" \
		--calls 2048 --instances 0 $shape >"$EG_TMP/s.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && line "one instance" | grep -q 'flat within bound'; then
		flat=$((flat + 1))
		echo "# run $i: $(line "one instance" | sed 's/.*trend: //')"
	else
		echo "# run $i: exit $rc"
		show
	fi
done
if [ "$flat" -eq 5 ]; then
	eg_ok "template under load (2 busy loops beside it): the trend flat in 5 of 5 runs of 2048 calls"
else
	eg_not_ok "template under load: the trend flat in $flat of 5 runs"
fi
eg_done
