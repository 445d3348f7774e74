#!/bin/sh
# The boundaries of a plugin's calls, on the host (docs/metrics.md,
# "Boundaries"): the default and every EPGATE_BOUNDARY by name in the
# metrics and the evidence; the device window held on the host space's
# modelled stream: a hold too short for any call (planted: 0 us, no room
# to grow) flags every sample and names the calls synced, a hold free to
# grow does not; bad values named; the kernel boundary refused with why
# where CUPTI cannot run; and a gate that names its boundary (an
# evidence rule on `boundary`) passes the window's results and fails a
# file measured at another boundary; an adapter's marks of its library's
# call (env.library()) timed as the call, and marks out of order (a
# planted fault) failing the step; graph replay in the host model, its
# refusals and three planted replay faults. No timing is asserted.
. "${EG_SRCDIR:-.}/suites/lib.sh"
: "${EG_BUILDDIR:=.}"
EG_BUILDDIR=$(cd "$EG_BUILDDIR" && pwd)
tpl=$EG_BUILDDIR/plugins/template/libeg-template.so
E=$EG_EPGATE
cd "$EG_TMP" || exit 99

# be OUT VAR=VALUE...: one bench engine point of the template plugin
# (EG_SO: another plugin, EG_SPEC: options appended to its spec)
be() {
	of=$1
	shift
	env EG_SO="$tpl" EG_SPEC= "$@" sh -c '"$0" launch -n 1 --timeout 120 -- \
		"$0" bench engine "plugin:$EG_SO$EG_SPEC" --tokens 16 --hidden 64 \
		--experts 4 --topk 2 -w 2 -n 6' "$E" >"$of" 2>&1
}
# ev OUT KEY: an evidence line's value; has OUT METRIC: a metric's row
ev() { sed -n "s/^\[0\]   $2  *//p" "$1" | head -n 1; }
has() { grep -q "^\[0\]   $2 " "$1"; }
show() { sed 's/^/# /' "$1" | tail -n 12; }

unset EPGATE_BOUNDARY EPGATE_HOLD_US EPGATE_HOLD_MAX_US EPGATE_CUPTI

# 1. a host plugin's default: the call, named
be call.out
rc=$?
if [ $rc -eq 0 ] && [ "$(ev call.out boundary)" = call ] &&
	has call.out call_dispatch_us && ! has call.out window_dispatch_us &&
	[ -z "$(ev call.out window_short)" ]; then
	eg_ok "a host plugin's calls: boundary call, call_dispatch_us, no window"
else
	eg_not_ok "default boundary: exit $rc"
	show call.out
fi

# 2. planted: a hold too short for any call and no room to grow
be short.out EPGATE_BOUNDARY=window EPGATE_HOLD_US=0 EPGATE_HOLD_MAX_US=0
rc=$?
s=$(ev short.out window_short)
if [ $rc -eq 0 ] && [ "$(ev short.out boundary)" = window ] &&
	[ "$s" = "12 of 12" ] && [ "$(ev short.out window_host_sync)" = yes ] &&
	has short.out window_dispatch_us; then
	eg_ok "a hold too short: every sample flagged ($s), the calls named synced"
else
	eg_not_ok "a hold too short: exit $rc, window_short '$s'"
	show short.out
fi

# 3. the same start, free to grow: the hold lengthens until it covers the
# host's work, and nothing is named synced
be grow.out EPGATE_BOUNDARY=window EPGATE_HOLD_US=0 EPGATE_HOLD_MAX_US=1000000
rc=$?
h=$(ev grow.out window_hold_us)
if [ $rc -eq 0 ] && [ "$(ev grow.out window_host_sync)" = no ] &&
	[ "${h:-0}" -gt 0 ] 2>/dev/null; then
	eg_ok "a hold free to grow: lengthened to $h us, no host sync named ($(ev grow.out window_short) short)"
else
	eg_not_ok "a hold free to grow: exit $rc, hold '$h'"
	show grow.out
fi

# 4. bad values, each named
for kv in EPGATE_BOUNDARY=device EPGATE_HOLD_US=5ms; do
	be bad.out EPGATE_BOUNDARY=window "$kv"
	rc=$?
	if [ $rc -eq 99 ] && grep -q "${kv}: expected" bad.out; then
		eg_ok "$kv refused: $(grep -m1 -o "${kv}: expected.*" bad.out)"
	else
		eg_not_ok "$kv: exit $rc"
		show bad.out
	fi
done

# 5. the kernel boundary where CUPTI cannot run (no GPU here): refused,
# saying why, nothing measured at another boundary in its place
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	eg_ok "# SKIP a GPU is here: the kernel boundary runs (suites/gpu/timing-device.sh)"
else
	be kern.out EPGATE_BOUNDARY=kernel
	rc=$?
	if [ $rc -ne 0 ] && grep -q "CUPTI" kern.out && ! has kern.out dispatch_us; then
		eg_ok "kernel boundary without a GPU: refused: $(grep -m1 -o 'kernel time.*' kern.out | cut -c1-100)"
	else
		eg_not_ok "kernel boundary without a GPU: exit $rc"
		show kern.out
	fi
fi

# 6. an adapter marks its library's own call (env.library()): that span
# is timed, the adapter's work around it a phase of its own; marks out of
# order (planted: a start twice) fail the step, naming them
: "${EG_PYTHON:=python3}"
if [ ! -f "$EG_BUILDDIR/plugins/python/libeg-python.so" ] ||
	! "$EG_PYTHON" -c 'import numpy' 2>/dev/null; then
	eg_ok "# SKIP the Python bridge or numpy is missing: no adapter to mark its library"
	eg_ok "# SKIP the Python bridge or numpy is missing"
	eg_ok "# SKIP the Python bridge or numpy is missing"
else
	pe() {
		of=$1
		shift
		EPGATE_PYTHON=$EG_PYTHON "$E" launch -n 1 --timeout 120 -- \
			"$E" bench engine "plugin:python,$1" --tokens 16 \
			--hidden 64 --experts 4 --topk 2 -w 2 -n 4 >"$of" 2>&1
	}
	pe lib.out module=numpy_ep,library=1
	rc=$?
	if [ $rc -eq 0 ] && has lib.out phase_plugin_dispatch_around_us &&
		has lib.out phase_plugin_combine_around_us &&
		ev lib.out boundary_detail | grep -q "env.mark"; then
		eg_ok "an adapter's own marks: the library's span timed, the adapter's work around it a phase"
	else
		eg_not_ok "an adapter's own marks: exit $rc"
		show lib.out
	fi
	pe mark.out module=numpy_ep_faulty,fault=mark
	rc=$?
	if [ $rc -ne 0 ] && grep -q "env.mark(0): out of order" mark.out; then
		eg_ok "marks out of order (planted): the step fails, naming env.mark"
	else
		eg_not_ok "marks out of order: exit $rc"
		show mark.out
	fi
	# an adapter that declares capture_safe (the adapter protocol's
	# flag) but returns new arrays at every call: the replay refuses it
	export EPGATE_BOUNDARY=replay
	pe cap.out module=numpy_ep_faulty,fault=capture
	rc=$?
	unset EPGATE_BOUNDARY
	if [ $rc -ne 0 ] && grep -q "declares itself capture-safe, but its dispatch returned another recv" cap.out; then
		eg_ok "an adapter declared capture_safe whose arrays move (planted): the replay refuses it"
	else
		eg_not_ok "capture_safe adapter with moving arrays: exit $rc"
		show cap.out
	fi
fi

# 8. graph replay (the replay boundary), in the host model: a plugin that
# declares itself capture-safe is captured after its first verified call
# and replayed (on the host: called again), its first replays verified on
# new data; a plugin or engine that does not declare it is refused with
# why; planted replays that write nothing (dispatch and combine, or
# combine alone) or write the other of two buffers pass a measurement at
# the window (which verifies its first call only) and fail at the replay
be rp.out EPGATE_BOUNDARY=replay "EG_SPEC=,capture=safe"
rc=$?
if [ $rc -eq 0 ] && [ "$(ev rp.out boundary)" = replay ] &&
	[ "$(ev rp.out replays_verified)" = 2 ] && has rp.out replay_dispatch_us &&
	[ -n "$(ev rp.out window_short)" ]; then
	eg_ok "replay: a capture-safe plugin replayed, 2 replays verified, replay_dispatch_us"
else
	eg_not_ok "replay of a capture-safe plugin: exit $rc"
	show rp.out
fi
be rn.out EPGATE_BOUNDARY=replay
rc=$?
if [ $rc -ne 0 ] && grep -q "does not declare itself capture-safe" rn.out &&
	! has rn.out dispatch_us; then
	eg_ok "replay of a plugin not declared capture-safe: refused, saying so"
else
	eg_not_ok "replay of an undeclared plugin: exit $rc"
	show rn.out
fi
EPGATE_BOUNDARY=replay "$E" launch -n 1 --timeout 120 -- "$E" bench engine a2a \
	--tokens 16 --hidden 64 --experts 4 --topk 2 -w 2 -n 6 >ra.out 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "engine a2a does not declare itself capture-safe" ra.out; then
	eg_ok "replay of epgate's a2a engine: refused, saying so"
else
	eg_not_ok "replay of a2a: exit $rc"
	show ra.out
fi
# (the host model runs the library's host code again: a buffer index the
# library flips on the host moves its recv, which is what it names)
for f in "replay-noop:wrong value(s) against the reference.*a replay of the call captured" \
	"replay-noop-combine:wrong value(s) against the reference.*a replay of the call captured" \
	"replay-parity:returned another recv.x than at the capture"; do
	want=${f#*:}
	f=${f%%:*}
	so=$EG_BUILDDIR/plugins/faults/libeg-fault-$f.so
	be "$f-w.out" EPGATE_BOUNDARY=window "EG_SO=$so" "EG_SPEC=,capture=safe"
	rw=$?
	be "$f-r.out" EPGATE_BOUNDARY=replay "EG_SO=$so" "EG_SPEC=,capture=safe"
	rr=$?
	if [ $rw -eq 0 ] && [ $rr -eq 1 ] && grep -q "$want" "$f-r.out"; then
		eg_ok "planted $f: the window passes, the replay fails: $(grep -m1 -o "$want" "$f-r.out" | cut -c1-70)"
	else
		eg_not_ok "planted $f: window exit $rw, replay exit $rr (want 0 1, '$want')"
		show "$f-r.out"
	fi
done

# 7. a gate names the boundary it judges
cat >b.profile <<EOF2
profile: boundary
transport: fabric
launcher: local
timeout: 60
env: {EPGATE_BOUNDARY: window}
repetitions: {warmup: 1, iters: 3}
base: {world: 1, nodes: 1, num_comms: 1, concurrency: 8, hidden: 32,
       experts: 4, topk: 2, dtype: bf16, routing: uniform}
sweeps:
  - name: b
    arms: ["plugin:$tpl"]
    axes: {concurrency: [8]}
EOF2
for want in window kernel; do
	cat >"$want.gate" <<EOF2
profile: boundary
gates:
  - name: judged-at-$want
    sentence: "Every point was timed at the $want boundary."
    rule: evidence
    field: boundary
    expect: [$want]
EOF2
done
"$E" bench profile b.profile --no-gates --results r.json \
	--reports "$EG_TMP/runs" >prof.out 2>&1
rc=$?
"$E" gate --gates window.gate r.json >gw.out 2>&1
rw=$?
"$E" gate --gates kernel.gate r.json >gk.out 2>&1
rk=$?
if [ $rc -eq 0 ] && [ $rw -eq 0 ] && [ $rk -eq 1 ] &&
	grep -q "window_dispatch_us" r.json && grep -q "judged-at-kernel" gk.out; then
	eg_ok "a gate judges its boundary: window passes, a kernel gate fails the window's file"
else
	eg_not_ok "gate on the boundary: profile $rc, window gate $rw, kernel gate $rk (want 0 0 1)"
	show prof.out
	show gk.out
fi
eg_done
