#!/bin/sh
# Builds the NCCL EP bundle that the GPU scripts carry (ncclep-sm90):
# NCCL and its contrib/nccl_ep from one NVIDIA/nccl source tree, for
# Hopper alone, packed as the folder nep_setup (nccl-ep-lib.sh) reads:
#
#   sh suites/gpu/ncclep-build.sh NCCL_SRC OUT.tar.xz [JOBS]
#
#   ncclep-sm90/include   nccl.h, nccl_device/, nccl_ep.h, nccl_ep/ (the
#                         HT JIT's sources)
#   ncclep-sm90/lib       libnccl.so*, libnccl_ep.so*
#   ncclep-sm90/bin       ep_bench, ep_test (Open MPI); ep_bench_nocupti
#                         (the same without CUPTI's kernel tracing, which
#                         runs inside ep_bench's timed loop where the
#                         toolkit has cupti.h: timing-device.sh sets both
#                         beside epgate)
#   ncclep-sm90/env.sh    LD_LIBRARY_PATH and the JIT's variables (bash)
#
# Needs nvcc (CUDA_HOME, default /usr/local/cuda) and Open MPI's headers
# (MPI_HOME, default Debian's). NCCL alone is about 45 CPU-minutes, most
# of it the collectives' device kernels: NCCL_ONLY_FUNCS passes NCCL's
# own ONLY_FUNCS filter (src/device/generate.py), e.g. the collectives
# epgate, torch and DeepEP call (send/recv, all-gather, broadcast,
# all-reduce but product, reduce-scatter sum), a quarter of the kernels:
#   NCCL_ONLY_FUNCS='SendRecv|AllGather * *|AllGatherV * *|Broadcast * *|AllReduce (Sum|MinMax|PreMulSum|SumPostDiv) * * *|ReduceScatter Sum * * *'
# a collective left out fails at its call (NCCL's error), never silently.
# Exit: 0 built, 1 a build step failed (its log named), 99 bad arguments.
set -u
if [ $# -lt 2 ] || [ ! -f "$1/makefiles/version.mk" ] ||
	[ ! -d "$1/contrib/nccl_ep" ]; then
	echo "usage: sh suites/gpu/ncclep-build.sh NCCL_SRC(with contrib/nccl_ep) OUT.tar.xz [JOBS]" >&2
	exit 99
fi
src=$(cd "$1" && pwd)
out=$2
jobs=${3:-$(nproc)}
: "${CUDA_HOME:=/usr/local/cuda}"
: "${MPI_HOME:=/usr/lib/x86_64-linux-gnu/openmpi}"
gencode="-gencode=arch=compute_90,code=sm_90"
# NCCL's host files take -I $(CUDA_HOME)/include before the tree's own
# headers: another NCCL's nccl.h or nccl_device/ there (a toolkit with
# NCCL's headers copied in) would be compiled in silently, or fail on a
# define the older headers lack. Refuse, naming the way out.
if [ -e "$CUDA_HOME/include/nccl.h" ] || [ -e "$CUDA_HOME/include/nccl_device" ]; then
	echo "ncclep-build: $CUDA_HOME/include holds NCCL headers of its own ($(sed -n 's/^#define NCCL_VERSION_CODE *//p' "$CUDA_HOME/include/nccl.h" 2>/dev/null)), which NCCL's build would take before its own: give a CUDA_HOME without them (a folder of links to the toolkit's files but nccl*)" >&2
	exit 99
fi
build=$src/build
log=$src/ncclep-build.log
: >"$log"

run() {
	echo "+ $*" >>"$log"
	"$@" >>"$log" 2>&1 || {
		echo "ncclep-build: '$*' failed (exit $?); log: $log" >&2
		exit 1
	}
}

run make -C "$src" -j"$jobs" src.build CUDA_HOME="$CUDA_HOME" \
	NVCC_GENCODE="$gencode" BUILDDIR="$build" ONLY_FUNCS="${NCCL_ONLY_FUNCS:-}"
run make -C "$src/contrib/nccl_ep" -j"$jobs" MPI=1 MPI_HOME="$MPI_HOME" \
	CUDA_HOME="$CUDA_HOME" NVCC_GENCODE="$gencode" BUILDDIR="$build" \
	lib ep_bench ep_test

stage=$(mktemp -d) || exit 1
trap 'rm -rf "$stage"' EXIT
root=$stage/ncclep-sm90
mkdir -p "$root/bin" || exit 1
run cp -a "$build/include" "$build/lib" "$root/"
rm -f "$root/lib/"*.a
run cp "$build/test/nccl_ep/ep_bench" "$build/test/nccl_ep/ep_test" "$root/bin/"
# ep_bench again with CUPTI off (a command-line CUPTI_AVAILABLE overrides
# the Makefile's probe), relinked from a fresh object
rm -f "$build/test/nccl_ep/ep_bench.o" "$build/test/nccl_ep/ep_bench"
run make -C "$src/contrib/nccl_ep" -j"$jobs" MPI=1 MPI_HOME="$MPI_HOME" \
	CUDA_HOME="$CUDA_HOME" NVCC_GENCODE="$gencode" BUILDDIR="$build" \
	CUPTI_AVAILABLE=0 ep_bench
run cp "$build/test/nccl_ep/ep_bench" "$root/bin/ep_bench_nocupti"
cat >"$root/env.sh" <<'EOF'
# . env.sh (bash): NCCL EP's lib first, its HT JIT's folders
r=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH=$r/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$r/bin:$PATH
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export NCCL_EP_JIT_SOURCE_DIR=$r/include/nccl_ep
export NCCL_EP_JIT_BUILD_INCLUDE_DIR=$r/include
export NCCL_EP_JIT_CUDA_INCLUDE_DIR=$CUDA_HOME/include
export NCCL_EP_JIT_NVCC=$CUDA_HOME/bin/nvcc
export NCCL_NVLS_ENABLE=0
EOF
# the source's commit: git's, or a COMMIT file packed with the tree
(cd "$src" && git rev-parse HEAD 2>/dev/null || cat COMMIT 2>/dev/null ||
	echo "source: $src") >"$root/SOURCE"
grep -E '^NCCL_(MAJOR|MINOR|PATCH)' "$src/makefiles/version.mk" >>"$root/SOURCE"
[ -z "${NCCL_ONLY_FUNCS:-}" ] || echo "ONLY_FUNCS=$NCCL_ONLY_FUNCS" >>"$root/SOURCE"
run tar -cJf "$out" -C "$stage" ncclep-sm90
echo "ncclep-build: $out ($(du -h "$out" | cut -f1))"
