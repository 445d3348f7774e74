/* The verified step's buffers, in whichever memory space they live
 * (lib/step/step_int.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/reference.h"
#include "epgate/step.h"
#include "epgate/sized.h"
#include "lib/step/where.h"
#include "lib/step/step_int.h"

/* ---- buffers ---------------------------------------------------------- */

void eg__step_free(eg_step_t *st)
{
	for (uint32_t i = 0; i < st->n; i++) {
		if (st->in) {
			st->sp->free(st->ss, st->in[i].x);
			st->sp->free(st->ss, st->in[i].scales);
			st->sp->free(st->ss, st->in[i].topk_idx);
			st->sp->free(st->ss, st->in[i].topk_w);
		}
		if (st->recv)
			st->sp->recv_free(st->ss, &st->recv[i]);
		if (st->y)
			st->sp->free(st->ss, st->y[i]);
		if (st->out)
			st->sp->free(st->ss, st->out[i]);
		if (st->again)
			st->sp->free(st->ss, st->again[i]);
	}
	EG_FREE(st->in, st->recv, st->y, st->out, st->cexp, st->r64, st->m64,
		st->again, st->h_first, st->h_again);
}

/* Rank first+i's input buffers, shaped for its tokens. */
static int eg__alloc_input(eg_step_t *st, uint32_t i)
{
	const eg_workload_t *w = &st->w;
	eg_rank_input_t *in = &st->in[i];
	size_t T, K = w->topk, nb;
	int rc;

	in->rank = st->first + i;
	in->tokens = eg_workload_tokens(w, in->rank);
	in->dtype = w->dtype;
	in->hidden = w->hidden;
	in->topk = w->topk;
	T = in->tokens;
	nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	if ((rc = st->sp->alloc(st->ss, &in->x,
				T * w->hidden * eg_dtype_size(w->dtype))) < 0 ||
	    (nb && (rc = st->sp->alloc(st->ss, (void **)&in->scales,
				       T * nb * sizeof(float))) < 0) ||
	    (rc = st->sp->alloc(st->ss, (void **)&in->topk_idx,
				T * K * sizeof(int32_t))) < 0 ||
	    (rc = st->sp->alloc(st->ss, (void **)&in->topk_w,
				T * K * sizeof(float))) < 0)
		return rc;
	return EG_OK;
}

/* A fixed-order engine's second combine, and the host copies that
 * compare it (the space's copy op reads device memory). */
static int eg__alloc_again(eg_step_t *st, size_t cmax)
{
	const eg_space_ops_t *sp = st->sp;
	int rc;

	if (!(st->ops->flags & EG_ENGINE_FIXED_ORDER))
		return EG_OK;
	if (!EG_HAS(sp, eg_space_ops_t, copy) || !sp->copy)
		return EG_ENOSYS;
	st->again = calloc(st->n, sizeof(*st->again));
	st->h_first = malloc(cmax + 1);
	st->h_again = malloc(cmax + 1);
	if (!st->again || !st->h_first || !st->h_again)
		return EG_ENOMEM;
	for (uint32_t i = 0; i < st->n; i++)
		if ((rc = sp->alloc(st->ss, &st->again[i],
				    eg_combine_bytes(&st->w, st->first + i))) <
		    0)
			return rc;
	return EG_OK;
}

int eg__step_alloc(eg_step_t *st)
{
	const eg_workload_t *w = &st->w;
	uint32_t cap = eg_recv_max_rows(w), n = st->n;
	size_t csz = eg_dtype_size(eg_combine_dtype(w->dtype));
	size_t cmax = 0, tmax = 0;
	int rc;

	st->in = calloc(n, sizeof(*st->in));
	st->recv = calloc(n, sizeof(*st->recv));
	st->y = calloc(n, sizeof(*st->y));
	st->out = calloc(n, sizeof(*st->out));
	if (!st->in || !st->recv || !st->y || !st->out)
		return EG_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = st->first + i;
		size_t T = eg_workload_tokens(w, r);

		if ((rc = eg__alloc_input(st, i)) < 0 ||
		    (rc = st->sp->recv_alloc(st->ss, &st->recv[i], w, r, cap)) <
			0 ||
		    (rc = st->sp->alloc(st->ss, &st->y[i],
					(size_t)cap * w->hidden * csz)) < 0 ||
		    (rc = st->sp->alloc(st->ss, &st->out[i],
					eg_combine_bytes(w, r))) < 0)
			return rc;
		if (eg_combine_bytes(w, r) > cmax)
			cmax = eg_combine_bytes(w, r);
		if (T * w->hidden > tmax)
			tmax = T * w->hidden;
	}
	st->cexp = malloc(cmax + 1);
	st->r64 = malloc((tmax + 1) * sizeof(double));
	st->m64 = malloc((tmax + 1) * sizeof(double));
	if (!st->cexp || !st->r64 || !st->m64)
		return EG_ENOMEM;
	return eg__alloc_again(st, cmax);
}
