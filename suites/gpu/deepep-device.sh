#!/bin/sh
# DeepEP through epgate's Python bridge on one H200 (W = 1), beside
# DeepEP's own tests and timing (docs/python.md, "DeepEP on the GPU
# machine"):
#
#   sh suites/gpu/deepep-device.sh DEEPEP_SRC NCCL_BUNDLE EPGATE_DIR
#
# DEEPEP_SRC   DeepEP's sources (with third-party/fmt), e.g. /tmp/deepep-src
# NCCL_BUNDLE  ncclep-sm90.tar.xz of suites/gpu/ncclep-build.sh, or its
#              folder (NCCL 2.30.7: DeepEP V2 needs its GIN)
# EPGATE_DIR   an epgate build or the carried bundle of docs/gpu.md
#              (bin/epgate or epgate); the bridge itself is compiled here
#              against the torch venv ($PYTHON, /opt/torch/.venv/bin/python3)
#
# Run from the repository root. Logs under $OUT (else a folder it names),
# the tables last. DPE_STEPS picks steps (default all of: build env own
# cases bench; cases-elastic, cases-det, cases-ll, cases-intranode and
# cases-l2 are the parts of cases); the JIT cache ($DPE_JIT, default
# /tmp/deepep-jit) and the built DeepEP stay between calls on a warm
# machine, so the steps can be run one call each (DPE_CASE_TIMEOUT, 540 s,
# bounds each `epgate check`, DPE_OWN_TIMEOUT, 600 s, each of DeepEP's own
# tests). Steps:
#  build  DeepEP in place (suites/gpu/deepep-build.sh), and the bridge;
#  env    versions, the libnccl each library maps, import deep_ep;
#  own    DeepEP's own tests at one rank (DPE_OWN_TESTS: some of
#         "elastic intranode low-latency"; tests/elastic/test_ep.py, its
#         first case at 4096 tokens; tests/legacy/test_intranode.py and
#         test_low_latency.py), with faulthandler: a crash says its signal
#         and frame; after a crash the same test again with DeepEP's own
#         NCCL communicator (EP_REUSE_NCCL_COMM=0) and with the torch
#         venv's NCCL (the setup that crashed on 2026-12-04), to tell the
#         causes apart;
#  cases  the adapter's cases through `epgate check` (each in a forked
#         child with a deadline: pass, fail, skip or a library crash with
#         its signal), per mode: elastic, elastic deterministic=1 on random
#         data (its fixed order checked), ll, intranode (skipped at W=1:
#         DeepEP's kernels exist for 2, 4, 8 ranks), the declared limits;
#         and one `epgate launch -n 1 -- epgate l2-rank` of elastic; all
#         into deepep.tap;
#  stress `epgate stress` over elastic, elastic deterministic=1 and ll
#         (DPE_STRESS_S seconds each, 60; STRESS_CALLS=N: N calls a case;
#         DPE_STRESS_CASES="stress-elastic stress-det stress-ll" or some;
#         DPE_STRESS_ARGS added to each, e.g. "--long 0 --min-calls 100");
#  profile the h200x1 profile with its DeepEP and NCCL EP arms, gated;
#  instances DeepEP V2's ElasticBuffer made and destroyed DPE_INSTANCES
#         times (32) alone, its device memory after each, on torch's
#         default stream, on a new stream an instance (as epgate), and so
#         with torch's cache emptied (DPE_INSTANCE_VARIANTS;
#         suites/gpu/deepep-instances.py; opt-in, as stress);
#  bench  elastic at 128 and 4096 tokens (H 7168, top-8 of 256;
#         DPE_BENCH_BOUNDARIES: some of "window kernel call";
#         DPE_BENCH_TOKENS: some of "128 4096"; DPE_ALONE_ENV: VAR=VALUE
#         words for every DeepEP alone, e.g. DPE_TIME_STREAM=new): epgate's
#         bench of the adapter (events around the bridge's call, and
#         epgate's step), DeepEP alone timed the same way
#         (suites/gpu/deepep-time.py), DeepEP's test_ep.py kernel times.
# Exit: 0 every step passed, 1 one failed, 77 no GPU, 99 bad arguments.
if [ $# -ne 3 ]; then
	echo "usage: sh suites/gpu/deepep-device.sh DEEPEP_SRC NCCL_BUNDLE EPGATE_DIR" >&2
	exit 99
fi
EG_SRCDIR=${EG_SRCDIR:-$PWD}
. "$EG_SRCDIR/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
. "$EG_SRCDIR/suites/gpu/deepep-lib.sh"
trap - EXIT
LOG=${OUT:-${TMPDIR:-/tmp}/deepep-device.$$}
mkdir -p "$LOG" || exit 99
rm -rf "$EG_TMP"
EG_TMP=$LOG
WORK=${TMPDIR:-/tmp}/deepep-work
mkdir -p "$WORK" || exit 99
SRC=$(cd "$1" 2>/dev/null && pwd) || { echo "deepep-device: no folder $1" >&2; exit 99; }
# DeepEP is built in a copy under WORK: a device call replaces the
# carried tree (and an in-place build with it), WORK stays while warm
if [ "$(cat "$SRC/COMMIT" 2>/dev/null)" != "$(cat "$WORK/deepep-src/COMMIT" 2>/dev/null)" ] ||
	[ ! -d "$WORK/deepep-src" ]; then
	rm -rf "$WORK/deepep-src" && cp -R "$SRC" "$WORK/deepep-src" || exit 99
fi
SRC=$WORK/deepep-src
: "${PYTHON:=/opt/torch/.venv/bin/python3}"
: "${DPE_STEPS:=build env own cases bench}"
has() { case " $DPE_STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
# cases-elastic, cases-det, cases-ll, cases-intranode, cases-l2: a part
has_case() { has cases || has "cases-$1"; }
: "${DPE_CASE_TIMEOUT:=540}" # one `epgate check`: within a device call
: "${DPE_OWN_TIMEOUT:=600}"  # one of DeepEP's own tests, or its timing alone
T0=$(date +%s)
SUM=$LOG/steps.txt
: >"$SUM"
step() {
	printf "%-28s %-5s %4ss  %s\n" "$1" "$2" "$(($(date +%s) - T0))" "$3" |
		tee -a "$SUM"
	[ "$2" = FAIL ] && eg_fails=$((eg_fails + 1))
	return 0
}
okfail() { [ "$1" -eq 0 ] && echo ok || echo FAIL; }

echo "== deepep-device: logs in $LOG (steps: $DPE_STEPS)"
# NCCL bundle, epgate, the environment
if [ -d "$2" ]; then
	NROOT=$(nep_find_root "$2")
else
	mkdir -p "$WORK/ncclep" && tar -xJf "$2" -C "$WORK/ncclep" 2>"$LOG/setup.txt"
	NROOT=$(nep_find_root "$WORK/ncclep")
fi
[ -n "$NROOT" ] || { echo "deepep-device: no NCCL bundle in $2" >&2; exit 99; }
EGD=$3
# the bundle's bridge was built for the build host's Python: the build
# step compiles the one used here, which a later call must not overwrite
case $EGD in *.tar.xz) mkdir -p "$WORK/eg" &&
	tar -xJf "$EGD" -C "$WORK/eg" --exclude=./plugins/python/libeg-python.so &&
	EGD=$WORK/eg ;;
esac
EG_EPGATE=
for f in "$EGD/epgate" "$EGD/bin/epgate"; do
	[ -x "$f" ] && { EG_EPGATE=$(cd "$(dirname "$f")" && pwd)/epgate; break; }
done
[ -n "$EG_EPGATE" ] || { echo "deepep-device: no epgate in $EGD" >&2; exit 99; }
[ -x "$PYTHON" ] || { echo "deepep-device: no interpreter $PYTHON (PYTHON=)" >&2; exit 99; }
export EG_EPGATE
dpe_env "$NROOT" "$SRC" "$PYTHON"
for d in "$EGD/lib" "$(dirname "$EG_EPGATE")/../lib"; do
	[ -d "$d" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(cd "$d" && pwd)
done
: "${EPGATE_DATADIR:=$EG_SRCDIR}"
EPGATE_TIMEOUT=${EPGATE_TIMEOUT:-900} # DeepEP's JIT compiles at first use
export LD_LIBRARY_PATH EPGATE_DATADIR EPGATE_TIMEOUT
# the bridge: beside the epgate that loads it (plugin:python finds it)
BRIDGE=$(dirname "$EG_EPGATE")/plugins/python/libeg-python.so
ngpu=$(nep_gpus)
if [ "$ngpu" -lt 1 ]; then
	step "0 setup" SKIP "no GPU (nvidia-smi lists none)"
	exit 77
fi

if has build; then
	t=$(date +%s)
	sh "$EG_SRCDIR/suites/gpu/deepep-build.sh" "$SRC" "$NROOT" 16 \
		>"$LOG/build.out" 2>&1
	rc=$?
	step "1 build DeepEP" "$(okfail $rc)" "exit $rc, $(($(date +%s) - t)) s$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/build.out")") (deepep-build.log)"
	dpe_build_bridge "$EG_SRCDIR" "$BRIDGE" "$PYTHON" >"$LOG/bridge.out" 2>&1
	rc=$?
	step "1 build bridge" "$(okfail $rc)" "$BRIDGE against $("$PYTHON" -V 2>&1)$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bridge.out")")"
fi
[ -f "$BRIDGE" ] || { step "1 bridge" FAIL "no $BRIDGE: run the build step"; exit 1; }

if has env; then
	{
		nvidia-smi -L
		echo "NCCL bundle: $NROOT ($(cat "$NROOT/SOURCE" 2>/dev/null | tr '\n' ' '))"
		echo "DeepEP: $SRC ($(cd "$SRC" && { git rev-parse --short HEAD 2>/dev/null || cat COMMIT 2>/dev/null; }))"
		echo "epgate: $EG_EPGATE"
		echo "bridge: $BRIDGE"; ldd "$BRIDGE" | grep -i python
		env | grep -E '^(LD_LIBRARY_PATH|LD_PRELOAD|PYTHONPATH|EP_|EPGATE_|NCCL_)' | sort
		echo "ulimit -s $(ulimit -s), -l $(ulimit -l), -n $(ulimit -n)"
		nvidia-smi --query-gpu=driver_version,name --format=csv,noheader
	} >"$LOG/env.txt" 2>&1
	cat >"$WORK/probe.py" <<'PY'
import sys, torch
def ncclmaps():
    return sorted({l.split()[-1] for l in open("/proc/self/maps") if "libnccl" in l})
print("python", sys.version.split()[0], "torch", torch.__version__,
      "cuda", torch.version.cuda, "torch nccl", torch.cuda.nccl.version())
print("libnccl after torch:", ncclmaps())
import deep_ep
from deep_ep.utils.find_pkgs import find_nccl_root
print("deep_ep", deep_ep.__version__, deep_ep.__file__, "nccl root", find_nccl_root())
print("libnccl after deep_ep:", ncclmaps())
PY
	why=$(dpe_own import 300 "$PYTHON" "$WORK/probe.py")
	rc=$?
	cat "$LOG/import.out" >>"$LOG/env.txt"
	step "2 import deep_ep" "$(okfail $rc)" "$why: $(grep -v '^\s*$' "$LOG/import.out" | tail -n 1 | cut -c1-150)"
fi

if has own; then
	cd "$SRC" || exit 99
	port=$((20000 + $$ % 20000))
	# own LABEL TEST ARGS: one of DeepEP's tests at one rank, with the
	# variables of OWN_ENV (VAR=VALUE ...) on top of the environment
	OWN_ENV=
	own() {
		l=$1 t=$2
		shift 2
		port=$((port + 1))
		# shellcheck disable=SC2086 # OWN_ENV: words on purpose
		why=$(dpe_own "$l" "$DPE_OWN_TIMEOUT" env MASTER_ADDR=127.0.0.1 \
			MASTER_PORT=$port $OWN_ENV "$PYTHON" "$t" \
			--num-processes 1 "$@")
		rc=$?
		step "3 $l" "$(okfail $rc)" "$why; $(nep_why "$LOG/$l.out" | cut -c1-120)"
		return "$rc"
	}
	# DPE_OWN_TESTS: some of "elastic intranode low-latency" (all)
	has_own() { case " ${DPE_OWN_TESTS:-elastic intranode low-latency} " in *" $1 "*) return 0 ;; esac; return 1; }
	rc=0
	has_own elastic && { own own-elastic tests/elastic/test_ep.py --test-first-only \
		--num-tokens 4096 --hidden 7168 --num-topk 8 --num-experts 256; rc=$?; }
	if [ $rc -gt 128 ]; then # a crash: the same test in two other setups
		OWN_ENV="EP_REUSE_NCCL_COMM=0"
		own own-elastic-owncomm tests/elastic/test_ep.py --test-first-only \
			--num-tokens 4096 --hidden 7168 --num-topk 8 --num-experts 256
		# its own communicator works: the cases use it, and say so
		if [ $? -eq 0 ] && [ -z "${DPE_REUSE_COMM:-}" ]; then
			EP_REUSE_NCCL_COMM=0
			export EP_REUSE_NCCL_COMM
			step "3 setup for the cases" ok "EP_REUSE_NCCL_COMM=0: torch's communicator crashed DeepEP, its own did not"
		fi
		venv_nccl=$("$PYTHON" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
		OWN_ENV="LD_PRELOAD= LD_LIBRARY_PATH=$venv_nccl:$LD_LIBRARY_PATH EP_SUPPRESS_NCCL_CHECK=1"
		own own-elastic-venvnccl tests/elastic/test_ep.py --test-first-only \
			--num-tokens 4096 --hidden 7168 --num-topk 8 --num-experts 256
		OWN_ENV=
	fi
	# at one rank DeepEP's intranode kernels refuse (SWITCH_RANKS: 2, 4,
	# 8): an exception saying so is the expected answer, a crash is not
	if has_own intranode; then
		dpe_own own-intranode "$DPE_OWN_TIMEOUT" env MASTER_ADDR=127.0.0.1 \
			MASTER_PORT=$((port + 1)) "$PYTHON" tests/legacy/test_intranode.py \
			--num-processes 1 --num-tokens 128 >"$LOG/own-intranode.why"
		rc=$?
		port=$((port + 1))
		if [ "$rc" -ge 1 ] && [ "$rc" -le 127 ] &&
			grep -q 'Unsupported number of EP ranks\|Unsupported ranks\|RuntimeError: Assertion exception' "$LOG/own-intranode.out"; then
			step "3 own-intranode" ok "refuses W=1 with an exception, not a crash: $(grep -m1 -o 'Unsupported[^)]*\|Assertion exception.*' "$LOG/own-intranode.out" | cut -c1-120)"
		else
			step "3 own-intranode" FAIL "$(cat "$LOG/own-intranode.why"); $(nep_why "$LOG/own-intranode.out" | cut -c1-120)"
		fi
	fi
	has_own low-latency && own own-low-latency tests/legacy/test_low_latency.py \
		--num-tokens 128 --num-experts 256
	cd "$EG_SRCDIR" || exit 99
fi

if has cases || has cases-elastic || has cases-det || has cases-ll ||
	has cases-intranode || has cases-l2; then
	dpe_workloads "$LOG"
	dpe_check declares "plugin:python,module=deepep,mode=xx" "$LOG/intranode-w1.ini" \
		>"$LOG/declares.result" 2>&1
	if grep -q "option mode=xx: want mode=elastic" "$LOG/declares.out"; then
		step "4 a bad option" ok "refused, exit 99: $(grep -m1 -o 'option mode=xx.*' "$LOG/declares.out" | cut -c1-90)"
	else
		step "4 a bad option" FAIL "not refused (declares.out)"
	fi
	for c in "elastic plugin:python,module=deepep elastic-w1.ini" \
		"det plugin:python,module=deepep,deterministic=1 elastic-w1.ini" \
		"ll plugin:python,module=deepep,mode=ll ll-w1.ini" \
		"intranode plugin:python,module=deepep,mode=intranode intranode-w1.ini"; do
		set -- $c
		has_case "$1" || continue
		dpe_check "$1" "$2" "$LOG/$3" >"$LOG/$1.result" 2>&1
		st=$(head -n 1 "$LOG/$1.result" | grep -q '^ok' && echo ok || echo FAIL)
		head -n 1 "$LOG/$1.result" | grep -q '^ok.*# SKIP' && st=SKIP
		step "4 cases $1" "$st" "$(head -n 1 "$LOG/$1.result" | sed 's/^[a-z ]*[0-9]* - //' | cut -c1-150)"
	done
	if has_case l2; then
		timeout "$DPE_CASE_TIMEOUT" "$EG_EPGATE" launch -n 1 \
			--timeout "$DPE_CASE_TIMEOUT" -- "$EG_EPGATE" l2-rank \
			--engine plugin:python,module=deepep \
			--workload "$LOG/elastic-w1.ini" --filter el- --iters 2 \
			--results "$LOG/l2-elastic.jsonl" >"$LOG/l2-elastic.out" 2>&1
		rc=$?
		step "4 l2-rank elastic" "$(okfail $rc)" "exit $rc, $(grep -c '"status":"pass"' "$LOG/l2-elastic.jsonl" 2>/dev/null) of $(grep -c '^\[el-' "$LOG/elastic-w1.ini") pass (l2-elastic.out)"
	fi
	# every mode's verdicts so far, one TAP
	set --
	for f in elastic det ll intranode; do
		[ -f "$LOG/$f.tap" ] && set -- "$@" "$LOG/$f.tap"
	done
	[ $# -gt 0 ] && dpe_tap_merge "$LOG/deepep.tap" "$@"
fi

if has bench; then
	# alone NAME [VAR=VALUE...]: DeepEP alone at the shape of $tok, timed
	alone() {
		n=$1
		shift
		# shellcheck disable=SC2086 # DPE_ALONE_ENV: words
		dpe_own "$n" "$DPE_OWN_TIMEOUT" env ${DPE_ALONE_ENV:-} "$@" "$PYTHON" \
			"$EG_SRCDIR/suites/gpu/deepep-time.py" elastic "$tok" 7168 256 8 10 50
	}
	# again NAME LABEL [VAR=VALUE|CMD...]: after a crash, DeepEP alone
	# once more with one thing changed, a step of its own; it says the
	# last line printed before Python's "Fatal" (EP_JIT_DEBUG's: in
	# DeepEP's JIT or after it)
	again() {
		n=$1 l=$2
		shift 2
		why=$(alone "time-el-$tok-$n" "$@")
		step "5 DeepEP alone $tok, $l" "$(okfail $?)" "$why; $(grep -v '^\s*$' "$LOG/time-el-$tok-$n.out" | grep -iv 'warn' | grep -B1 -m1 'Fatal Python' | head -n 1 | cut -c1-150)"
	}
	# each boundary of docs/metrics.md: call (events around the bridge's
	# call), window (the same behind a hold: the default), kernel (CUPTI)
	for tok in ${DPE_BENCH_TOKENS:-128 4096}; do
		# DPE_BENCH_BOUNDARIES: some of them (all three)
		for b in ${DPE_BENCH_BOUNDARIES:-window kernel call}; do
			NEP_BOUNDARY=$b nep_bench "$LOG/bench-el-$tok-$b.out" 1 1 "plugin:python,module=deepep" "$tok"
			rc=$?
			step "5 bench elastic $tok $b" "$(okfail $rc)" "exit $rc$([ $rc -ne 0 ] && echo ": $(nep_why "$LOG/bench-el-$tok-$b.out")"); dispatch $(nep_metric "$LOG/bench-el-$tok-$b.out" dispatch_us) us, combine $(nep_metric "$LOG/bench-el-$tok-$b.out" combine_us) us (median)"
		done
		why=$(alone "time-el-$tok")
		rc=$?
		step "5 DeepEP alone $tok" "$(okfail $rc)" "$why; $({ grep -m1 '^deepep-time' "$LOG/time-el-$tok.out" || nep_why "$LOG/time-el-$tok.out"; } | cut -c1-160)"
		# alone it crashed in its first dispatch where epgate's process
		# ran every step (2026-12-04, 12-07 x3): once more with the NCCL
		# environment epgate's transport sets in its own process
		if [ $rc -gt 128 ] && [ "$tok" = 128 ]; then
			again ncclenv "epgate's NCCL env" NCCL_DEBUG=INFO \
				NCCL_DEBUG_SUBSYS=INIT,P2P,NET,GRAPH NCCL_DEBUG_FILE="$LOG/nccl-alone.%p.log"
			# NCCL's cuMem allocations (ncclMemAlloc, the window) as a
			# process that initialized NCCL itself first has them
			again cumem NCCL_CUMEM_ENABLE=1 NCCL_CUMEM_ENABLE=1
			# the adapter's stream: epgate runs DeepEP on a stream of
			# its own, never torch's default one
			again stream "a new stream" DPE_TIME_STREAM=new
			# the bundle's libnccl not preloaded (epgate's process maps
			# it as its own dependency, not as LD_PRELOAD)
			again nopreload "no LD_PRELOAD" LD_PRELOAD=
			# NCCL initialized before torch's group, as epgate's
			# process has a communicator of its own first
			again ncclfirst "NCCL initialized first" DPE_PRE_NCCL=1
			# DeepEP's JIT says each step (compile, cubin load, launch):
			# whether the crash is in its JIT or after it
			again jitdebug EP_JIT_DEBUG=1 EP_JIT_DEBUG=1 EP_BUFFER_DEBUG=1
			# a host stack without limit: a deep or large frame of
			# DeepEP's host code would fault on the 8 MiB default
			again stack "ulimit -s unlimited" sh -c 'ulimit -s unlimited && exec "$0" "$@"'
		fi
	done
	{
		echo
		echo "== DeepEP elastic through epgate vs DeepEP alone, boundary by boundary (W=1, H=7168, top-8 of 256; epgate: 10 warm-up + 50 timed steps, median; alone: 10 + 50 calls, mean)"
		echo "call: events around the call; window: the same behind a hold; kernel: epgate's CUPTI union of the call's kernels vs DeepEP's bench_kineto (its kernels' mean, L2 flushed);"
		echo "kernel (DeepEP's two): epgate's per-kernel means of DeepEP's two kernels (evidence 'kernels') vs bench_kineto's"
		printf "%-34s %10s %10s %7s %5s\n" "tokens phase (boundary)" "epgate_us" "alone_us" "ratio" "<=5%"
		for tok in 128 4096; do
			for ph in dispatch combine; do
				dpe_row "$tok $ph (call)" "$(nep_metric "$LOG/bench-el-$tok-call.out" "${ph}_us")" "$(dpe_time "$LOG/time-el-$tok.out" "${ph}_us")"
				dpe_row "$tok $ph (window)" "$(nep_metric "$LOG/bench-el-$tok-window.out" "${ph}_us")" "$(dpe_time "$LOG/time-el-$tok.out" "${ph}_win_us")"
				dpe_row "$tok $ph (kernel, union)" "$(nep_metric "$LOG/bench-el-$tok-kernel.out" "${ph}_us")" "$(dpe_time "$LOG/time-el-$tok.out" "${ph}_kineto_us")"
				if [ $ph = dispatch ]; then k="dispatch_impl dispatch_copy_epilogue_impl"; else k="combine_impl combine_reduce_epilogue_impl"; fi
				dpe_row "$tok $ph (kernel, DeepEP's two)" "$(dpe_kern_sum "$LOG/bench-el-$tok-kernel.out" $k)" "$(dpe_time "$LOG/time-el-$tok.out" "${ph}_kineto_us")"
				dpe_row "$tok $ph (epgate step)" "$(nep_metric "$LOG/bench-el-$tok-window.out" "wall_${ph}_us")" "$(dpe_time "$LOG/time-el-$tok.out" "${ph}_us")"
			done
		done
		for tok in 128 4096; do
			for b in window kernel; do
				grep -E "boundary |window_|kernels " "$LOG/bench-el-$tok-$b.out" | sed "s/^/$tok $b: /" | cut -c1-400
			done
		done
		[ -f "$LOG/own-elastic.out" ] &&
			echo "test_ep.py at 4096 tokens, kernels (kineto): dispatch $(dpe_kineto "$LOG/own-elastic.out" dispatch) us, combine $(dpe_kineto "$LOG/own-elastic.out" combine) us"
	} >"$LOG/compare.txt"
fi

# stress (issue 35, part 3): epgate stress over DeepEP's W = 1 modes,
# each for DPE_STRESS_S seconds (60) or, with STRESS_CALLS=N, exactly N
# checked calls per case: the failure rate and its interval per case, the
# fixed order of deterministic=1 checked call to call and run to run
if has stress; then
	dpe_workloads "$LOG"
	for c in "stress-elastic plugin:python,module=deepep elastic-w1.ini" \
		"stress-det plugin:python,module=deepep,deterministic=1 elastic-w1.ini" \
		"stress-ll plugin:python,module=deepep,mode=ll ll-w1.ini"; do
		set -- $c
		# DPE_STRESS_CASES: some of them, one device call each if need be
		case " ${DPE_STRESS_CASES:-$1} " in *" $1 "*) ;; *) continue ;; esac
		if [ -n "${STRESS_CALLS:-}" ]; then b="--calls $STRESS_CALLS"; else b="--for ${DPE_STRESS_S:-60}s"; fi
		# DPE_STRESS_ARGS: added (the budget's floors, 300 checked and
		# 2048 calls a case, took 460 s for el-base alone on one H100,
		# 2026-12-07: e.g. "--long 0 --min-calls 100 --filter el-base")
		# shellcheck disable=SC2086 # b and DPE_STRESS_ARGS: words
		timeout "${DPE_CASE_TIMEOUT:-540}" "$EG_EPGATE" stress --engine "$2" \
			--workload "$LOG/$3" $b ${DPE_STRESS_ARGS:-} --json="$LOG/$1.json" \
			--tap="$LOG/$1.tap" >"$LOG/$1.out" 2>&1
		rc=$?
		case $rc in 0) s=ok ;; 77) s=SKIP ;; *) s=FAIL ;; esac
		step "6 $1" "$s" "exit $rc; $(tail -n 1 "$LOG/$1.out" | cut -c1-120)"
	done
fi

# DeepEP V2's ElasticBuffer made and destroyed DPE_INSTANCES times (32)
# without epgate: where its device memory goes (suites/gpu/
# deepep-instances.py; issue 35's stress saw +15.4 MiB an instance)
if has instances; then
	# DPE_INSTANCE_VARIANTS: default (torch's default stream), fresh (a
	# new stream an instance, as epgate), fresh-empty (and torch's cache
	# emptied after each destroy, as the torch adapters now do), fixed
	for v in ${DPE_INSTANCE_VARIANTS:-default fresh fresh-empty}; do
		case $v in
		fresh-empty) ve="DPE_STREAM=fresh DPE_EMPTY_CACHE=1" ;;
		*) ve="DPE_STREAM=$v" ;;
		esac
		# shellcheck disable=SC2086 # ve: words on purpose
		why=$(dpe_own "instances-$v" "$DPE_OWN_TIMEOUT" env $ve "$PYTHON" \
			"$EG_SRCDIR/suites/gpu/deepep-instances.py" "${DPE_INSTANCES:-32}")
		rc=$?
		step "8 instances alone, $v" "$(okfail $rc)" "$why; $({ grep -m1 '^deepep-instances' "$LOG/instances-$v.out" || nep_why "$LOG/instances-$v.out"; } | sed 's/ buffer=.*distinct_streams=/ streams=/' | cut -c1-190)"
	done
fi

# the h200x1 profile with its library arms (issue 35, part 3): DeepEP
# (V2 elastic, legacy ll) and NCCL EP (ll, ht) beside a2a and dense, its
# gates judged (gates/h200x1.gate); DPE_PROFILE_LAUNCHES launches a point
# (2: the profile's 3 and its re-measurement do not fit one device call
# with DeepEP's first compiles), DPE_PROFILE_SWEEPS to pick sweeps
if has profile; then
	NSO=$(dirname "$EG_EPGATE")/plugins/nccl-ep/libeg-nccl-ep.so
	[ -f "$NSO" ] || echo "deepep-device: no $NSO: the NCCL EP arms will skip" >&2
	# shellcheck disable=SC2086 # the --sweep pair, when set
	timeout "${DPE_PROFILE_TIMEOUT:-540}" "$EG_EPGATE" bench profile h200x1 \
		--reports "$LOG/reports" --launches "${DPE_PROFILE_LAUNCHES:-2}" \
		--remeasure 0 ${DPE_PROFILE_SWEEPS:+--sweep $DPE_PROFILE_SWEEPS} \
		>"$LOG/profile.out" 2>&1
	rc=$?
	case $rc in 0) s=ok ;; 77) s=SKIP ;; *) s=FAIL ;; esac
	step "7 profile h200x1" "$s" "exit $rc; $(grep -c '^ok' "$LOG"/reports/*/bench-gates.tap 2>/dev/null | head -n 1) gates ok, $(grep -c '^not ok' "$LOG"/reports/*/bench-gates.tap 2>/dev/null | head -n 1) not ok (profile.out)"
fi

{
	echo
	echo "== steps (W=1, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1); $(($(date +%s) - T0)) s)"
	cat "$SUM"
	[ -f "$LOG/compare.txt" ] && cat "$LOG/compare.txt"
	[ -f "$LOG/profile.out" ] && { echo; echo "== profile h200x1"; tail -n 60 "$LOG/profile.out" | cut -c1-220; }
	for f in elastic det ll intranode; do
		[ -f "$LOG/$f.result" ] || continue
		echo
		echo "== $f (verdicts other than a plain pass)"
		head -n 40 "$LOG/$f.result" | cut -c1-220
	done
	echo "TAP: $LOG/deepep.tap; logs: $LOG"
} | tee "$LOG/summary.txt"
[ "$eg_fails" -eq 0 ] || exit 1
exit 0
