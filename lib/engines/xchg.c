/* The host engines' all-to-all-v buffers (xchg.h). */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "pack.h"
#include "xchg.h"

int eg_xchg_init(eg_xchg_t *x, const eg_engine_ctx_t *ctx, uint32_t W)
{
	memset(x, 0, sizeof(*x));
	if (ctx->size < sizeof(*ctx) || !ctx->world || !ctx->xport ||
	    ctx->n_ranks != 1 || ctx->world->size != W)
		return EG_ENOSYS; /* needs one rank per process */
	x->ctx = *ctx;
	x->rank = ctx->first_rank;
	x->W = W;
	x->send = calloc(W, sizeof(uint8_t *));
	x->recv = calloc(W, sizeof(uint8_t *));
	x->sbytes = calloc(W, sizeof(size_t));
	x->rbytes = calloc(W, sizeof(size_t));
	if (!x->send || !x->recv || !x->sbytes || !x->rbytes)
		return EG_ENOMEM;
	return EG_OK;
}

void eg_xchg_release(eg_xchg_t *x)
{
	if (!x->send || !x->recv)
		return;
	for (uint32_t p = 0; p < x->W; p++) {
		free(x->recv[p]);
		x->recv[p] = NULL;
		/* every send[p] may alias send[0] (an allgather) */
		if (p == 0 || x->send[p] != x->send[0])
			free(x->send[p]);
	}
	for (uint32_t p = 0; p < x->W; p++)
		x->send[p] = NULL;
}

void eg_xchg_fini(eg_xchg_t *x)
{
	eg_xchg_release(x);
	free(x->send);
	free(x->recv);
	free(x->sbytes);
	free(x->rbytes);
	memset(x, 0, sizeof(*x));
}

int eg_xchg_alloc(eg_xchg_t *x, uint32_t p, size_t sbytes, size_t rbytes)
{
	x->sbytes[p] = sbytes;
	x->rbytes[p] = rbytes;
	x->send[p] = calloc(1, sbytes + 1);
	x->recv[p] = malloc(rbytes + 1);
	return x->send[p] && x->recv[p] ? EG_OK : EG_ENOMEM;
}

int eg_xchg_run(eg_xchg_t *x)
{
	return x->ctx.xport->alltoallv(x->ctx.xport_state,
				       (const void *const *)x->send, x->sbytes,
				       (void *const *)x->recv, x->rbytes);
}

int eg_xchg_u32(eg_xchg_t *x, const uint32_t *send, int all, uint32_t *recv)
{
	int rc;

	eg_xchg_release(x);
	for (uint32_t p = 0; p < x->W; p++) {
		if (eg_xchg_alloc(x, p, sizeof(uint32_t), sizeof(uint32_t)) < 0)
			return EG_ENOMEM;
		memcpy(x->send[p], &send[all ? 0 : p], sizeof(uint32_t));
	}
	rc = eg_xchg_run(x);
	for (uint32_t s = 0; rc == EG_OK && s < x->W; s++)
		memcpy(&recv[s], x->recv[s], sizeof(uint32_t));
	eg_xchg_release(x);
	return rc;
}

void *eg_xeng_new(size_t size, const eg_workload_t *w,
		  const eg_engine_ctx_t *ctx, int *rc)
{
	eg_xeng_t *e = calloc(1, size);

	*rc = EG_ENOMEM;
	if (!e)
		return NULL;
	if ((*rc = eg_xchg_init(&e->x, ctx, w->world)) == EG_OK &&
	    eg_workload_copy(&e->w, w) < 0)
		*rc = EG_ENOMEM;
	if (*rc == EG_OK)
		return e;
	eg_xeng_fini(e);
	free(e);
	return NULL;
}

void eg_xeng_fini(eg_xeng_t *e)
{
	eg_xchg_fini(&e->x);
	eg_workload_fini(&e->w);
}

int eg_xchg_dispatched(eg_xchg_t *x, eg_recv_t *out, uint32_t row)
{
	out->rank_prefix[x->W] = row;
	out->num_rows = row;
	eg_xchg_release(x);
	return EG_OK;
}

float *eg_xchg_run_acc(eg_xchg_t *x, size_t n, int *rc)
{
	float *acc;

	if ((*rc = eg_xchg_run(x)) < 0)
		return NULL;
	acc = calloc(n ? n : 1, sizeof(float));
	*rc = acc ? EG_OK : EG_ENOMEM;
	return acc;
}

int eg_xchg_combined(eg_xchg_t *x, eg_dtype_t ct, float *acc, size_t n,
		     void *out)
{
	for (size_t i = 0; i < n; i++)
		eg_store_f32(ct, out, i, acc[i]);
	free(acc);
	eg_xchg_release(x);
	return EG_OK;
}
