/* The all-to-all-v exchange the host multi-process engines (a2a, dense)
 * share: one rank per process, one send and one receive buffer per peer,
 * sized before each call of the transport's alltoallv. Internal. */
#ifndef EG_ENGINES_XCHG_H
#define EG_ENGINES_XCHG_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/engine.h"

typedef struct eg_xchg {
	eg_engine_ctx_t ctx;
	uint32_t rank, W;
	uint8_t **send, **recv; /* W each; every send[p] may be send[0] */
	size_t *sbytes, *rbytes;
} eg_xchg_t;

/* EG_OK, EG_ENOSYS unless ctx is one rank per process of a world of W,
 * or EG_ENOMEM. */
int eg_xchg_init(eg_xchg_t *x, const eg_engine_ctx_t *ctx, uint32_t W);
/* Frees every peer's buffers, keeping the arrays. */
void eg_xchg_release(eg_xchg_t *x);
void eg_xchg_fini(eg_xchg_t *x);
/* Peer p's buffers: sbytes zeroed bytes to send, rbytes to receive. */
int eg_xchg_alloc(eg_xchg_t *x, uint32_t p, size_t sbytes, size_t rbytes);
/* One alltoallv of the buffers as they are. */
int eg_xchg_run(eg_xchg_t *x);
/* What a host engine holds first in its state: its copy of the workload
 * and the exchange. */
typedef struct eg_xeng {
	eg_workload_t w;
	eg_xchg_t x;
} eg_xeng_t;

/* A zeroed engine state of size bytes (an eg_xeng_t first) with w copied
 * and the exchange set up, or NULL with *rc (as eg_xchg_init, or
 * EG_ENOMEM). */
void *eg_xeng_new(size_t size, const eg_workload_t *w,
		  const eg_engine_ctx_t *ctx, int *rc);
/* Frees what eg_xeng_new set up (not the state itself). */
void eg_xeng_fini(eg_xeng_t *e);
/* The end of a dispatch: row rows, the buffers released. EG_OK. */
int eg_xchg_dispatched(eg_xchg_t *x, eg_recv_t *out, uint32_t row);
/* A combine's exchange: runs it, then a zeroed accumulator of n floats,
 * or NULL with *rc (the transport's, or EG_ENOMEM). */
float *eg_xchg_run_acc(eg_xchg_t *x, size_t n, int *rc);
/* The end of a combine: the n sums of acc into out in dtype ct, acc
 * freed, the buffers released. EG_OK. */
int eg_xchg_combined(eg_xchg_t *x, eg_dtype_t ct, float *acc, size_t n,
		     void *out);

/* One uint32 each way with every peer: send[p] to p (every peer the
 * same send[0] when all is set), recv[p] from p. Releases the buffers. */
int eg_xchg_u32(eg_xchg_t *x, const uint32_t *send, int all, uint32_t *recv);

#endif
