/* The NCCL engines (nccl_a2a.c, nccl_dense.c) in a build without CUDA or
 * NCCL (Makefile.am compiles this file instead): the same names, flags
 * and rows rules, and a create that says EG_ENOSYS. */
#include <stddef.h>

#include "epgate/error.h"
#include "epgate/nccl.h"

static int eg__nccl_none_create(const eg_workload_t *w,
				const eg_engine_ctx_t *ctx, void **state)
{
	(void)w, (void)ctx, (void)state;
	return EG_ENOSYS;
}

const eg_engine_ops_t eg_engine_nccl_a2a = {
    .size = sizeof(eg_engine_ops_t),
    .name = "nccl-a2a",
    .create = eg__nccl_none_create,
    .flags = EG_ENGINE_CANONICAL_ORDER | EG_ENGINE_MULTI_PROCESS,
    .dispatch_rows = EG_ROWS_PER_RANK,
};

const eg_engine_ops_t eg_engine_nccl_dense = {
    .size = sizeof(eg_engine_ops_t),
    .name = "nccl-dense",
    .create = eg__nccl_none_create,
    .flags = EG_ENGINE_MULTI_PROCESS,
    .dispatch_rows = EG_ROWS_ALL_RANKS,
};
