/* The host engines' all-to-all-v buffers (xchg.h). */
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
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
