/* What the NCCL engines (nccl-a2a, nccl-dense) share. Internal; only with
 * CUDA and NCCL. */
#ifndef EG_ENGINES_NCCL_ENG_H
#define EG_ENGINES_NCCL_ENG_H

#include <stdlib.h>

#include "epgate/cuda_ep.h"
#include "epgate/error.h"
#include "epgate/nccl.h"
#include "epgate/sized.h"
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

/* What an NCCL engine's state holds first: its copy of the workload, the
 * transport's communicators, this rank and the world size. */
typedef struct eg__nccl_eng {
	eg_workload_t w;
	eg_nccl_t *n;
	uint32_t me, W;
	uint32_t flags; /* the ctx's EG_ENGINE_CTX_* */
} eg__nccl_eng_t;

/* The end of an engine's destroy, after its own resources. */
static inline void eg__nccl_eng_free(eg__nccl_eng_t *e)
{
	eg_workload_fini(&e->w);
	free(e);
}

/* A zeroed engine state of size bytes (an eg__nccl_eng_t first) for a
 * fitting ctx, w copied and the communicators' device made current; NULL
 * with *rc (eg__nccl_eng_fits's, EG_ENOMEM or EG_ECUDA). */
static inline void *eg__nccl_eng_new(size_t size, const eg_workload_t *w,
				     const eg_engine_ctx_t *ctx, int *rc)
{
	eg__nccl_eng_t *e;

	if ((*rc = eg__nccl_eng_fits(w, ctx)) < 0)
		return NULL;
	*rc = EG_ENOMEM;
	if (!(e = calloc(1, size)))
		return NULL;
	e->n = ctx->xport_state;
	e->me = ctx->first_rank;
	e->W = w->world;
	e->flags = EG_HAS(ctx, eg_engine_ctx_t, flags) ? ctx->flags : 0;
	if (eg_workload_copy(&e->w, w) >= 0)
		*rc = cudaSetDevice(eg_nccl_device(e->n)) == cudaSuccess
			  ? EG_OK
			  : EG_ECUDA;
	if (*rc == EG_OK)
		return e;
	eg__nccl_eng_free(e);
	return NULL;
}

/* An engine's create: a new state of size bytes (eg__nccl_eng_new) as
 * *state once init has made its CUDA resources; init nonzero (one
 * failed): destroy and EG_ECUDA. */
static inline int eg__nccl_eng_create(size_t size, const eg_workload_t *w,
				      const eg_engine_ctx_t *ctx,
				      int (*init)(void *),
				      void (*destroy)(void *), void **state)
{
	int rc;
	void *a = eg__nccl_eng_new(size, w, ctx, &rc);

	if (!a)
		return rc;
	if (init(a)) {
		destroy(a);
		return EG_ECUDA;
	}
	*state = a;
	return EG_OK;
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
