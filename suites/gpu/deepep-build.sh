#!/bin/sh
# Builds DeepEP in place on the GPU machine (docs/python.md, "DeepEP on
# the GPU machine"), for the Python bridge's deepep adapter:
#
#   sh suites/gpu/deepep-build.sh DEEPEP_SRC NCCL_BUNDLE [JOBS]
#
# DEEPEP_SRC   a DeepEP source tree (deepseek-ai/DeepEP, e.g. dd758ca) with
#              its git submodule third-party/fmt filled in (the machine has
#              no network: carry both); a COMMIT file there names the commit
#              when the tree is not a git checkout
# NCCL_BUNDLE  the NCCL 2.30.7 bundle of suites/gpu/ncclep-build.sh
#              (ncclep-sm90.tar.xz or its folder): DeepEP V2 needs NCCL's
#              GIN (>= 2.30.4), which the torch venv's NCCL lacks
#
# The torch venv's interpreter ($PYTHON, default /opt/torch/.venv/bin/
# python3) runs `setup.py build_ext --inplace` with EP_NCCL_ROOT_DIR = the
# bundle, NVSHMEM from the venv's nvidia-nvshmem wheel, TORCH_CUDA_ARCH_LIST
# 9.0 and MAX_JOBS=JOBS (default: the cores); deep_ep/_C*.so lands in
# DEEPEP_SRC, so PYTHONPATH=DEEPEP_SRC imports it. The NCCL root is also
# written to deep_ep/envs.py, as `setup.py build` would (build_ext alone
# does not). Already built (deep_ep/_C*.so newer than csrc/): nothing to do.
# Log: $OUT/deepep-build.log (else DEEPEP_SRC/deepep-build.log).
# Exit: 0 built, 1 the build failed (its log's last lines said), 99 bad
# arguments.
set -u
if [ $# -lt 2 ] || [ ! -f "$1/setup.py" ] || [ ! -d "$1/deep_ep" ]; then
	echo "usage: sh suites/gpu/deepep-build.sh DEEPEP_SRC NCCL_BUNDLE(.tar.xz|dir) [JOBS]" >&2
	exit 99
fi
src=$(cd "$1" && pwd)
bundle=$2
jobs=${3:-$(nproc)}
: "${PYTHON:=/opt/torch/.venv/bin/python3}"
log=${OUT:-$src}/deepep-build.log
if [ ! -f "$src/third-party/fmt/include/fmt/format.h" ]; then
	echo "deepep-build: $src/third-party/fmt is empty: carry the fmt submodule (fmtlib/fmt) with the sources" >&2
	exit 99
fi
# the bundle's root: include/nccl.h and lib/libnccl.so*
root=
if [ -d "$bundle" ]; then
	for d in "$bundle" "$bundle"/*; do
		[ -f "$d/include/nccl.h" ] && { root=$(cd "$d" && pwd); break; }
	done
elif [ -f "$bundle" ]; then
	mkdir -p "$src/.nccl" && tar -xJf "$bundle" -C "$src/.nccl" || exit 99
	for d in "$src/.nccl"/*; do
		[ -f "$d/include/nccl.h" ] && { root=$d; break; }
	done
fi
[ -n "$root" ] || { echo "deepep-build: no include/nccl.h in $bundle" >&2; exit 99; }
echo "$root"

so=$(ls "$src"/deep_ep/_C*.so 2>/dev/null | head -n 1)
if [ -n "$so" ] && [ -z "$(find "$src/csrc" -newer "$so" -type f | head -n 1)" ]; then
	echo "deepep-build: $so is up to date" >>"$log"
	exit 0
fi
{
	echo "+ build_ext --inplace in $src (NCCL $root, $jobs jobs, $PYTHON)"
	date
} >"$log"
t0=$(date +%s)
(cd "$src" && EP_NCCL_ROOT_DIR=$root TORCH_CUDA_ARCH_LIST=9.0 \
	MAX_JOBS=$jobs timeout 1500 "$PYTHON" setup.py build_ext --inplace) \
	>>"$log" 2>&1
rc=$?
echo "exit $rc after $(($(date +%s) - t0)) s" >>"$log"
if [ "$rc" -ne 0 ] || ! ls "$src"/deep_ep/_C*.so >/dev/null 2>&1; then
	echo "deepep-build: build_ext failed (exit $rc); $log ends:" >&2
	tail -n 15 "$log" >&2
	exit 1
fi
printf "persistent_envs = dict()\npersistent_envs['EP_NCCL_ROOT_DIR'] = '%s'\n" \
	"$root" >"$src/deep_ep/envs.py"
exit 0
