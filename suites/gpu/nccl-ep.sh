#!/bin/sh
# NCCL EP through its adapter plugin (plugins/nccl-ep/) on one GPU, in
# process at world 1 (each case in a forked child): the low-latency and
# the high-throughput mode over their cases (suites/gpu/nccl-ep-lib.sh),
# every case bit-exact in exact mode and within the bound on random data,
# and every case beyond NCCL EP's limits skipped with the reason before
# NCCL EP sees it. Without a GPU only the plugin's loading, its refusal
# of a bad option and its declared limits are checked (CUDA's stub
# libcuda standing in for the driver); without the plugin (configure
# --with-nccl-ep=DIR) a TAP plan of 0. The NCCL EP build configure was
# given (EG_NCCL_EP_DIR) goes first in LD_LIBRARY_PATH: one libnccl.
. "${EG_SRCDIR:-.}/suites/lib.sh"
. "$EG_SRCDIR/suites/gpu/nccl-ep-lib.sh"
: "${EG_BUILDDIR:=.}"

so=${EG_NCCL_EP_PLUGIN:-$EG_BUILDDIR/plugins/nccl-ep/libeg-nccl-ep.so}
if [ ! -f "$so" ]; then
	echo "1..0 # SKIP built without NCCL EP (configure --with-nccl-ep=DIR builds $so)"
	exit 0
fi
[ -n "${EG_NCCL_EP_DIR:-}" ] && nep_env "$EG_NCCL_EP_DIR"
ngpu=$(nep_gpus)
[ "$ngpu" -ge 1 ] || nep_stub_driver
nep_declares "$so" "$ngpu"
if [ "$ngpu" -lt 1 ]; then
	eg_ok "LL and HT cases # SKIP no GPU (nvidia-smi lists none)"
	eg_done
fi
nep_workloads "$EG_TMP"
nep_check nccl-ep.ll "plugin:$so,mode=ll" "$EG_TMP/ll-w1.ini"
# HT compiles its kernels at the first call of each: a long first case
EPGATE_TIMEOUT=${EPGATE_TIMEOUT:-900}
export EPGATE_TIMEOUT
nep_check nccl-ep.ht "plugin:$so,mode=ht" "$EG_TMP/ht-w1.ini"
eg_done
