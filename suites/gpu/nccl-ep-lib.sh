# Helpers of the NCCL EP scripts (sourced by suites/gpu/nccl-ep.sh,
# nccl-ep-device.sh, nccl-ep-device-x2.sh): the environment NCCL EP needs,
# the workloads of its cases, one `epgate check` over them, and the
# parsers of epgate's and ep_bench's numbers. POSIX sh.

# nep_env ROOT: NCCL EP's lib first (epgate's communicator and NCCL EP
# must use one libnccl), the variables of its HT JIT (what the bundle's
# env.sh sets, without bash), no NVLink multicast.
nep_env() {
	NCCLEP_ROOT=$1
	LD_LIBRARY_PATH=$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	PATH=$1/bin:$PATH
	: "${CUDA_HOME:=/usr/local/cuda}"
	NCCL_EP_JIT_SOURCE_DIR=$1/include/nccl_ep
	NCCL_EP_JIT_BUILD_INCLUDE_DIR=$1/include
	: "${NCCL_EP_JIT_CUDA_INCLUDE_DIR:=$CUDA_HOME/include}"
	: "${NCCL_EP_JIT_NVCC:=$CUDA_HOME/bin/nvcc}"
	: "${NCCL_EP_JIT_CACHE_DIR:=/tmp/nccl_ep/jit}"
	NCCL_NVLS_ENABLE=0
	# the GPU machine verifies shapes past the laptop's 1 GB default
	# (lib/core/workload_budget.c): a shape beyond NCCL EP's limits must
	# reach the plugin's own refusal, not epgate's budget
	: "${EPGATE_MEM_BUDGET:=17179869184}"
	export EPGATE_MEM_BUDGET
	export NCCLEP_ROOT LD_LIBRARY_PATH PATH CUDA_HOME NCCL_EP_JIT_SOURCE_DIR \
		NCCL_EP_JIT_BUILD_INCLUDE_DIR NCCL_EP_JIT_CUDA_INCLUDE_DIR \
		NCCL_EP_JIT_NVCC NCCL_EP_JIT_CACHE_DIR NCCL_NVLS_ENABLE
}

# nep_gpus: the number of GPUs nvidia-smi lists (0 without one).
nep_gpus() {
	n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
	echo "${n:-0}"
}

# nep_workloads DIR: the cases, one file per mode and world. Sections
# named x-* are beyond what NCCL EP takes: they must be skipped with the
# reason, never run. LL: hidden in {2048, 2560, 4096, 5120, 6144, 7168,
# 8192}, top-k <= 9, 2 experts or more; HT: hidden % 8 == 0, local
# experts x ranks per NVLink domain a multiple of 4, <= 8192 tokens.
nep_workloads() {
	cat >"$1/ll-w1.ini" <<'INI'
# NCCL EP low latency, one rank: exact and random data, masks, skewed
# routing, odd and zero tokens, the edges of its limits, ep_bench's shape
world = 1
seed = 11
[ll-base]
experts = 8
topk = 2
hidden = 2048
tokens = 32
[ll-random]
experts = 16
topk = 4
hidden = 4096
tokens = 40
data = random
[ll-mask]
experts = 8
topk = 3
hidden = 2560
tokens = 17
mask = 0.5
[ll-zero]
experts = 8
topk = 2
hidden = 2048
tokens = 0
[ll-one]
experts = 4
topk = 2
hidden = 5120
tokens = 1
[ll-k9]
experts = 32
topk = 9
hidden = 5120
tokens = 16
data = random
[ll-e2]
experts = 2
topk = 1
hidden = 6144
tokens = 8
[ll-zipf]
experts = 64
topk = 6
hidden = 8192
tokens = 64
routing = zipf:1.2
data = random
[ll-hot]
experts = 16
topk = 4
hidden = 2048
tokens = 64
routing = hot-expert:3
[ll-7168]
experts = 256
topk = 8
hidden = 7168
tokens = 128
[ll-7168-random]
experts = 256
topk = 8
hidden = 7168
tokens = 128
data = random
[x-ll-hidden-1024]
experts = 8
topk = 2
hidden = 1024
tokens = 16
[x-ll-k10]
experts = 16
topk = 10
hidden = 2048
tokens = 16
[x-ll-fp8]
experts = 8
topk = 2
hidden = 2048
tokens = 16
dtype = fp8
[x-ll-e1]
experts = 1
topk = 1
hidden = 2048
tokens = 16
INI
	cat >"$1/ht-w1.ini" <<'INI'
# NCCL EP high throughput, one rank (one hidden size: each new one costs
# NCCL EP's JIT a compile)
world = 1
seed = 12
hidden = 7168
[ht-base]
experts = 8
topk = 2
tokens = 64
[ht-random]
experts = 16
topk = 4
tokens = 100
data = random
[ht-mask]
experts = 8
topk = 3
tokens = 33
mask = 0.5
[ht-zero]
experts = 8
topk = 2
tokens = 0
[ht-hot]
experts = 16
topk = 4
tokens = 64
routing = hot-expert:5
[ht-4096]
experts = 256
topk = 8
tokens = 4096
data = random
[x-ht-e6]
experts = 6
topk = 2
tokens = 16
[x-ht-tokens-9000]
experts = 8
topk = 2
tokens = 9000
[x-ht-fp32]
experts = 8
topk = 2
tokens = 16
dtype = fp32
INI
	for m in ll ht; do
		if [ $m = ll ]; then h1=2048 h2=4096 h3=7168; else h1=7168 h2=7168 h3=7168; fi
		cat >"$1/$m-w2.ini" <<INI
# NCCL EP $m over two ranks: uniform and skewed routing, uneven and
# zero-token ranks, exact and random data, ep_bench's shape
world = 2
seed = 13
[w2-$m-base]
experts = 16
topk = 4
hidden = $h1
tokens = 32
[w2-$m-random]
experts = 32
topk = 8
hidden = $h3
tokens = 64
data = random
[w2-$m-uneven]
experts = 16
topk = 4
hidden = $h2
tokens = list:40,7
[w2-$m-zero-rank]
experts = 8
topk = 2
hidden = $h1
tokens = 24
zero_ranks = 1
[w2-$m-zipf]
experts = 64
topk = 8
hidden = $h3
tokens = 48
routing = zipf:1.2
data = random
[w2-$m-hot-rank]
experts = 16
topk = 4
hidden = $h1
tokens = 32
routing = hot-rank:1
[w2-$m-mask]
experts = 16
topk = 6
hidden = $h2
tokens = 20
mask = 0.4
[w2-$m-ep-bench]
experts = 256
topk = 8
hidden = 7168
tokens = $([ $m = ll ] && echo 128 || echo 4096)
data = random
INI
	done
}

# nep_check LABEL SPEC INI: `epgate check` of the plugin over INI. OK when
# every case passes or (x-* cases) is skipped with a reason; prints one
# TAP line. Needs EG_EPGATE, EG_TMP.
nep_check() {
	label=$1 spec=$2 ini=$3
	t0=$(date +%s)
	"$EG_EPGATE" check --engine "$spec" --workload "$ini" \
		--tap="$EG_TMP/$label.tap" --junit="$EG_TMP/$label.xml" \
		>"$EG_TMP/$label.out" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	n=$(grep -c '^\[' "$ini")
	nx=$(grep -c '^\[x-' "$ini")
	pass=$(grep -v '# SKIP' "$EG_TMP/$label.tap" | grep -c '^ok')
	xskip=$(grep '^ok .* x-.*# SKIP' "$EG_TMP/$label.tap" | grep -c .)
	oskip=$(grep '^ok .*# SKIP' "$EG_TMP/$label.tap" | grep -vc ' x-')
	if [ "$rc" -eq 0 ] && [ "$pass" -eq $((n - nx)) ] &&
		[ "$xskip" -eq "$nx" ]; then
		eg_ok "$label: $pass of $((n - nx)) cases pass, $xskip beyond NCCL EP's limits skipped, ${dt} s"
		grep '^ok .*# SKIP' "$EG_TMP/$label.tap" | cut -c1-200 | sed 's/^/#   /'
	else
		eg_not_ok "$label: exit $rc, $pass of $((n - nx)) pass, $xskip of $nx expected skips, $oskip other skips, ${dt} s"
		grep -v '^ok' "$EG_TMP/$label.tap" | grep -v '^1\.\.\|^TAP' |
			head -n 60 | cut -c1-300 | sed 's/^/# /'
		grep '^ok .*# SKIP' "$EG_TMP/$label.tap" | grep -v ' x-' |
			head -n 10 | cut -c1-300 | sed 's/^/# /'
		tail -n 15 "$EG_TMP/$label.out" | sed 's/^/# /'
	fi
}

# nep_metric FILE NAME: the median column of metric NAME in the table
# `epgate bench engine` printed (launched: "[0]" first), or empty.
nep_metric() {
	awk -v m="$2" '{ if ($1 ~ /^\[[0-9]+\]$/) { $1 = ""; $0 = $0 }
		if ($1 == m) { print $2; exit } }' "$1"
}

# nep_epb FILE MODE WHAT: from ep_bench's summary, for MODE ll or ht,
# WHAT one of d_us d_gbps c_us c_gbps (host-observed/total time, mean).
nep_epb() {
	awk -v mode="$2" -v what="$3" '
	function num(s, key,   i, r) {
		i = index(s, key); if (!i) return ""
		r = substr(s, i + length(key)); sub(/[^0-9.eE+-].*/, "", r)
		return r
	}
	mode == "ll" && /^Dispatch \(BF16\):/ { d_us = num($0, "avg="); st = "d"; next }
	mode == "ll" && /^Combine \(BF16\):/ { c_us = num($0, "avg="); st = "c"; next }
	mode == "ll" && /throughput: avg=/ && st != "" {
		if (st == "d") d_gbps = num($0, "avg="); else c_gbps = num($0, "avg=")
		st = ""; next }
	mode == "ht" && /^Dispatch: +total=/ { d_us = num($0, "total="); st = "d"; next }
	mode == "ht" && /^Combine: +total=/ { c_us = num($0, "total="); st = "c"; next }
	mode == "ht" && st == "d" && /recv: total_bw=/ { d_gbps = num($0, "total_bw="); st = ""; next }
	mode == "ht" && st == "c" && /send: total_bw=/ { c_gbps = num($0, "total_bw="); st = ""; next }
	/^--- BW based on kernel time/ { st = ""}
	END {
		if (what == "d_us") print d_us; else if (what == "d_gbps") print d_gbps
		else if (what == "c_us") print c_us; else if (what == "c_gbps") print c_gbps
	}' "$1"
}

# nep_epb_kern FILE MODE WHAT: ep_bench's CUPTI build's kernel time (us),
# WHAT d or c: LL's "Kernel-only performance" avg, HT's "BW based on
# kernel time" kernel= (the mean per kernel of the names it matches).
nep_epb_kern() {
	awk -v mode="$2" -v what="$3" '
	function num(s, key,   i, r) {
		i = index(s, key); if (!i) return ""
		r = substr(s, i + length(key)); sub(/[^0-9.eE+-].*/, "", r)
		return r
	}
	/^--- Kernel-only performance/ || /^--- BW based on kernel time/ { k = 1; next }
	/^--- / { k = 0 }
	k && /^Dispatch:/ { d = num($0, mode == "ll" ? "avg=" : "kernel=") }
	k && /^Combine:/ { c = num($0, mode == "ll" ? "avg=" : "kernel=") }
	END { print (what == "d" ? d : c) }' "$1"
}

# nep_row LABEL BYTES EG_US EPB_US EPB_GBPS: one line of the comparison
# table: epgate's GB/s by ep_bench's byte definition (BYTES / EG_US),
# ep_bench's, their ratio and whether it is within 5 %.
nep_row() {
	awk -v l="$1" -v b="$2" -v eu="$3" -v pu="$4" -v pg="$5" 'BEGIN {
		g = (b > 0 && eu > 0) ? b / eu / 1e3 : 0
		r = (g > 0 && pg > 0) ? g / pg : 0
		ok = (r > 0) ? ((r >= 0.95 && r <= 1.05) ? "yes" : "NO") : "?"
		printf "%-26s %12.0f %10.2f %10.2f %10.2f %10.2f %7.3f %5s\n",
			l, b, eu, (g ? g : 0), pu, pg, r, ok
	}'
}

# nep_stub_driver: without a GPU driver, CUDA's stub libcuda stands in
# (in EG_TMP, first in LD_LIBRARY_PATH) so that libnccl_ep.so, which
# needs libcuda.so.1, loads; every CUDA call then fails ("no CUDA
# device"). Nothing when a driver is there.
nep_stub_driver() {
	ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && return 0
	stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
	[ -f "$stub" ] || return 0
	mkdir -p "$EG_TMP/stub" && ln -sf "$stub" "$EG_TMP/stub/libcuda.so.1"
	LD_LIBRARY_PATH=$EG_TMP/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
}

# nep_declares SO GPUS: the plugin loads, refuses a bad option naming it,
# and its declared limits skip cases with the reason before NCCL EP is
# called (without a GPU, a case it takes is a "no CUDA device" skip).
nep_declares() {
	so=$1
	"$EG_EPGATE" check --engine "plugin:$so,mode=xx" --world=1 \
		--tap="$EG_TMP/d.tap" --junit="$EG_TMP/d.xml" >"$EG_TMP/d.out" 2>&1
	rc=$?
	if [ "$rc" -eq 99 ] && grep -q 'option mode=xx: want mode=ll|ht' "$EG_TMP/d.out"; then
		eg_ok "a bad option refused: $(grep -m1 -o 'option mode=xx.*' "$EG_TMP/d.out" | cut -c1-80)"
	else
		eg_not_ok "a bad option: exit $rc"
		tail -n 5 "$EG_TMP/d.out" | sed 's/^/# /'
	fi
	# mode | workload options | what the skip must say
	while IFS='|' read -r mode wl want; do
		"$EG_EPGATE" check --engine "plugin:$so,mode=$mode" --world=1 \
			$wl --tap="$EG_TMP/d.tap" --junit="$EG_TMP/d.xml" \
			>"$EG_TMP/d.out" 2>&1
		rc=$?
		if [ "$rc" -eq 77 ] && grep -q "# SKIP .*$want" "$EG_TMP/d.tap"; then
			eg_ok "$mode $wl: skipped: $(grep -m1 -o 'SKIP.*' "$EG_TMP/d.tap" | cut -c6-110)"
		else
			eg_not_ok "$mode $wl: exit $rc, want a skip saying '$want'"
			sed 's/^/# /' "$EG_TMP/d.tap" 2>/dev/null
			tail -n 5 "$EG_TMP/d.out" | sed 's/^/# /'
		fi
	done <<CASES
ht|--dtype=fp32|does not take dtype fp32
ll|--hidden=16384|hidden 16384 above its limit 8192
ll|--topk=12 --experts=16|top-k 12 above its limit 9
ht|--tokens=9000|tokens per rank 9000 above its limit 8192
ht|--hidden=100|hidden 100 is not a multiple of 8
CASES
	[ "$2" -ge 1 ] && return 0
	"$EG_EPGATE" check --engine "plugin:$so" --world=1 --hidden=2048 \
		--tap="$EG_TMP/d.tap" --junit="$EG_TMP/d.xml" >"$EG_TMP/d.out" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ] && grep -q '# SKIP .*no CUDA device' "$EG_TMP/d.tap"; then
		eg_ok "a case it takes, without a GPU: skipped (no CUDA device)"
	else
		eg_not_ok "a case without a GPU: exit $rc"
		sed 's/^/# /' "$EG_TMP/d.tap" 2>/dev/null
		tail -n 5 "$EG_TMP/d.out" | sed 's/^/# /'
	fi
}

# ---- the device scripts (nccl-ep-device.sh, nccl-ep-device-x2.sh) ----

# nep_find_root DIR: the folder under DIR (or DIR) with include/nccl_ep.h.
nep_find_root() {
	for d in "$1" "$1"/*; do
		[ -f "$d/include/nccl_ep.h" ] && { echo "$d"; return 0; }
	done
	return 1
}

# nep_build_plugin NEP_ROOT SRCDIR OUT_SO: the adapter plugin compiled
# as Makefile.am compiles it (PLUGIN_CFLAGS, -fgnu89-inline, NCCL EP's
# headers before CUDA's), for a machine where configure cannot run (the
# GPU machine, against an NCCL EP built there). CUDA_HOME: the toolkit.
nep_build_plugin() {
	cu=${CUDA_HOME:-/usr/local/cuda}
	mkdir -p "$(dirname "$3")" || return 1
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -ffp-contract=off \
		-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-Werror -I"$2/include" -fPIC -shared -g -O2 -fgnu89-inline \
		-isystem "$1/include" -isystem "$cu/include" -o "$3" \
		"$2/plugins/nccl-ep/nccl_ep.c" "$2/plugins/nccl-ep/comm.c" \
		"$2/plugins/nccl-ep/ll.c" "$2/plugins/nccl-ep/ht.c" \
		"$2/plugins/nccl-ep/shape.c" -L"$1/lib" -lnccl_ep -lnccl \
		-L"$cu/lib64" -Wl,-rpath,"$cu/lib64" -lcudart
}

# nep_setup BUNDLE EGDIR WORK: unpacks what needs it into WORK, finds
# NCCL EP (NEP_ROOT), epgate (EG_EPGATE) and the plugin (NEP_SO), sets
# the environment. Says what is missing and returns 1.
nep_setup() {
	bundle=$1 egdir=$2 work=$3
	mkdir -p "$work" || return 1
	if [ -d "$bundle" ]; then
		NEP_ROOT=$(nep_find_root "$bundle")
	elif [ -f "$bundle" ]; then
		mkdir -p "$work/ncclep" && tar -xJf "$bundle" -C "$work/ncclep" ||
			{ echo "cannot unpack $bundle"; return 1; }
		NEP_ROOT=$(nep_find_root "$work/ncclep")
	fi
	[ -n "${NEP_ROOT:-}" ] || { echo "no include/nccl_ep.h in $bundle"; return 1; }
	case $egdir in
	*.tar.xz | *.txz) mkdir -p "$work/eg" && tar -xJf "$egdir" -C "$work/eg" && egdir=$work/eg ;;
	*.tar.gz | *.tgz) mkdir -p "$work/eg" && tar -xzf "$egdir" -C "$work/eg" && egdir=$work/eg ;;
	esac
	[ -d "$egdir" ] || { echo "no folder $egdir"; return 1; }
	egdir=$(cd "$egdir" && pwd)
	NEP_ROOT=$(cd "$NEP_ROOT" && pwd)
	EG_EPGATE=
	for f in "$egdir/epgate" "$egdir/bin/epgate" "$egdir"/*/bin/epgate; do
		[ -x "$f" ] && { EG_EPGATE=$f; break; }
	done
	NEP_SO=
	for f in "$egdir/plugins/nccl-ep/libeg-nccl-ep.so" \
		"$egdir/lib/libeg-nccl-ep.so" "$egdir/bin/libeg-nccl-ep.so" \
		"$egdir"/*/lib/libeg-nccl-ep.so; do
		[ -f "$f" ] && { NEP_SO=$(cd "$(dirname "$f")" && pwd)/libeg-nccl-ep.so; break; }
	done
	[ -n "$EG_EPGATE" ] || { echo "no epgate in $egdir (nor bin/)"; return 1; }
	[ -n "$NEP_SO" ] || { echo "no libeg-nccl-ep.so in $egdir (configure --with-nccl-ep=DIR builds plugins/nccl-ep/libeg-nccl-ep.so)"; return 1; }
	nep_env "$NEP_ROOT"
	# the plugin's folder (profiles name it without a path) and the
	# shared libraries carried with epgate, after NCCL EP's lib/
	LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$NEP_SO")
	for d in "$egdir/lib" "$(dirname "$EG_EPGATE")/../lib"; do
		[ -d "$d" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
	done
	: "${EPGATE_DATADIR:=$PWD}"
	export LD_LIBRARY_PATH EG_EPGATE EPGATE_DATADIR
	return 0
}

# nep_mpirun: Open MPI's mpirun (PATH, then Ubuntu's folder).
nep_mpirun() {
	command -v mpirun 2>/dev/null && return 0
	for f in /usr/lib/x86_64-linux-gnu/openmpi/bin/mpirun /usr/bin/mpirun.openmpi; do
		[ -x "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# nep_ep_bench OUTFILE NP ARGS...: NCCL EP's ep_bench under mpirun (the
# CUPTI build, else the one without CUPTI). Returns its exit status.
nep_ep_bench() {
	of=$1 np=$2
	shift 2
	mpi=$(nep_mpirun) || { echo "no mpirun" >"$of"; return 127; }
	for b in ep_bench ep_bench_nocupti; do
		timeout 300 "$mpi" --allow-run-as-root -np "$np" \
			-x PATH -x LD_LIBRARY_PATH -x CUDA_HOME -x NCCL_NVLS_ENABLE \
			-x NCCL_EP_JIT_SOURCE_DIR -x NCCL_EP_JIT_BUILD_INCLUDE_DIR \
			-x NCCL_EP_JIT_CUDA_INCLUDE_DIR -x NCCL_EP_JIT_NVCC \
			-x NCCL_EP_JIT_CACHE_DIR \
			"$NEP_ROOT/bin/$b" "$@" >"$of" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && return 0
		grep -q 'libcupti' "$of" || return "$rc"
	done
	return "$rc"
}

# nep_bench OUTFILE N RPN ENGINE TOKENS [bench options...]: one point of
# `epgate bench engine` at ep_bench's shape (H 7168, top-8 of 256
# experts, ep_bench's warm-up and iterations); a plugin's calls also
# timed as ep_bench times them (EPGATE_PLUGIN_PHASES=1: events around
# each call; epgate's own engines keep their phases off).
nep_bench() {
	of=$1 n=$2 rpn=$3 eng=$4 tok=$5
	shift 5
	# NEP_BOUNDARY: the gated boundary (docs/metrics.md), else the default
	EPGATE_BOUNDARY=${NEP_BOUNDARY:-} EPGATE_PLUGIN_PHASES=1 \
	"$EG_EPGATE" launch -n "$n" --ranks-per-node "$rpn" --timeout 900 -- \
		"$EG_EPGATE" bench engine "$eng" --transport nccl \
		--tokens "$tok" --hidden 7168 --experts 256 --topk 8 \
		-w 10 -n 50 --timeout 900 "$@" >"$of" 2>&1
}

# nep_compare MODE EGOUT EPBOUT: the comparison rows of one mode: epgate's
# dispatch and combine GB/s by ep_bench's byte definition (sel_bytes for
# LL, recv_bytes for HT) over the plugin's calls timed as ep_bench does
# (CUDA events around the call, mean), and over epgate's own step times
# (median, the wait for the stream included), beside ep_bench's.
nep_compare() {
	mode=$1 eg=$2 epb=$3
	if [ "$mode" = ll ]; then key=sel_bytes; else key=recv_bytes; fi
	b=$(nep_metric "$eg" "$key")
	for ph in dispatch combine; do
		c=$(echo $ph | cut -c1)
		pu=$(nep_epb "$epb" "$mode" "${c}_us")
		pg=$(nep_epb "$epb" "$mode" "${c}_gbps")
		eu=$(nep_metric "$eg" "phase_plugin_${ph}_us")
		nep_row "$mode $ph (events)" "${b:-0}" "${eu:-0}" "${pu:-0}" "${pg:-0}"
		# the step boundary (docs/metrics.md, "Boundaries"): wall_*
		# since the gated times are the call's; older builds: *_us
		eu=$(nep_metric "$eg" "wall_${ph}_us")
		[ -n "$eu" ] || eu=$(nep_metric "$eg" "${ph}_us")
		nep_row "$mode $ph (epgate step)" "${b:-0}" "${eu:-0}" "${pu:-0}" "${pg:-0}"
	done
}

nep_table_head() {
	printf "%-26s %12s %10s %10s %10s %10s %7s %5s\n" "mode phase (timing)" \
		"bytes/rank" "epgate_us" "epgate_GBs" "epb_us" "epb_GBs" \
		"ratio" "<=5%"
}

# nep_why FILE: the last line of a failed command's output that says
# something (epgate's or the launcher's message), at most 110 characters.
nep_why() {
	grep -v '^[[:space:]]*$' "$1" 2>/dev/null | grep -iv '^\[launch\] rank .* exited' |
		tail -n 1 | cut -c1-110
}

# nep_epb_recv MODE WORLD TOKENS: ep_bench's max_recv_tokens_per_rank at
# 256 experts, top-8 (its estimate tokens x top-k x local experts /
# experts x world, twice for LL's expert-major layout), for the plugin's
# recv= option: NCCL EP configured as ep_bench configures it.
nep_epb_recv() {
	est=$(($3 * 8 * (256 / $2) / 256 * $2))
	[ "$1" = ll ] && est=$((est * 2))
	echo "$est"
}
