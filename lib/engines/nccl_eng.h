/* What the NCCL engines (nccl-a2a, nccl-dense) share. Internal; only with
 * CUDA and NCCL. */
#ifndef EG_ENGINES_NCCL_ENG_H
#define EG_ENGINES_NCCL_ENG_H

#include "epgate/cuda_ep.h"
#include "epgate/error.h"
#include "epgate/nccl.h"
#include "lib/transport/nccl_int.h"

/* EG_OK if ctx is one rank per process of an NCCL world of w, of at
 * most EG_EP_WORLD_MAX ranks; else EG_ENOSYS or EG_ERANGE. */
static inline int eg__nccl_eng_fits(const eg_workload_t *w,
				    const eg_engine_ctx_t *ctx)
{
	if (ctx->size < sizeof(*ctx) || !ctx->world ||
	    ctx->xport != &eg_xport_nccl || !ctx->xport_state ||
	    ctx->n_ranks != 1 || ctx->world->size != w->world)
		return EG_ENOSYS;
	return w->world > EG_EP_WORLD_MAX ? EG_ERANGE : EG_OK;
}

/* The start of a fitting NCCL engine's state: w copied (EG_ENOMEM) and
 * the communicators' device made current (EG_ECUDA). */
static inline int eg__nccl_eng_init(const eg_workload_t *w,
				    const eg_engine_ctx_t *ctx,
				    eg_workload_t *copy, eg_nccl_t **n,
				    uint32_t *me, uint32_t *W)
{
	*n = ctx->xport_state;
	*me = ctx->first_rank;
	*W = w->world;
	if (eg_workload_copy(copy, w) < 0)
		return EG_ENOMEM;
	return cudaSetDevice(eg_nccl_device(*n)) == cudaSuccess ? EG_OK
								: EG_ECUDA;
}

/* EG_OK, or a step refused after an earlier abort. */
static inline int eg__nccl_eng_usable(eg_nccl_t *n, const char *step)
{
	if (!eg_nccl_broken(n))
		return EG_OK;
	return eg_nccl_fail(n, EG_EPEER, step,
			    "communicators were aborted earlier");
}

#endif
