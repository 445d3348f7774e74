# Helpers of suites/gpu/deepep-device.sh (sourced; POSIX sh): the Python
# bridge built on the GPU machine against the torch venv, the environment
# DeepEP needs, the workloads of its cases, one `epgate check` of them,
# DeepEP's own tests run so that a crash says where, and the parsers of
# the numbers. Needs nccl-ep-lib.sh (nep_find_root, nep_env, nep_metric,
# nep_why) and EG_TMP.

# dpe_build_bridge SRCDIR OUT_SO PY: plugins/python/ compiled as
# Makefile.am compiles it, against PY's headers and libpython (configure
# does not run on the GPU machine; its epgate is carried).
dpe_build_bridge() {
	v=$("$3" -c 'import sysconfig as s; v = s.get_config_var; print(s.get_path("include"), v("LIBDIR"), "python" + v("VERSION") + (v("ABIFLAGS") or ""))') ||
		return 1
	set -- "$1" "$2" "$3" $v
	mkdir -p "$(dirname "$2")/adapters" || return 1
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -ffp-contract=off \
		-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-Werror -I"$1/include" -isystem "$4" -fPIC -shared -g -O2 \
		-DEG_PY_PROGRAM="\"$3\"" \
		-DEG_PY_SRC_ADAPTERS="\"$1/plugins/python/adapters\"" \
		-DEG_PY_INST_ADAPTERS='""' -o "$2" \
		"$1/plugins/python/bridge.c" "$1/plugins/python/interp.c" \
		"$1/plugins/python/array.c" "$1/plugins/python/take.c" \
		"$1/plugins/python/caps.c" "$1/plugins/python/recv.c" \
		-L"$5" -Wl,-rpath,"$5" -l"$6" || return 1
	cp "$1"/plugins/python/adapters/*.py "$(dirname "$2")/adapters/"
}

# dpe_env NCCL_ROOT DEEPEP_SRC PY: one libnccl for epgate, torch and DeepEP
# (the bundle's, first: DeepEP V2 needs its GIN; preloaded, so that a
# library whose RPATH names another NCCL still gets this one), DeepEP
# importable, its NCCL root at run time too (its JIT compiles against that
# NCCL's device headers), the JIT cache, the bridge's interpreter.
dpe_env() {
	nep_env "$1"
	if [ -f "$1/lib/libnccl.so.2" ] && [ "${DPE_PRELOAD:-1}" = 1 ]; then
		LD_PRELOAD=$1/lib/libnccl.so.2${LD_PRELOAD:+:$LD_PRELOAD}
		export LD_PRELOAD
	fi
	EP_NCCL_ROOT_DIR=$1
	# torch 2.11 loads its wheel's libnccl by path, beside the preloaded
	# bundle's: DeepEP's import refuses two runtimes unless told to. Its
	# kernels then use the bundle's (2.30.7); whether reusing torch's
	# communicator (made by the wheel's 2.28.9) works is step 3's test.
	EP_SUPPRESS_NCCL_CHECK=${EP_SUPPRESS_NCCL_CHECK:-1}
	export EP_SUPPRESS_NCCL_CHECK
	[ -n "${DPE_REUSE_COMM:-}" ] && EP_REUSE_NCCL_COMM=$DPE_REUSE_COMM &&
		export EP_REUSE_NCCL_COMM
	PYTHONPATH=$2${PYTHONPATH:+:$PYTHONPATH}
	EPGATE_PYTHON=$3
	: "${EP_JIT_CACHE_DIR:=${DPE_JIT:-/tmp/deepep-jit}}"
	PATH=$(dirname "$3"):$PATH
	export EP_NCCL_ROOT_DIR PYTHONPATH EPGATE_PYTHON EP_JIT_CACHE_DIR PATH
}

# dpe_workloads DIR: the cases, one file per mode. Sections x-* are
# beyond what DeepEP takes (its asserts): skipped with the reason, never
# run. One hidden size and top-k for most cases: each new shape costs
# DeepEP's JIT a compile.
dpe_workloads() {
	cat >"$1/elastic-w1.ini" <<'INI'
# DeepEP V2 ElasticBuffer, one rank: exact and random data, masks, zero,
# one and odd tokens, skewed routing, DeepEP's test shape, another shape
world = 1
seed = 21
hidden = 7168
experts = 256
topk = 8
[el-base]
tokens = 128
[el-random]
tokens = 128
data = random
[el-mask]
tokens = 33
mask = 0.3
[el-mask-all]
tokens = 8
mask = 1
[el-zero]
tokens = 0
[el-one]
tokens = 1
[el-zipf]
tokens = 256
routing = zipf:1.2
data = random
[el-hot]
tokens = 256
routing = hot-expert:3
[el-4096]
tokens = 4096
data = random
[el-h2048-k4]
hidden = 2048
experts = 16
topk = 4
tokens = 64
[x-el-k33]
topk = 33
tokens = 16
[x-el-fp32]
dtype = fp32
tokens = 16
[x-el-h100]
hidden = 100
tokens = 16
[x-el-fp8]
dtype = fp8
tokens = 16
INI
	cat >"$1/ll-w1.ini" <<'INI'
# DeepEP legacy low-latency, one rank
world = 1
seed = 22
hidden = 7168
experts = 256
topk = 8
[ll-base]
tokens = 128
[ll-random]
tokens = 128
data = random
[ll-mask]
tokens = 33
mask = 0.3
[ll-zero]
tokens = 0
[ll-h2048-k4]
hidden = 2048
experts = 16
topk = 4
tokens = 64
[x-ll-h1024]
hidden = 1024
tokens = 16
[x-ll-k12]
topk = 12
tokens = 16
INI
	cat >"$1/intranode-w1.ini" <<'INI'
# DeepEP legacy intranode at one rank: its kernels exist for 2, 4, 8 ranks
world = 1
seed = 23
hidden = 7168
experts = 256
topk = 8
[x-in-base]
tokens = 128
INI
}

# dpe_check LABEL SPEC INI: `epgate check` of the adapter over INI (each
# case in a forked child with EPGATE_TIMEOUT). Prints one TAP line: ok
# when every case other than x-* passes and every x-* case is skipped;
# then the verdict of every case that did not pass, with its reason.
dpe_check() {
	label=$1 spec=$2 ini=$3
	t0=$(date +%s)
	timeout "${DPE_CASE_TIMEOUT:-540}" "$EG_EPGATE" check --engine "$spec" --workload "$ini" \
		--tap="$EG_TMP/$label.tap" --junit="$EG_TMP/$label.xml" \
		>"$EG_TMP/$label.out" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	n=$(grep -c '^\[' "$ini")
	nx=$(grep -c '^\[x-' "$ini")
	pass=$(grep -v '# SKIP' "$EG_TMP/$label.tap" 2>/dev/null | grep -c '^ok')
	xskip=$(grep '^ok .* x-.*# SKIP' "$EG_TMP/$label.tap" 2>/dev/null | grep -c .)
	crash=$(grep -c '^not ok.*# CRASH\|status: crash\|killed by signal' "$EG_TMP/$label.tap" 2>/dev/null)
	fail=$(grep -c '^not ok' "$EG_TMP/$label.tap" 2>/dev/null)
	skip=$(grep '^ok .*# SKIP' "$EG_TMP/$label.tap" 2>/dev/null | grep -vc ' x-')
	# no TAP (epgate refused to start): every count 0, the exit says why
	pass=${pass:-0} xskip=${xskip:-0} crash=${crash:-0} fail=${fail:-0} skip=${skip:-0}
	if [ "$rc" -eq 0 ] && [ "$pass" -eq $((n - nx)) ] && [ "$xskip" -eq "$nx" ]; then
		eg_ok "$label: $pass of $((n - nx)) cases pass, $xskip beyond DeepEP's limits skipped, ${dt} s"
	elif [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$((skip + xskip))" -eq "$n" ]; then
		# nothing ran: a skip, never a pass (DeepEP not importable here)
		eg_ok "$label: all $n cases skipped, ${dt} s # SKIP $(grep -m1 -o 'SKIP.*' "$EG_TMP/$label.tap" | cut -c6-150)"
	else
		eg_not_ok "$label: exit $rc, $pass of $((n - nx)) pass, $fail fail ($crash crashed), $skip other skips, $xskip of $nx expected skips, ${dt} s"
	fi
	grep -v '^ok [0-9]* - [^#]*$' "$EG_TMP/$label.tap" 2>/dev/null |
		grep '^ok\|^not ok\|engine_message\|stage:\|reason' | cut -c1-240 |
		sed 's/^/#   /'
	[ "$rc" -gt 1 ] && [ "$rc" -ne 77 ] && tail -n 8 "$EG_TMP/$label.out" | sed 's/^/#   /'
	return 0
}

# dpe_own NAME TIMEOUT CMD...: one of DeepEP's own tests (or another
# Python command) with faulthandler on, its output in NAME.out; prints
# "exit N", "timed out" or "crashed: SIGNAL" (itself, or a rank that
# torch.multiprocessing spawned), and the Python frame it crashed in.
# Returns the exit status; 200 for a crash of a spawned rank.
dpe_own() {
	name=$1 to=$2
	shift 2
	PYTHONFAULTHANDLER=1 timeout -k 10 "$to" "$@" >"$EG_TMP/$name.out" 2>&1
	rc=$?
	sig=$(grep -m1 -o 'terminated with signal SIG[A-Z]*' "$EG_TMP/$name.out" | sed 's/.* //')
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "timed out after $to s"
	elif [ "$rc" -gt 128 ] || [ -n "$sig" ]; then
		[ -n "$sig" ] || sig=SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))
		echo "crashed: $sig$(dpe_crash_frame "$EG_TMP/$name.out")$(dpe_gdb "$name" "$to" "$@")"
		[ "$rc" -gt 128 ] || rc=200
	else
		echo "exit $rc"
	fi
	return "$rc"
}

# dpe_segv_bt_c: the C of an LD_PRELOAD handler for a crash's native
# frames where the GPU machine has no gdb (2026-12-07): on SIGSEGV,
# SIGBUS, SIGILL, SIGFPE or SIGABRT it prints the crashing thread's frames
# (glibc's backtrace), each with its module and offset (addr2line -e
# MODULE OFFSET), then lets the signal take its course; Python's
# faulthandler, installed after it, prints Python's frames first and then
# calls it. Build: cc -shared -fPIC -O1 -o segv-bt.so segv-bt.c -ldl.
# Kept here, not as a .c under suites/ (which holds tests only).
dpe_segv_bt_c() {
	cat <<'C'
/* dpe_segv_bt_c (deepep-lib.sh): see there */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void segv_bt(int sig)
{
	void *pc[64];
	char line[512];
	int n = backtrace(pc, 64);

	snprintf(line, sizeof(line), "segv-bt: signal %d, %d native frames\n",
		 sig, n);
	(void)!write(2, line, strlen(line));
	for (int i = 0; i < n; i++) {
		Dl_info di;
		int len;

		if (dladdr(pc[i], &di) && di.dli_fname)
			len = snprintf(
			    line, sizeof(line),
			    "segv-bt: #%d %s+0x%lx (%s+0x%lx)\n", i,
			    di.dli_fname,
			    (unsigned long)((uintptr_t)pc[i] -
					    (uintptr_t)di.dli_fbase),
			    di.dli_sname ? di.dli_sname : "?",
			    di.dli_saddr
				? (unsigned long)((uintptr_t)pc[i] -
						  (uintptr_t)di.dli_saddr)
				: 0ul);
		else
			len = snprintf(line, sizeof(line), "segv-bt: #%d %p\n",
				       i, pc[i]);
		if (len > 0)
			(void)!write(2, line, (size_t)len);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void segv_bt_init(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	struct sigaction sa;
	void *warm[1];

	backtrace(warm, 1); /* loads libgcc_s now, not inside the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = segv_bt;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
C
}

# dpe_gdb NAME TIMEOUT CMD...: the first crash of a run (a marker in
# EG_TMP) among the single-process commands of DPE_GDB_ON (DeepEP alone
# and the instance loop; DeepEP's own tests spawn their ranks, which gdb
# does not follow) is run again under gdb when the machine has it, the
# crashing thread's native frames and every thread's into NAME.gdb:
# faulthandler gives only Python's, and DeepEP's crashes are in its C++
# runtime. Without gdb, the command again with dpe_segv_bt_c's handler
# preloaded (glibc's backtrace: module+offset frames) into NAME.bt.
# Prints "; native frame: FUNC" (or frames), or why there is none.
dpe_gdb() {
	name=$1 to=$2
	shift 2
	case " ${DPE_GDB_ON-time-el-128 time-el-4096 instances-default instances-fresh instances-fresh-empty} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	[ ! -f "$EG_TMP/gdb.done" ] || return 0
	: >"$EG_TMP/gdb.done"
	if ! command -v gdb >/dev/null 2>&1; then
		# no gdb there (2026-12-07): glibc's backtrace from a preloaded
		# handler (dpe_segv_bt_c), each frame's module and offset
		bt=$EG_TMP/segv-bt.so
		[ -f "$bt" ] || { dpe_segv_bt_c >"$EG_TMP/segv-bt.c" &&
			cc -shared -fPIC -O1 -o "$bt" "$EG_TMP/segv-bt.c" -ldl \
				>"$EG_TMP/segv-bt.cc" 2>&1; } ||
			{ echo "; no gdb, and segv-bt.c did not build (segv-bt.cc)"; return 0; }
		LD_PRELOAD=$bt${LD_PRELOAD:+:$LD_PRELOAD} timeout -k 10 "$to" "$@" \
			>"$EG_TMP/$name.bt" 2>&1
		# each frame's function and line where the module has symbols
		# (addr2line of binutils, beside cc): dli_sname names only the
		# nearest exported symbol, and DeepEP's _C hides most
		if command -v addr2line >/dev/null 2>&1; then
			sed -n 's/^segv-bt: #\([0-9]*\) \([^ +]*\)+\(0x[0-9a-f]*\) .*/\1 \2 \3/p' \
				"$EG_TMP/$name.bt" | while read -r i mod off; do
				printf '#%s %s %s: %s\n' "$i" "${mod##*/}" "$off" \
					"$(addr2line -f -C -e "$mod" "$off" 2>&1 | tr '\n' ' ')"
			done >"$EG_TMP/$name.bt.sym"
		fi
		# the first frames outside the handler, libc and Python: named
		# where addr2line named them, else module+offset
		if [ -s "$EG_TMP/$name.bt.sym" ]; then
			f=$(grep -v ' segv-bt\.so \| libc\.so\| libpython\| python3\| libffi' "$EG_TMP/$name.bt.sym" |
				head -n 3 | cut -c1-120 | tr '\n' ' ')
		else
			f=$(grep 'segv-bt: #' "$EG_TMP/$name.bt" | grep -v 'segv-bt\.so\|libc\.so\|libpython\|/python3' |
				head -n 3 | sed 's/segv-bt: #[0-9]* //' | tr '\n' ' ' | cut -c1-200)
		fi
		echo "; native frames: ${f:-none ($name.bt)}"
		return 0
	fi
	timeout -k 10 "$to" gdb -q -batch -ex "set pagination off" \
		-ex "set startup-with-shell off" \
		-ex "handle SIGPIPE SIGUSR1 SIGUSR2 nostop noprint" -ex run \
		-ex "bt 25" -ex "thread apply all bt 8" --args "$@" \
		>"$EG_TMP/$name.gdb" 2>&1
	f=$(awk '/received signal SIG/ { on = 1; next } on && /^#[0-9]/ { sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, ""); print; exit }' "$EG_TMP/$name.gdb" | cut -c1-160)
	echo "; native frame: ${f:-none ($name.gdb)}"
}

# dpe_crash_frame FILE: ", in FUNC (file:line)" of the innermost frame
# faulthandler printed for the crashing thread, or nothing.
dpe_crash_frame() {
	awk '/^Fatal Python error|^Current thread|most recent call first/ { on = 1; next }
	     on && /File "/ { sub(/^ +/, ""); print ", at " $0; exit }' "$1"
}

# dpe_kineto FILE WHAT: DeepEP test_ep.py's kernel times (its kineto
# numbers) for WHAT dispatch or combine at its first case: the kernel
# and its epilogue, added ("X us" after the kind, then "..., Y us").
dpe_kineto() {
	awk -v what="$2" '
	function us(s,   r) { r = s; sub(/ us.*/, "", r); sub(/.* /, "", r); return r }
	$0 ~ ("[|] " what ": ") {
		n = split($0, part, "|"); a = us(part[2]); b = us(part[3])
		printf "%.2f\n", a + b; exit }' "$1"
}

# dpe_kern_sum FILE NAME...: the summed per-call means (us) of the kernels
# whose names contain each NAME, from a bench's evidence line `kernels`
# ("name n=N M.MMus; ...").
dpe_kern_sum() {
	f=$1
	shift
	grep -m1 -E '^(\[[0-9]+\] +)?kernels  ' "$f" | tr ';' '\n' | awk -v names="$*" '
	BEGIN { n = split(names, want, " ") }
	{ for (i = 1; i <= n; i++) if (index($0, want[i])) {
		us = $NF; sub(/us$/, "", us); s += us; hit = 1; break } }
	END { if (hit) printf "%.2f\n", s }'
}

# dpe_time FILE KEY: KEY=value from deepep-time.py's line.
dpe_time() {
	sed -n "s/.*[ ]$2=\([0-9.]*\).*/\1/p" "$1" | head -n 1
}

# dpe_row LABEL EG_US REF_US: one comparison line (ratio, within 5 %).
dpe_row() {
	awk -v l="$1" -v e="$2" -v r="$3" 'BEGIN {
		q = (e > 0 && r > 0) ? e / r : 0
		ok = q > 0 ? ((q >= 0.95 && q <= 1.05) ? "yes" : "NO") : "?"
		printf "%-34s %10.2f %10.2f %7.3f %5s\n", l, e, r, q, ok }'
}

# dpe_tap_merge OUT FILE...: the TAP files as one (renumbered, one plan).
dpe_tap_merge() {
	out=$1
	shift
	awk 'FNR == 1 { file = FILENAME; sub(/.*\//, "", file) }
	     /^TAP version|^1\.\./ { next }
	     /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n); sub(/ - /, " - " file ": ") }
	     { print }
	     END { print "1.." n }' "$@" >"$out.body" &&
		{ echo "TAP version 14"; cat "$out.body"; } >"$out"
	rm -f "$out.body"
}
